"""`paddle.incubate.optimizer`."""

from ...optimizer.lookahead import LookAhead
from ...optimizer.recompute import RecomputeOptimizer

__all__ = ["LookAhead", "RecomputeOptimizer"]
