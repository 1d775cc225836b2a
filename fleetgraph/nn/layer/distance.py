"""`paddle.nn` layer classes: distance (Paddle 2.0's python/paddle/nn/layer/distance.py)."""

from __future__ import annotations

__all__: list[str] = []
