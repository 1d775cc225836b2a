"""`paddle.nn.utils` (Paddle 2.0's python/paddle/nn/utils): weight_norm and remove_weight_norm."""

from __future__ import annotations

from . import weight_norm_hook
from .weight_norm_hook import remove_weight_norm, weight_norm

__all__ = ["remove_weight_norm", "weight_norm", "weight_norm_hook"]
