"""Sequence layer functions over LoD variables: pooling, concatenation, reshaping and expansion."""

from __future__ import annotations

from ..ir.errors import FleetgraphError
from ..ir.program import Variable
from .helper import LayerHelper


def sequence_pool(input: Variable, pool_type: str, is_test: bool = False, pad_value: float = 0.0) -> Variable:
    """Pools each sequence of `input`'s last LoD level into one row: 'average', 'sum', 'sqrt',
    'first', 'last' or 'max' (any case); an empty sequence gives `pad_value`."""
    if not isinstance(pool_type, str):
        raise FleetgraphError(f"sequence_pool: pool_type expected a string such as 'sum', got {pool_type!r}")
    helper = LayerHelper("sequence_pool", inputs=input)
    out = helper.create_variable_for_type_inference(input.dtype)
    max_index = helper.create_variable_for_type_inference("int32", stop_gradient=True)
    helper.append_op(
        "sequence_pool",
        {"X": [input]},
        {"Out": [out], "MaxIndex": [max_index]},
        {"pooltype": pool_type.upper(), "is_test": is_test, "pad_value": float(pad_value)},
    )
    return out


def sequence_first_step(input: Variable) -> Variable:
    """The first row of each sequence."""
    return sequence_pool(input, "first")


def sequence_last_step(input: Variable) -> Variable:
    """The last row of each sequence."""
    return sequence_pool(input, "last")


def sequence_concat(input: list[Variable], name: str | None = None) -> Variable:
    """Sequence i of the result is sequence i of input[0], then of input[1], ..."""
    if not isinstance(input, (list, tuple)) or not input:
        raise FleetgraphError(f"sequence_concat: input expected a list of variables, got {input!r}")
    helper = LayerHelper("sequence_concat", name, inputs=input)
    out = helper.create_variable_for_type_inference(input[0].dtype)
    helper.append_op("sequence_concat", {"X": list(input)}, {"Out": [out]})
    return out


def sequence_reshape(input: Variable, new_dim: int) -> Variable:
    """Each sequence's values re-cut into rows of width `new_dim`."""
    helper = LayerHelper("sequence_reshape", inputs=input)
    out = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op("sequence_reshape", {"X": [input]}, {"Out": [out]}, {"new_dim": int(new_dim)})
    return out


def sequence_expand(x: Variable, y: Variable, ref_level: int = -1, name: str | None = None) -> Variable:
    """Sequence i of `x` (row i, when `x` has no LoD) repeated as many times as sequence i of `y`'s
    LoD level `ref_level` (-1: the last) is long."""
    helper = LayerHelper("sequence_expand", name, inputs=[x, y])
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op("sequence_expand", {"X": [x], "Y": [y]}, {"Out": [out]}, {"ref_level": int(ref_level)})
    return out
