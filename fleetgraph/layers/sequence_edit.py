"""Sequence layer functions that edit which rows each sequence holds: erasing tokens."""

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
