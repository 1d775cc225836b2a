"""`paddle.nn` for static graphs: `functional`, `initializer` and the gradient clips."""

from ..clip import ClipGradByGlobalNorm, ClipGradByNorm, ClipGradByValue
from . import functional, initializer

__all__ = ["ClipGradByGlobalNorm", "ClipGradByNorm", "ClipGradByValue", "functional", "initializer"]
