"""Compile-time passes over programs: autodiff, optimizer ops and, later, the distribute rewrites."""

from .backward import append_backward, gradients

__all__ = ["append_backward", "gradients"]
