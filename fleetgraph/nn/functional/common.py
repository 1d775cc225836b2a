"""`paddle.nn.functional.common` (Paddle 2.0's python/paddle/nn/functional/common.py)."""

from __future__ import annotations

__all__: list[str] = []
