"""`paddle.nn` layer classes: loss (Paddle 2.0's python/paddle/nn/layer/loss.py)."""

from __future__ import annotations

__all__: list[str] = []
