"""`paddle.nn.functional.extension` (Paddle 2.0's python/paddle/nn/functional/extension.py)."""

from __future__ import annotations

__all__: list[str] = []
