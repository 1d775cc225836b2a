"""Sequence layer functions that edit which rows each sequence holds: erasing tokens, slicing windows,
scattering updates."""

from __future__ import annotations

from ..ir.program import Variable
from .helper import LayerHelper


def sequence_erase(input: Variable, tokens: list[int], name: str | None = None) -> Variable:
    """The ids of `input` not in `tokens`, each sequence shortened to what it kept (Paddle's
    contrib sequence_erase, also fluid.layers.sequence_erase in 1.x programs); no gradient."""
    helper = LayerHelper("sequence_erase", name, inputs=input)
    out = helper.create_variable_for_type_inference(input.dtype, stop_gradient=True)
    helper.append_op("sequence_erase", {"X": [input]}, {"Out": [out]}, {"tokens": [int(t) for t in tokens]})
    return out


def sequence_slice(input: Variable, offset: Variable, length: Variable, name: str | None = None) -> Variable:
    """For each sequence of `input`, `length` rows starting `offset` rows into it (one value of each
    per sequence); the gradient flows back to the rows taken."""
    helper = LayerHelper("sequence_slice", name, inputs=input)
    out = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op("sequence_slice", {"X": [input], "Offset": [offset], "Length": [length]}, {"Out": [out]})
    return out


def sequence_scatter(input: Variable, index: Variable, updates: Variable, name: str | None = None) -> Variable:
    """`input` with each sequence i of `updates` added into row i at the columns `index` gives
    (repeated columns add up); gradients flow to `input` and `updates`."""
    helper = LayerHelper("sequence_scatter", name, inputs=input)
    out = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op("sequence_scatter", {"X": [input], "Ids": [index], "Updates": [updates]}, {"Out": [out]})
    return out
