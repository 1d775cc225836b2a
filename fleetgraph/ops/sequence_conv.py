"""`sequence_conv`: a 1-D convolution along each sequence of a LoD tensor (Paddle's op, slots and
attrs). Row t of a sequence sees the rows t + contextStart ... t + contextStart + contextLength - 1
of its own sequence; positions before its start or past its end read zeros, or with
paddingTrainable the rows of PaddingData (the up_pad rows for positions before the start, then the
down_pad rows for those past the end, as Paddle's ContextProjectFunctor lays them out).

The context windows are one gather from the rows of [X; PaddingData or zeros; a zero row], their
positions worked out on the host from the LoD, then one matmul with Filter; the gradient is the
transposed matmuls and, for X, one gather per window position of the window gradients that read
each row.
"""

from __future__ import annotations

import numpy as np

from ..ir import InferContext, make_grad_op, register_op
from ..ir.errors import fmt_shape
from ._xp import reshape
from .lod_tensor import LoDTensor, strip
from .sequence import _sequence_var, _sequences

_ATTRS = {"contextStart": 0, "contextLength": 3, "contextStride": 1, "paddingTrainable": False}


def _pads(start: int, length: int) -> tuple[int, int]:
    """(up_pad, down_pad): how many positions a window reaches before a sequence and past it."""
    return max(0, -start), max(0, start + length - 1)


def _infer(ctx: InferContext) -> None:
    x, w = _sequence_var(ctx, "X"), ctx.input_var("Filter")
    start, length = ctx.attr("contextStart"), ctx.attr("contextLength")
    if ctx.attr("contextStride") != 1:
        raise ctx.error(f"contextStride {ctx.attr('contextStride')}: only 1 is supported, as in Paddle")
    if length < 1:
        raise ctx.error(f"contextLength {length}: expected at least 1")
    if len(x.shape) != 2:
        raise ctx.error(f"X '{x.name}' {fmt_shape(x.shape)}: expected rank 2, [rows, features]")
    width = x.shape[1]
    if len(w.shape) != 2 or (width >= 0 and w.shape[0] >= 0 and w.shape[0] != length * width):
        raise ctx.error(
            f"Filter '{w.name}' {fmt_shape(w.shape)}: expected [contextLength * width of X, filters] = "
            f"[{length} * {width}, filters]"
        )
    if ctx.attr("paddingTrainable"):
        if not ctx.has_input("PaddingData"):
            raise ctx.error("paddingTrainable is set; expected the PaddingData input")
        up, down = _pads(start, length)
        pad = ctx.input_var("PaddingData")
        if tuple(pad.shape) != (up + down, width):
            raise ctx.error(f"PaddingData '{pad.name}' {fmt_shape(pad.shape)}: expected [{up + down}, {width}]")
    ctx.set_output("Out", (x.shape[0], w.shape[1]), x.dtype, lod_level=x.lod_level)


def _window_rows(offsets: np.ndarray, start: int, length: int, trainable: bool) -> np.ndarray:
    """[rows, length] positions in [X; PaddingData (up_pad + down_pad rows); zero row] each window
    position reads. Paddle's padding rows: up_pad + q for q < 0, up_pad + q - n for q >= n."""
    rows = int(offsets[-1])
    up, down = _pads(start, length)
    zero = rows + up + down
    lengths = np.diff(offsets)
    owner = np.repeat(np.arange(len(lengths)), lengths)
    p = np.arange(rows) - offsets[:-1][owner]  # each row's position in its sequence
    n = lengths[owner]
    q = p[:, None] + start + np.arange(length)[None, :]  # the positions each window reads
    inside = (q >= 0) & (q < n[:, None])
    index = np.where(inside, offsets[:-1][owner][:, None] + q, zero)
    if trainable:
        index = np.where(q < 0, rows + up + q, index)
        index = np.where(q >= n[:, None], rows + up + (q - n[:, None]), index)
    return index.astype(np.int64)


