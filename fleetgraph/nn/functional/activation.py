"""`paddle.nn.functional.activation` (Paddle 2.0's python/paddle/nn/functional/activation.py)."""

from __future__ import annotations

__all__: list[str] = []
