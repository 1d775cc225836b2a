"""`paddle.incubate`: the optimizers Paddle 2.x keeps there (LookAhead, RecomputeOptimizer)."""

from . import optimizer

__all__ = ["optimizer"]
