"""`paddle.nn.functional.pooling` (Paddle 2.0's python/paddle/nn/functional/pooling.py)."""

from __future__ import annotations

__all__: list[str] = []
