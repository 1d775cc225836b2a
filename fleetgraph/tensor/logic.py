"""`paddle` tensor functions: logic (Paddle 2.0's python/paddle/tensor/logic.py)."""

from __future__ import annotations

__all__: list[str] = []
# Tensor methods this module adds (name -> function), installed on eager Tensors and static Variables
TENSOR_METHODS: dict = {}
