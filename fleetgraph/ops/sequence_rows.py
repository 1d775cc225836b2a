"""Sequence ops that work row by row within each sequence of a LoD tensor: sequence_softmax,
sequence_reverse, and sequence_mask (lengths to a padded mask)."""

from __future__ import annotations

import numpy as np

from ..ir import InferContext, make_grad_op, register_op
from ..ir.dtypes import convert_dtype
from ..ir.errors import fmt_shape
from ._common import prod
from ._xp import astype, dtype_of, full, reshape
from .lod_tensor import strip
from .sequence import _sequence_var, _sequences

# -- sequence_softmax -----------------------------------------------------------------------------


def _softmax_infer(ctx: InferContext) -> None:
    x = _sequence_var(ctx, "X")
    if len(x.shape) > 1 and all(d >= 0 for d in x.shape[1:]) and prod(x.shape[1:]) != 1:
        raise ctx.error(f"X '{x.name}' {fmt_shape(x.shape)}: expected one value a row, shape [N, 1] or [N]")
    ctx.set_output("Out", x.shape, x.dtype, lod_level=x.lod_level)


def _segments(offsets: np.ndarray, width: int = -1):
    """Host index arrays for sums and maxima per sequence without a segment reduction: `grid`
    (sequences x `width`, by default the longest) holds each sequence's row numbers, padded with
    row 0 where `valid` is False; `owner` gives each row's sequence."""
    lengths = np.diff(offsets)
    if width < 0:
        width = int(lengths.max()) if lengths.size else 0
    steps = np.arange(width)
    valid = steps < lengths[:, None]
    grid = np.where(valid, offsets[:-1, None] + steps, 0)
    return grid, valid, np.repeat(np.arange(len(lengths)), lengths)


def _padded(xp, rows, grid, valid, fill):
    """The rows of each sequence laid out as (sequences, longest, *row shape), `fill` past each end."""
    shape = (*grid.shape, *rows.shape[1:])
    gathered = reshape(xp, xp.take(rows, xp.asarray(grid.ravel()), axis=0), shape)
    keep = xp.asarray(valid.reshape(grid.shape + (1,) * (rows.ndim - 1)))
    fill = fill if hasattr(fill, "shape") else full(xp, shape, fill, rows.dtype)
    return xp.where(keep, gathered, fill)


def _per_segment(xp, v, grid, valid, fill, reduce):
    """`reduce` (xp.max or xp.sum) over each sequence of the 1-D values `v`, padded with `fill`."""
    return reduce(_padded(xp, v, grid, valid, fill), axis=1)


def _spread(xp, per_sequence, owner):
    """Each sequence's value repeated on its rows."""
    return xp.take(per_sequence, xp.asarray(owner), axis=0)


def _softmax(xp, x):
    """Out holds the softmax of each sequence's values (of X's last LoD level)."""
    seq = _sequences(x, "sequence_softmax: X")
    v = reshape(xp, seq.data, (-1,))
    if not v.shape[0]:
        return seq
    grid, valid, owner = _segments(seq.offsets)
    e = xp.exp(v - _spread(xp, _per_segment(xp, v, grid, valid, -np.inf, xp.max), owner))
    out = e / _spread(xp, _per_segment(xp, e, grid, valid, 0.0, xp.sum), owner)
    return seq.with_data(reshape(xp, out, seq.data.shape))


def _softmax_grad(xp, x, out, dout):
    """X@GRAD = Out * (Out@GRAD - sum over the sequence of Out@GRAD * Out)."""
    seq = _sequences(x, "sequence_softmax_grad: X")
    y, dy = reshape(xp, strip(out), (-1,)), reshape(xp, strip(dout), (-1,))
    if not y.shape[0]:
        return seq.with_data(strip(dout))
    grid, valid, owner = _segments(seq.offsets)
    dot = _spread(xp, _per_segment(xp, y * dy, grid, valid, 0.0, xp.sum), owner)
    return seq.with_data(reshape(xp, y * (dy - dot), seq.data.shape))