def _source(xp, x, padding, start: int, length: int, trainable: bool):
    up, down = _pads(start, length)
    pad = padding if trainable else xp.zeros((up + down, x.shape[1]), dtype=x.dtype)
    return xp.concat([x, pad, xp.zeros((1, x.shape[1]), dtype=x.dtype)], axis=0)


def _columns(xp, x, padding, attrs):
    seq = _sequences(x, "sequence_conv: X")
    rows = strip(seq)
    start, length, trainable = attrs["contextStart"], attrs["contextLength"], attrs["paddingTrainable"]
    index = _window_rows(seq.levels[-1], start, length, trainable)
    src = _source(xp, rows, padding, start, length, trainable)
    cols = xp.take(src, xp.asarray(index.reshape(-1)), axis=0)
    return seq, index, reshape(xp, cols, (rows.shape[0], length * rows.shape[1]))


def _kernel(xp, x, filter, padding, **attrs):
    seq, _, cols = _columns(xp, x, padding, attrs)
    return LoDTensor(cols @ filter, seq.levels)


def _readers(offsets: np.ndarray, start: int, length: int) -> np.ndarray:
    """[length, rows]: for window position j, the output row whose window reads row s of X at j
    (rows - or the index of an appended zero row - where none does): row s is read at j by the
    row s - start - j of its own sequence."""
    rows = int(offsets[-1])
    lengths = np.diff(offsets)
    owner = np.repeat(np.arange(len(lengths)), lengths)
    p = np.arange(rows) - offsets[:-1][owner]
    reader = p[None, :] - start - np.arange(length)[:, None]  # the reading row's position
    inside = (reader >= 0) & (reader < lengths[owner][None, :])
    return np.where(inside, offsets[:-1][owner][None, :] + reader, rows).astype(np.int64)


def _grad_kernel(xp, x, filter, padding, dout, *, need, **attrs):
    """dX gathers, for each window position, the window gradient that read each row and adds the
    positions up in order (no scatter: NumPy and the array API give the same sums); PaddingData's
    gradient sums the windows that read each padding row, one small matmul."""
    seq, index, cols = _columns(xp, x, padding, attrs)
    g = strip(dout)
    dx = dfilter = dpad = None
    if "Filter@GRAD" in need:
        dfilter = cols.T @ g
    if "X@GRAD" in need or "PaddingData@GRAD" in need:
        rows, width = strip(seq).shape
        start, length = attrs["contextStart"], attrs["contextLength"]
        dcols = reshape(xp, g @ filter.T, (rows, length, width))
        if "X@GRAD" in need:
            padded = xp.concat([dcols, xp.zeros((1, length, width), dtype=dcols.dtype)], axis=0)
            readers = _readers(seq.levels[-1], start, length)
            total = xp.zeros((rows, width), dtype=dcols.dtype)
            for j in range(length):
                total = total + xp.take(padded[:, j, :], xp.asarray(readers[j]), axis=0)
            dx = LoDTensor(total, seq.levels)
        if "PaddingData@GRAD" in need and attrs["paddingTrainable"]:
            up, down = _pads(start, length)
            hits = (index.reshape(-1)[None, :] == rows + np.arange(up + down)[:, None]).astype(np.float64)
            dpad = xp.asarray(hits, dtype=dcols.dtype) @ reshape(xp, dcols, (rows * length, width))
    return dx, dfilter, dpad


register_op(
    "sequence_conv",
    inputs=("X", "Filter", "PaddingData?"),
    outputs=("Out",),
    attrs=_ATTRS,
    infer_shape=_infer,
    grad=make_grad_op(
        inputs=("X", "Filter", "PaddingData", "Out@GRAD"), outputs=("X@GRAD", "Filter@GRAD", "PaddingData@GRAD")
    ),
    kernel=_kernel,
    takes_lod=True,
)
register_op(
    "sequence_conv_grad",
    inputs=("X", "Filter", "PaddingData?", "Out@GRAD"),
    outputs=("X@GRAD", "Filter@GRAD", "PaddingData@GRAD"),
    attrs=_ATTRS,
    kernel=_grad_kernel,
    takes_lod=True,
    wants_outputs=True,
)
