"""`paddle.nn.functional.vision` (Paddle 2.0's python/paddle/nn/functional/vision.py)."""

from __future__ import annotations

__all__: list[str] = []
