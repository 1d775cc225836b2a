"""`paddle.nn.functional.conv` (Paddle 2.0's python/paddle/nn/functional/conv.py)."""

from __future__ import annotations

__all__: list[str] = []
