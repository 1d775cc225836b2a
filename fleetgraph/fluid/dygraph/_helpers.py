"""What the 1.x layer classes share: the activation after the op, their filters' channels and how
they run an op with saved statistics."""

from __future__ import annotations

from ...dygraph.dispatch import bind
from ...layers.helper import LayerHelper


def activated(x, act: str | None):
    """`act` (an activation op's type, e.g. 'relu') applied to x; x itself when None."""
    return x if act is None else bind(act, {"X": [x]})


def conv_filter_channels(layer: str, num_channels: int, groups) -> int:
    """Input channels per filter: num_channels / groups (groups None is 1), which must divide."""
    groups = groups or 1
    if num_channels % groups:
        raise ValueError(f"{layer}: num_channels {num_channels} must be divisible by groups {groups}")
    return num_channels // groups


def run_op(op_type: str, inputs: dict, attrs: dict, dtype: str, outs: tuple[str, ...], stats: tuple[str, ...] = ()):
    """The op into fresh outputs of its inputs' kind (Tensors, or the block's Variables): one per slot
    of `outs`, then one stop-gradient one per slot of `stats` (saved statistics); all of them, in
    that order."""
    helper = LayerHelper(op_type, inputs=[v for vs in inputs.values() for v in vs])
    made = {slot: [helper.create_variable_for_type_inference(dtype)] for slot in outs}
    made.update({slot: [helper.create_variable_for_type_inference(dtype, stop_gradient=True)] for slot in stats})
    helper.append_op(op_type, inputs, made, attrs)
    return [made[slot][0] for slot in (*outs, *stats)]
