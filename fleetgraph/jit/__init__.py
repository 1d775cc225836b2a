"""`paddle.jit`: a dynamic Layer traced into a static Program (`to_static`), saved and loaded."""

from .api import InputSpec, StaticFunction, TranslatedLayer, load, save, to_static, trace

__all__ = ["InputSpec", "StaticFunction", "TranslatedLayer", "load", "save", "to_static", "trace"]