_SOFTMAX_ATTRS = {"use_cudnn": False, "data_format": "AnyLayout"}
register_op(
    "sequence_softmax",
    inputs=("X",),
    outputs=("Out",),
    attrs=_SOFTMAX_ATTRS,
    infer_shape=_softmax_infer,
    grad=make_grad_op(inputs=("X", "Out", "Out@GRAD"), outputs=("X@GRAD",)),
    kernel=lambda xp, x, *, use_cudnn, data_format: _softmax(xp, x),
    takes_lod=True,
)
register_op(
    "sequence_softmax_grad",
    inputs=("X", "Out", "Out@GRAD"),
    outputs=("X@GRAD",),
    attrs=_SOFTMAX_ATTRS,
    kernel=lambda xp, x, out, dout, *, use_cudnn, data_format: _softmax_grad(xp, x, out, dout),
    takes_lod=True,
)

# -- sequence_reverse -----------------------------------------------------------------------------


def _reverse_infer(ctx: InferContext) -> None:
    x = _sequence_var(ctx, "X")
    if len(x.shape) < 2:
        raise ctx.error(f"X '{x.name}' {fmt_shape(x.shape)}: expected rank 2 or more")
    ctx.set_output("Y", x.shape, x.dtype, lod_level=x.lod_level)


def _reversed_rows(offsets: np.ndarray) -> np.ndarray:
    """Row r of a sequence [a, b) takes row a + b - 1 - r: a permutation that is its own inverse."""
    return np.repeat(offsets[:-1] + offsets[1:] - 1, np.diff(offsets)) - np.arange(int(offsets[-1]))


def _reverse(xp, x):
    """Y holds each sequence's rows in reverse order, under X's LoD."""
    seq = _sequences(x, "sequence_reverse: X", levels=1)
    return seq.with_data(xp.take(seq.data, xp.asarray(_reversed_rows(seq.offsets)), axis=0))


def _reverse_grad(xp, x, dy):
    """Reversing is its own inverse: X@GRAD is Y@GRAD reversed the same way."""
    seq = _sequences(x, "sequence_reverse_grad: X", levels=1)
    return seq.with_data(xp.take(strip(dy), xp.asarray(_reversed_rows(seq.offsets)), axis=0))


register_op(
    "sequence_reverse",
    inputs=("X",),
    outputs=("Y",),
    infer_shape=_reverse_infer,
    grad=make_grad_op(inputs=("X", "Y@GRAD"), outputs=("X@GRAD",)),
    kernel=_reverse,
    takes_lod=True,
)
register_op(
    "sequence_reverse_grad",
    inputs=("X", "Y@GRAD"),
    outputs=("X@GRAD",),
    kernel=_reverse_grad,
    takes_lod=True,
)

# -- sequence_mask --------------------------------------------------------------------------------


def _mask_infer(ctx: InferContext) -> None:
    x = ctx.input_var("X")
    if not x.dtype.startswith(("int", "uint")):
        raise ctx.error(f"X '{x.name}' is {x.dtype}; expected integer sequence lengths")
    maxlen = ctx.attr("maxlen")
    width = maxlen if maxlen > 0 and not ctx.has_input("MaxLenTensor") else -1
    ctx.set_output("Y", (*x.shape, width), convert_dtype(ctx.attr("out_dtype")))


def _mask(xp, x, maxlen_tensor, *, maxlen, out_dtype):
    """Y[..., j] is 1 where j < X[...]: a row of maxlen (MaxLenTensor, else the attr, else the
    longest length) per length."""
    if maxlen_tensor is not None:
        maxlen = int(reshape(xp, maxlen_tensor, (-1,))[0])
    elif maxlen < 0:
        maxlen = int(xp.max(x)) if prod(x.shape) else 0
    steps = xp.arange(maxlen, dtype=dtype_of(xp, "int64"))
    return astype(xp, steps < astype(xp, x, "int64")[..., None], convert_dtype(out_dtype))


register_op(
    "sequence_mask",
    inputs=("X", "MaxLenTensor?"),
    outputs=("Y",),
    attrs={"maxlen": -1, "out_dtype": "int64"},
    infer_shape=_mask_infer,
    kernel=_mask,
)
