"""Manipulation layer functions in Paddle 1.8's fluid.layers spelling (tile in Paddle 2.0's):
expand_as, tile, full_like, unstack, gather, scatter, one_hot, argmax / argmin and argsort. Each
docstring names the Paddle 2.0 function that builds the same op, where one does."""

from __future__ import annotations

from ..dygraph.dispatch import bind
from ..ir.errors import FleetgraphError
from .helper import LayerHelper
from .tensor_shape import fill_like


def expand_as(x, target_tensor, name=None):
    """x tiled to target_tensor's shape, each of its dims a multiple of x's (the expand_as op;
    Paddle 2.0's paddle.expand_as broadcasts with expand_as_v2 instead)."""
    return bind("expand_as", {"X": [x], "target_tensor": [target_tensor]}, name=name)


def tile(x, repeat_times, name=None):
    """Paddle 2.0's paddle.tile: x repeated repeat_times[i] times along axis i, the shorter of x's
    rank and repeat_times padded with leading ones."""
    return bind("tile", {"X": [x]}, {"repeat_times": [int(t) for t in repeat_times]}, name=name)


def full_like(input, fill_value, out=None, dtype=None, device=None, stop_gradient=True, name=None):
    """A tensor of input's shape filled with fill_value, of dtype (else input's): fill_any_like,
    as Paddle 2.0's paddle.full_like. `device` is accepted for Paddle's signature; the executor's
    place decides where it runs."""
    if out is not None:
        return fill_like(input, fill_value, out, dtype)
    result = fill_like(input, fill_value, dtype=dtype, name=name)
    result.stop_gradient = stop_gradient
    return result


def unstack(x, axis=0, num=None):
    """The slices of x along axis, a list (paddle.unstack is the same op)."""
    count = x.shape[axis] if num is None else int(num)
    if count < 0:
        raise FleetgraphError(f"unstack: x's axis {axis} has no static size; pass num")
    helper = LayerHelper("unstack", inputs=x)
    outs = [helper.create_variable_for_type_inference(x.dtype) for _ in range(count)]
    helper.append_op("unstack", {"X": [x]}, {"Y": outs}, {"axis": int(axis), "num": count})
    return outs


def gather(input, index, overwrite=True, axis=0):
    """input's entries at `index` (1-D) along axis 0; `overwrite` keeps one gradient of a repeated
    index, as Paddle's, else they add. Paddle 2.0's paddle.gather(x, index, axis) is this op with
    `axis` (an attr here, where 2.0 also takes a tensor)."""
    return bind("gather", {"X": [input], "Index": [index]}, {"overwrite": bool(overwrite), "axis": int(axis)})


def scatter(input, index, updates, name=None, overwrite=True):
    """input with its rows at `index` replaced by `updates` (summed where an index repeats, without
    overwrite); paddle.scatter is the same op."""
    return bind(
        "scatter", {"X": [input], "Ids": [index], "Updates": [updates]}, {"overwrite": bool(overwrite)}, name=name
    )


def one_hot(input, depth, allow_out_of_range=False):
    """fluid.layers.one_hot: ids of shape [..., 1] as rows of `depth` floats (the one_hot op)."""
    return _one_hot("one_hot", input, depth, allow_out_of_range)


def one_hot_v2(input, depth, allow_out_of_range=False):
    """fluid.one_hot: ids of any shape, a new last axis of `depth` (the one_hot_v2 op, which
    Paddle 2.0's paddle.nn.functional.one_hot(x, num_classes) builds too)."""
    return _one_hot("one_hot_v2", input, depth, allow_out_of_range)


def _one_hot(op_type, input, depth, allow_out_of_range):
    attrs = {"depth": int(depth), "dtype": "float32", "allow_out_of_range": bool(allow_out_of_range)}
    return bind(op_type, {"X": [input]}, attrs, dtype="float32")


def argmax(x, axis=0):
    """The int64 index of x's largest entry along axis (arg_max, which paddle.argmax builds too,
    with its keepdim, dtype and, for axis=None, flatten attrs)."""
    return bind("arg_max", {"X": [x]}, {"axis": int(axis)}, dtype="int64")


def argmin(x, axis=0):
    """The int64 index of x's smallest entry along axis (arg_min, as paddle.argmin)."""
    return bind("arg_min", {"X": [x]}, {"axis": int(axis)}, dtype="int64")


def argsort(input, axis=-1, descending=False, name=None):
    """(input sorted along axis, the int64 indices it came from); equal values keep their order.
    paddle.argsort is the same op, returning the indices only."""
    helper = LayerHelper("argsort", name, inputs=input)
    out = helper.create_variable_for_type_inference(input.dtype)
    ids = helper.create_variable_for_type_inference("int64", stop_gradient=True)
    attrs = {"axis": int(axis), "descending": bool(descending)}
    helper.append_op("argsort", {"X": [input]}, {"Out": [out], "Indices": [ids]}, attrs)
    return out, ids
