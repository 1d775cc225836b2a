"""Sequence ops over LoD tensors: sequence_pool, sequence_concat, sequence_reshape, sequence_expand."""

from __future__ import annotations
