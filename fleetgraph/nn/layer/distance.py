"""`paddle.nn` layer classes: distance (Paddle 2.0's python/paddle/nn/layer/distance.py)."""

from __future__ import annotations

import math

from ...dygraph.dispatch import bind
from ...layers import math as _math
from ...layers import tensor as _tensor
from .layers import Layer

__all__ = ["PairwiseDistance"]


class PairwiseDistance(Layer):
    """The p-norm of x - y along axis 1, as Paddle 2.0's p_norm computes it: max |d| for p = inf,
    min for -inf, the count of non-zeros for p = 0 (epsilon only steadies p_norm's gradient)."""

    def __init__(self, p=2.0, epsilon=1e-6, keepdim=False, name=None) -> None:
        super().__init__()
        if not isinstance(p, (float, int)) or isinstance(p, bool):
            raise TypeError(f"PairwiseDistance: p expected a float or int, got {type(p).__name__}")
        if not isinstance(epsilon, float):
            raise TypeError(f"PairwiseDistance: epsilon expected a float, got {type(epsilon).__name__}")
        if not isinstance(keepdim, bool):
            raise TypeError(f"PairwiseDistance: keepdim expected a bool, got {type(keepdim).__name__}")
        self.p, self.epsilon, self.keepdim, self.name = float(p), epsilon, keepdim, name

    def forward(self, x, y):
        size = bind("abs", {"X": [x - y]})
        if self.p == math.inf:
            return _math.reduce_max(size, dim=1, keep_dim=self.keepdim, name=self.name)
        if self.p == -math.inf:
            return _math.reduce_min(size, dim=1, keep_dim=self.keepdim, name=self.name)
        if self.p == 0:
            nonzero = _tensor.cast(size > 0.0, x.dtype)
            return _math.reduce_sum(nonzero, dim=1, keep_dim=self.keepdim, name=self.name)
        powered = bind("pow", {"X": [size]}, {"factor": self.p})
        total = _math.reduce_sum(powered, dim=1, keep_dim=self.keepdim)
        return bind("pow", {"X": [total]}, {"factor": 1.0 / self.p}, name=self.name)
