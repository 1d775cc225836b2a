"""`paddle.nn.functional.input` (Paddle 2.0's python/paddle/nn/functional/input.py): one_hot and
embedding."""

from __future__ import annotations

from ...dygraph.dispatch import bind
from ...layers.manipulation import one_hot_v2

__all__ = ["one_hot", "embedding"]


def one_hot(x, num_classes, name=None):
    """Each id of x as a float32 row of num_classes (a new last axis); an id outside [0, num_classes)
    is an error."""
    return one_hot_v2(x, num_classes, allow_out_of_range=False)


def embedding(x, weight, padding_idx=None, sparse=False, name=None):
    """Rows of `weight` picked by the ids in `x` (lookup_table_v2); the padding_idx row reads as zeros
    and takes no gradient; sparse=True makes weight's gradient SelectedRows."""
    rows = weight.shape[0]
    if padding_idx is not None and not -rows <= padding_idx < rows:
        raise ValueError(f"embedding: padding_idx expected in [{-rows}, {rows}), got {padding_idx}")
    pad = -1 if padding_idx is None else (padding_idx if padding_idx >= 0 else rows + padding_idx)
    return bind(
        "lookup_table_v2",
        {"W": [weight], "Ids": [x]},
        {"is_sparse": bool(sparse), "padding_idx": pad},
        dtype=weight.dtype,
        name=name,
    )
