"""Sequence ops between LoD tensors and padded batches: sequence_pad, sequence_unpad,
sequence_expand_as and sequence_enumerate."""

from __future__ import annotations

import numpy as np

from ..ir import InferContext, make_grad_op, register_op
from ..ir.errors import fmt_shape
from ._common import prod
from ._xp import astype, reshape
from .lod_tensor import LoDError, LoDTensor, strip
from .sequence import _offsets, _sequence_var, _sequences, _tensor
from .sequence_rows import _padded, _segments


def _host_ints(a) -> np.ndarray:
    """A small integer vector (sequence lengths) brought to the host, whatever the array module."""
    return np.array([int(a[i]) for i in range(a.shape[0])], dtype=np.int64)


def _unpadded(xp, padded, valid):
    """The rows of a (sequences, width, *row) batch where `valid`, one sequence after another."""
    rows = reshape(xp, padded, (-1, *padded.shape[2:]))
    return xp.take(rows, xp.asarray(np.flatnonzero(valid.ravel())), axis=0)


# -- sequence_pad ---------------------------------------------------------------------------------


def _pad_infer(ctx: InferContext) -> None:
    x, pad_value = _sequence_var(ctx, "X"), ctx.input_var("PadValue")
    if len(x.shape) < 2:
        raise ctx.error(f"X '{x.name}' {fmt_shape(x.shape)}: expected rank 2 or more")
    if prod(pad_value.shape) != 1 and tuple(pad_value.shape) != tuple(x.shape[1:]):
        raise ctx.error(
            f"PadValue '{pad_value.name}' {fmt_shape(pad_value.shape)}: expected one value or the shape of "
            f"a row of X, {fmt_shape(x.shape[1:])}"
        )
    ctx.set_output("Out", (-1, ctx.attr("padded_length"), *x.shape[1:]), x.dtype)
    ctx.set_output("Length", (-1,), "int64")


def _pad_plan(x, padded_length: int, where: str):
    seq = _sequences(x, f"{where}: X", levels=1)
    longest = int(np.diff(seq.offsets).max()) if len(seq.offsets) > 1 else 0
    if padded_length >= 0 and padded_length < longest:
        raise LoDError(f"{where}: padded_length {padded_length} is shorter than the longest sequence, {longest}")
    grid, valid, _ = _segments(seq.offsets, padded_length)
    return seq, grid, valid


def _pad(xp, x, pad_value, *, padded_length):
    """Out[i, :len_i] holds sequence i's rows and PadValue after them, to padded_length (-1: the
    longest sequence); Length holds each len_i."""
    seq, grid, valid = _pad_plan(x, padded_length, "sequence_pad")
    rows = seq.data
    shape = (*grid.shape, *rows.shape[1:])
    value = astype(xp, strip(pad_value), rows.dtype)
    lead = (1, 1, *value.shape) if prod(value.shape) > 1 else (1,) * len(shape)
    fill = xp.broadcast_to(reshape(xp, value, lead), shape)
    lengths = xp.asarray(np.diff(seq.offsets))
    return _padded(xp, rows, grid, valid, fill), lengths


def _pad_grad(xp, x, dout, *, padded_length):
    """X@GRAD holds the gradients of the rows Out took from X; the padding's are dropped."""
    seq, _, valid = _pad_plan(x, padded_length, "sequence_pad_grad")
    return seq.with_data(_unpadded(xp, dout, valid))


_PAD_ATTRS = {"padded_length": -1}
register_op(
    "sequence_pad",
    inputs=("X", "PadValue"),
    outputs=("Out", "Length"),
    attrs=_PAD_ATTRS,
    infer_shape=_pad_infer,
    grad=make_grad_op(inputs=("X", "Out@GRAD"), outputs=("X@GRAD",)),
    kernel=_pad,
    takes_lod=True,
)
register_op(
    "sequence_pad_grad",
    inputs=("X", "Out@GRAD"),
    outputs=("X@GRAD",),
    attrs=_PAD_ATTRS,
    kernel=_pad_grad,
    takes_lod=True,
)

# -- sequence_unpad -------------------------------------------------------------------------------


def _unpad_infer(ctx: InferContext) -> None:
    x, length = ctx.input_var("X"), ctx.input_var("Length")
    if len(x.shape) < 2:
        raise ctx.error(f"X '{x.name}' {fmt_shape(x.shape)}: expected rank 2 or more, (sequences, steps, ...)")
    if not length.dtype.startswith("int"):
        raise ctx.error(f"Length '{length.name}' is {length.dtype}; expected int64 sequence lengths")
    ctx.set_output("Out", (-1, *(x.shape[2:] or (1,))), x.dtype, lod_level=1)


def _unpad_plan(x, length, where: str):
    """Out's offsets and the (sequences x steps) mask of the steps it keeps."""
    rows, lengths = strip(x), _host_ints(strip(length))
    if lengths.shape[0] != rows.shape[0] or (lengths > rows.shape[1]).any() or (lengths < 0).any():
        raise LoDError(
            f"{where}: Length {lengths.tolist()}; expected {rows.shape[0]} lengths between 0 and {rows.shape[1]}, "
            f"as X {fmt_shape(rows.shape)}"
        )
    return _offsets(lengths), np.arange(rows.shape[1]) < lengths[:, None]


