"""`paddle.jit`: a dynamic Layer or function traced into a static Program (`to_static`, its control
flow converted by dy2static; `TracedLayer`), saved and loaded."""

from .api import InputSpec, StaticFunction, TranslatedLayer, declarative, load, save, to_static, trace
from .dy2static import not_to_static
from .logging_utils import set_code_level, set_verbosity
from .program_translator import ProgramTranslator
from .traced_layer import TracedLayer

__all__ = [
    "InputSpec",
    "ProgramTranslator",
    "StaticFunction",
    "TracedLayer",
    "TranslatedLayer",
    "declarative",
    "load",
    "not_to_static",
    "save",
    "set_code_level",
    "set_verbosity",
    "to_static",
    "trace",
]

from .. import absent  # noqa: E402

__getattr__ = absent.getattr_for(__name__)
