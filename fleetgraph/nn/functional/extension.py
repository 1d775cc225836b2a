"""`paddle.nn.functional.extension` (Paddle 2.0's python/paddle/nn/functional/extension.py):
diag_embed, with the Fluid layers Paddle 2.0 re-exports beside it, gather_tree and temporal_shift."""

from __future__ import annotations

from ...layers.beam_search import gather_tree
from ...layers.creation import diag_embed
from ...layers.rearrange import temporal_shift

__all__ = ["diag_embed", "gather_tree", "temporal_shift"]