def _unpad(xp, x, length):
    """Out holds the first Length[i] steps of each X[i], as sequence i (a rank-2 X gives rows of one)."""
    offsets, valid = _unpad_plan(x, length, "sequence_unpad")
    rows = strip(x)
    out = _unpadded(xp, rows, valid)
    return _tensor(out if rows.ndim > 2 else reshape(xp, out, (-1, 1)), [offsets])


def _unpad_grad(xp, x, length, dout):
    """X@GRAD holds each sequence's gradients at its steps and zeros after them."""
    _, valid = _unpad_plan(x, length, "sequence_unpad_grad")
    rows = strip(x)
    grid = np.cumsum(valid.ravel()).reshape(valid.shape) - 1
    grads = reshape(xp, strip(dout), (-1, *rows.shape[2:]))
    return _padded(xp, grads, np.where(valid, grid, 0), valid, 0.0)


register_op(
    "sequence_unpad",
    inputs=("X", "Length"),
    outputs=("Out",),
    infer_shape=_unpad_infer,
    grad=make_grad_op(inputs=("X", "Length", "Out@GRAD"), outputs=("X@GRAD",)),
    kernel=_unpad,
    takes_lod=True,
)
register_op(
    "sequence_unpad_grad",
    inputs=("X", "Length", "Out@GRAD"),
    outputs=("X@GRAD",),
    kernel=_unpad_grad,
    takes_lod=True,
)

# -- sequence_expand_as ---------------------------------------------------------------------------


def _expand_as_infer(ctx: InferContext) -> None:
    x, y = ctx.input_var("X"), _sequence_var(ctx, "Y")
    if len(x.shape) < 2:
        raise ctx.error(f"X '{x.name}' {fmt_shape(x.shape)}: expected rank 2 or more")
    ctx.set_output("Out", (-1, *x.shape[1:]), x.dtype, lod_level=y.lod_level)


def _expand_as_plan(x, y, where: str):
    """Y's sequences, after checking X has one row for each."""
    ys = _sequences(y, f"{where}: Y", levels=1)
    rows = strip(x).shape[0]
    if rows != len(ys.offsets) - 1:
        raise LoDError(f"{where}: X has {rows} rows; expected one per sequence of Y, {len(ys.offsets) - 1}")
    return ys


def _expand_as(xp, x, y):
    """Out repeats row i of X as many times as sequence i of Y is long, under Y's LoD."""
    ys = _expand_as_plan(x, y, "sequence_expand_as")
    owner = np.repeat(np.arange(len(ys.offsets) - 1), np.diff(ys.offsets))
    return _tensor(xp.take(strip(x), xp.asarray(owner), axis=0), ys.levels)


def _expand_as_grad(xp, x, y, dout):
    """X@GRAD[i] sums the gradients of the rows that repeat X[i] (zero for an empty sequence)."""
    ys = _expand_as_plan(x, y, "sequence_expand_as_grad")
    grid, valid, _ = _segments(ys.offsets)
    dx = xp.sum(_padded(xp, strip(dout), grid, valid, 0.0), axis=1)
    return x.with_data(dx) if isinstance(x, LoDTensor) else dx


register_op(
    "sequence_expand_as",
    inputs=("X", "Y"),
    outputs=("Out",),
    infer_shape=_expand_as_infer,
    grad=make_grad_op(inputs=("X", "Y", "Out@GRAD"), outputs=("X@GRAD",)),
    kernel=_expand_as,
    takes_lod=True,
)
register_op(
    "sequence_expand_as_grad",
    inputs=("X", "Y", "Out@GRAD"),
    outputs=("X@GRAD",),
    kernel=_expand_as_grad,
    takes_lod=True,
)

# -- sequence_enumerate ---------------------------------------------------------------------------


def _enumerate_infer(ctx: InferContext) -> None:
    x = _sequence_var(ctx, "X")
    if len(x.shape) != 2 or x.shape[1] != 1:
        raise ctx.error(f"X '{x.name}' {fmt_shape(x.shape)}: expected one id a row, shape [N, 1]")
    if not x.dtype.startswith("int"):
        raise ctx.error(f"X '{x.name}' is {x.dtype}; expected int32 or int64 ids")
    win_size = ctx.attr("win_size")
    if win_size < 1:
        raise ctx.error(f"win_size {win_size}; expected a window of 1 or more ids")
    ctx.set_output("Out", (x.shape[0], win_size), x.dtype, lod_level=x.lod_level)


def _enumerate(xp, x, *, win_size, pad_value):
    """Out[r] holds the win_size ids from row r on, pad_value past the end of r's sequence."""
    seq = _sequences(x, "sequence_enumerate: X", levels=1)
    ids = reshape(xp, seq.data, (-1,))
    rows = ids.shape[0]
    if not rows:
        return seq.with_data(reshape(xp, ids, (0, win_size)))
    grid = np.arange(rows)[:, None] + np.arange(win_size)
    ends = np.repeat(seq.offsets[1:], np.diff(seq.offsets))
    valid = grid < ends[:, None]
    return seq.with_data(_padded(xp, ids, np.where(valid, grid, 0), valid, pad_value))


register_op(
    "sequence_enumerate",
    inputs=("X",),
    outputs=("Out",),
    attrs={"win_size": 0, "pad_value": 0},
    infer_shape=_enumerate_infer,
    kernel=_enumerate,
    takes_lod=True,
)
