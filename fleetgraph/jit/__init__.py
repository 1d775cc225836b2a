"""`paddle.jit`: a dynamic Layer or function traced into a static Program (`to_static`, its control
flow converted by dy2static), saved and loaded."""

from .api import InputSpec, StaticFunction, TranslatedLayer, declarative, load, save, to_static, trace
from .program_translator import ProgramTranslator

__all__ = [
    "InputSpec",
    "ProgramTranslator",
    "StaticFunction",
    "TranslatedLayer",
    "declarative",
    "load",
    "save",
    "to_static",
    "trace",
]
