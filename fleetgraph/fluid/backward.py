"""`fluid.backward`."""

from ..transpiler.backward import append_backward, gradients

__all__ = ["append_backward", "gradients"]
