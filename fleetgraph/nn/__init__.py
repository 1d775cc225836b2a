"""`paddle.nn` for static graphs: `functional` and `initializer`."""

from . import functional, initializer

__all__ = ["functional", "initializer"]
