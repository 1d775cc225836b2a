"""`paddle.nn.functional.loss` (Paddle 2.0's python/paddle/nn/functional/loss.py)."""

from __future__ import annotations

__all__: list[str] = []
