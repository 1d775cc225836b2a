"""`paddle.nn` layer classes: transformer (Paddle 2.0's python/paddle/nn/layer/transformer.py)."""

from __future__ import annotations

__all__: list[str] = []
