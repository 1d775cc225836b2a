"""`paddle.nn.functional.input` (Paddle 2.0's python/paddle/nn/functional/input.py)."""

from __future__ import annotations

__all__: list[str] = []
