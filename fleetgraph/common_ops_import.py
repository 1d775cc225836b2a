"""`paddle.common_ops_import`: scripts reach `core.EOFException` through it."""

from .fluid import core

__all__ = ["core"]
