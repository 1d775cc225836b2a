"""Export rules of the tensor ops: reshape, transpose, concat, split, slice and the constant fills."""

from __future__ import annotations

import numpy as np
from onnx import numpy_helper

from ..ops._common import normalize_axis
from ..ops.tensor import VALUE_ATTRS
from .emitter import Emitter, UnsupportedOp, exports


@exports("reshape2")
def _reshape2(e: Emitter, op) -> None:
    # Paddle's 0 copies X's dim, as ONNX's does with allowzero=0
    e.node("Reshape", [e.x(op, "X"), e.const([int(d) for d in op.attr("shape")])], e.out(op, "Out"))


@exports("transpose2")
def _transpose2(e: Emitter, op) -> None:
    e.node("Transpose", [e.x(op, "X")], e.out(op, "Out"), perm=[int(a) for a in op.attr("axis")])


@exports("concat")
def _concat(e: Emitter, op) -> None:
    e.node("Concat", e.xs(op, "X"), e.out(op, "Out"), axis=op.attr("axis"))


@exports("split")
def _split(e: Emitter, op) -> None:
    x, outs = e.x(op, "X"), op.output("Out")
    axis = normalize_axis(op.attr("axis"), len(e.shape(x)))
    sections, dim = list(op.attr("sections")), e.shape(x)[axis]
    if not sections:
        e.node("Split", [x], outs, axis=axis, num_outputs=op.attr("num"))
        return
    if -1 in sections:
        if dim < 0:
            raise UnsupportedOp(f"sections {sections} with a -1 over dim {axis} of X '{x}', known only at run time")
        sections[sections.index(-1)] = dim - sum(s for s in sections if s != -1)
    e.node("Split", [x, e.const(sections)], outs, axis=axis)


@exports("slice")
def _slice(e: Emitter, op) -> None:
    x = e.x(op, "Input")
    starts, ends, axes = (e.const([int(v) for v in op.attr(k)]) for k in ("starts", "ends", "axes"))
    decrease = op.attr("decrease_axis")
    if not decrease:
        e.node("Slice", [x, starts, ends, axes], e.out(op, "Out"))
        return
    sliced = e.node("Slice", [x, starts, ends, axes])
    if len(decrease) == len(e.shape(x)):  # nothing left: Paddle keeps [1]
        e.node("Reshape", [sliced, e.const([1])], e.out(op, "Out"))
    else:
        e.node("Squeeze", [sliced, e.const([int(a) for a in decrease])], e.out(op, "Out"))


def _constant(e: Emitter, op, array: np.ndarray) -> None:
    e.node("Constant", [], e.out(op, "Out"), value=numpy_helper.from_array(array))


@exports("fill_constant")
def _fill_constant(e: Emitter, op) -> None:
    value = float(op.attr("str_value")) if op.attr("str_value") else op.attr("value")
    _constant(e, op, np.full(op.attr("shape"), value, dtype=op.attr("dtype")))


@exports("assign_value")
def _assign_value(e: Emitter, op) -> None:
    dtype = op.attr("dtype")
    _constant(e, op, np.asarray(op.attr(VALUE_ATTRS[dtype]), dtype=dtype).reshape(op.attr("shape")))


@exports("fill_zeros_like")
def _fill_zeros_like(e: Emitter, op) -> None:
    x = e.x(op, "X")
    e.node("Expand", [e.scalar(0, x), e.node("Shape", [x])], e.out(op, "Out"))


@exports("fill_constant_batch_size_like")
def _fill_constant_batch_size_like(e: Emitter, op) -> None:
    """The attr shape with dim output_dim_idx taken from Input's dim input_dim_idx at run time."""
    shape, i, o = list(op.attr("shape")), op.attr("input_dim_idx"), op.attr("output_dim_idx")
    batch = e.node("Shape", [e.x(op, "Input")], start=i, end=i + 1)
    parts = ([e.const(shape[:o])] if o else []) + [batch] + ([e.const(shape[o + 1 :])] if o + 1 < len(shape) else [])
    dims = e.node("Concat", parts, axis=0) if len(parts) > 1 else parts[0]
    value = float(op.attr("str_value")) if op.attr("str_value") else op.attr("value")
    fill = e.const(np.asarray(value, dtype=op.attr("dtype")))
    e.node("Expand", [fill, dims], e.out(op, "Out"))
