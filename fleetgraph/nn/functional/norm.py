"""`paddle.nn.functional.norm` (Paddle 2.0's python/paddle/nn/functional/norm.py)."""

from __future__ import annotations

__all__: list[str] = []
