"""ONNX in and out: `export` writes an inference program as an ONNX model, `load` reads one as a Program."""

from __future__ import annotations

from .export import export, set_layer_tracer
from .load import load, startup_program

__all__ = ["export", "load", "set_layer_tracer", "startup_program"]
