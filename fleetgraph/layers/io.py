"""Data layers: the feedable inputs of a program, in the 2.x (`static.data`) and Fluid spellings."""

from __future__ import annotations

from ..ir.framework import default_main_program
from ..ir.program import Variable, VarType


def data(name: str, shape, dtype="float32", lod_level: int = 0) -> Variable:
    """`paddle.static.data`: the shape is given in full; None or -1 marks a dimension known at run time."""
    shape = [-1 if d is None else int(d) for d in shape]
    block = default_main_program().global_block()
    return block.create_var(
        name, shape, dtype, lod_level=lod_level, is_data=True, stop_gradient=True, need_check_feed=True
    )


def fluid_data(
    name: str,
    shape,
    append_batch_size: bool = True,
    dtype="float32",
    lod_level: int = 0,
    type=VarType.DENSE_TENSOR,
    stop_gradient: bool = True,
) -> Variable:
    """`fluid.layers.data`: a batch dimension is prepended unless the shape already has a -1 or None.
    As Paddle 1.x's, a feed is not checked against the shape (its dtype is): an op that cannot take
    the fed shape says so when it runs."""
    shape = [-1 if d is None else int(d) for d in shape]
    if append_batch_size and -1 not in shape:
        shape = [-1] + shape
    block = default_main_program().global_block()
    return block.create_var(
        name, shape, dtype, lod_level=lod_level, is_data=True, stop_gradient=stop_gradient, type=type
    )
