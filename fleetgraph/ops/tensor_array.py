"""Tensor arrays (LOD_TENSOR_ARRAY variables, a Python list of arrays at run time): write_to_array
and read_from_array, each the other's gradient as in Paddle, lod_array_length, tensor_array_to_tensor
(the elements concatenated or stacked), and the helpers the
rank-table ops (ops/rank_table.py) share for moving sequences between a batch and an array.

Index work (which rows go where) is done on the host from the LoD offsets, which live there; the
rows themselves move with one `xp.take` per output, so the kernels run on every array module."""

from __future__ import annotations

import numpy as np

from ..ir import InferContext, make_grad_op, register_op
from ..ir.errors import FleetgraphError
from ..ir.program import VarType
from ..ir.registry import COMMON_ATTRS, GRAD_SUFFIX
from ._xp import full, reshape, split
from .lod_tensor import strip
from .sequence import _offsets, _tensor


def _index(xp, i, where: str) -> int:
    """The array subscript held by the one-element tensor `i`."""
    flat = reshape(xp, strip(i), (-1,))
    if flat.shape[0] != 1:
        raise FleetgraphError(f"{where}: I has {flat.shape[0]} elements; expected one subscript")
    value = int(flat[0])
    if value < 0:
        raise FleetgraphError(f"{where}: I is {value}; expected a subscript >= 0")
    return value


def _array(value, where: str) -> list:
    if not isinstance(value, list):
        raise FleetgraphError(f"{where}: expected a tensor array (a list), got {type(value).__name__}")
    return value


def _with_levels(data, levels):
    """Rows with LoD levels as a LoDTensor, rows without as the plain array."""
    return _tensor(data, tuple(levels)) if levels else data


def _sub_lod(levels, start: int, end: int, first: int):
    """Paddle's GetSubLoDAndAbsoluteOffset: the lengths, level by level from `first` down, of the
    entries [start, end) of level `first`, and the rows they span."""
    lengths = []
    for level in levels[first:]:
        lengths.append(np.diff(level[start : end + 1]))
        start, end = int(level[start]), int(level[end])
    return lengths, start, end


def _joined_lod(parts: list[list[np.ndarray]], depth: int) -> list[np.ndarray]:
    """Offsets of `depth` levels from each part's lengths, appended in order (Paddle's AppendLoD)."""
    return [_offsets(np.concatenate([p[k] for p in parts]) if parts else np.zeros(0, np.int64)) for k in range(depth)]


def _gather(xp, tensors: list, pieces: list[tuple[int, int, int]]):
    """The rows [start, end) of tensors[t] for each (t, start, end), one after another, by one take
    over the tensors stacked along rows."""
    used = sorted({t for t, a, b in pieces if b > a})
    if not used:
        return None
    base, at = {}, 0
    for t in used:
        base[t] = at
        at += tensors[t].shape[0]
    rows = [np.arange(a, b) + base[t] for t, a, b in pieces if b > a]
    stacked = tensors[used[0]] if len(used) == 1 else xp.concat([tensors[t] for t in used], axis=0)
    return xp.take(stacked, xp.asarray(np.concatenate(rows)), axis=0)


def _empty_like_rows(xp, like, rows: int = 0):
    return full(xp, (rows, *like.shape[1:]), 0, like.dtype)


# -- write_to_array / read_from_array / lod_array_length ------------------------------------------


def _share_to_array(ctx: InferContext) -> None:
    """The array takes its elements' dtype, shape and LoD level (Paddle's WriteToArrayInferVarType)."""
    x = ctx.input_var("X")
    ctx.set_output("Out", x.shape, x.dtype, lod_level=x.lod_level, type=VarType.LOD_TENSOR_ARRAY)


def _written(array, x, i: int) -> list:
    """A copy of `array` (None for no array yet) with element i set to x; elements between the old
    end and i stay None, as Paddle leaves them uninitialised."""
    out = list(array or ())
    if i >= len(out):
        out.extend([None] * (i + 1 - len(out)))
    out[i] = x
    return out


def _read(xp, array, i, x_w):
    """Element I of the array; past the end (or never written), zeros shaped as X_W when given: the
    gradient of a write whose element nobody read (Paddle's read_from_array as write_to_array_grad)."""
    n = _index(xp, i, "read_from_array")
    array = _array(array, "read_from_array: X")
    if n < len(array) and array[n] is not None:
        return array[n]
    if x_w is None:
        what = "was never written" if n < len(array) else f"is past the end ({len(array)} elements)"
        raise FleetgraphError(f"read_from_array: element I = {n} {what}; expected a written element")
    return _with_levels(full(xp, strip(x_w).shape, 0, strip(x_w).dtype), getattr(x_w, "levels", ()))


def _read_infer(ctx: InferContext) -> None:
    """Out takes the array's element dtype, shape and LoD level. X's type is not checked here: a
    gradient array that backward made before its first writer is typed as a tensor until then
    (array_read checks the user's array, the kernel the value)."""
    x = ctx.input_var("X")
    ctx.set_output("Out", x.shape, x.dtype, lod_level=x.lod_level)


