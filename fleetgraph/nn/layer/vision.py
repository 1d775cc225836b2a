"""`paddle.nn` layer classes: vision (Paddle 2.0's python/paddle/nn/layer/vision.py)."""

from __future__ import annotations

__all__: list[str] = []