def _array_grad(type: str, x_w: bool):
    """Paddle's grad makers of the two array ops, each the other op: write_to_array's gradient reads
    the array's gradient at I (zeros where nothing was read, shaped by X_W), read_from_array's
    writes the read element's gradient into the array's gradient at I."""

    def maker(op) -> list[dict]:
        inputs = {"X": [n + GRAD_SUFFIX for n in op.outputs["Out"]], "I": list(op.inputs["I"])}
        if x_w:
            inputs["X_W"] = list(op.inputs["X"])
        outputs = {"Out": [n + GRAD_SUFFIX for n in op.inputs["X"]]}
        attrs = {k: v for k, v in op.attrs.items() if k not in COMMON_ATTRS}
        return [dict(type=type, inputs=inputs, outputs=outputs, attrs=attrs)]

    return maker


def _write(xp, x, i, *, ctx):
    """Out[I] = X in the array Out names, as this run holds it (none yet: a new array). The array is
    copied, not changed in place, so a value saved from before the write (a loop's iteration, the
    gradient's) keeps its elements."""
    old = ctx.env.get(ctx.op.output("Out")[0])
    return _written(None if old is None else _array(old, "write_to_array: Out"), x, _index(xp, i, "write_to_array"))


register_op(
    "write_to_array",
    inputs=("X", "I"),
    outputs=("Out",),
    infer_shape=_share_to_array,
    grad=_array_grad("read_from_array", x_w=True),
    kernel=_write,
    needs_context=True,
    takes_lod=True,
)
register_op(
    "read_from_array",
    inputs=("X", "I", "X_W?"),
    outputs=("Out",),
    infer_shape=_read_infer,
    grad=_array_grad("write_to_array", x_w=False),
    kernel=_read,
    takes_lod=True,
)


def _length(xp, array):
    """Out = [len(X)] (int64), the loop bound of a walk over the array."""
    return xp.asarray([len(_array(array, "lod_array_length: X"))], dtype=xp.int64)


register_op(
    "lod_array_length",
    inputs=("X",),
    outputs=("Out",),
    infer_shape=lambda ctx: ctx.set_output("Out", (1,), "int64"),
    kernel=_length,
    takes_lod=True,
)

# -- tensor_array_to_tensor -----------------------------------------------------------------------


def _axis(axis: int, rank: int, use_stack: bool) -> int:
    return axis + rank + (1 if use_stack else 0) if axis < 0 else axis


def _to_tensor(xp, array, *, axis, use_stack):
    """Out = the elements concatenated (or stacked) along `axis`; OutIndex = each element's size
    along it (int32), which the gradient splits by."""
    elements = [strip(a) for a in _array(array, "tensor_array_to_tensor: X")]
    if not elements or any(e is None for e in elements):
        raise FleetgraphError(f"tensor_array_to_tensor: X holds {len(elements)} elements, some never written")
    axis = _axis(axis, elements[0].ndim, use_stack)
    out = xp.stack(elements, axis=axis) if use_stack else xp.concat(elements, axis=axis)
    sizes = [1 if use_stack else e.shape[axis] for e in elements]
    return out, xp.asarray(sizes, dtype=xp.int32)


def _to_tensor_grad(xp, array, dout, *, axis, use_stack):
    """X@GRAD: Out@GRAD cut back into the elements' shapes along `axis`."""
    elements = [strip(a) for a in _array(array, "tensor_array_to_tensor_grad: X")]
    axis = _axis(axis, elements[0].ndim, use_stack)
    parts = split(xp, strip(dout), [1 if use_stack else e.shape[axis] for e in elements], axis)
    return [reshape(xp, p, e.shape) for p, e in zip(parts, elements)]


def _to_tensor_infer(ctx: InferContext) -> None:
    x = ctx.input_var("X")
    rank = len(x.shape) + (1 if ctx.attr("use_stack") else 0)
    ctx.set_output("Out", (-1,) * rank, x.dtype)
    ctx.set_output("OutIndex", (-1,), "int32")


_TO_TENSOR_ATTRS = {"axis": 0, "use_stack": False}
register_op(
    "tensor_array_to_tensor",
    inputs=("X",),
    outputs=("Out", "OutIndex"),
    attrs=_TO_TENSOR_ATTRS,
    infer_shape=_to_tensor_infer,
    grad=make_grad_op(inputs=("X", "Out@GRAD"), outputs=("X@GRAD",)),
    kernel=_to_tensor,
    takes_lod=True,
)
register_op(
    "tensor_array_to_tensor_grad",
    inputs=("X", "Out@GRAD"),
    outputs=("X@GRAD",),
    attrs=_TO_TENSOR_ATTRS,
    infer_shape=lambda ctx: ctx.set_output(
        "X@GRAD", ctx.input_var("X").shape, ctx.input_var("X").dtype, type=VarType.LOD_TENSOR_ARRAY
    ),
    kernel=_to_tensor_grad,
    takes_lod=True,
)
