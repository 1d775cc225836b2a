"""Sequence ops that edit which rows each sequence of a LoD tensor holds: sequence_erase drops
given tokens and shortens the sequences' last LoD level to match; sequence_slice keeps a window
of each sequence; sequence_scatter adds each sequence of updates into one row of a dense tensor."""

from __future__ import annotations

import numpy as np

from ..ir import InferContext, make_grad_op, register_op
from ..ir.errors import fmt_shape
from ._xp import host, reshape
from .lod_tensor import LoDError, LoDTensor, strip
from .sequence import _sequence_var, _sequences

# -- sequence_erase -------------------------------------------------------------------------------


def _erase_infer(ctx: InferContext) -> None:
    x = _sequence_var(ctx, "X")
    if len(x.shape) != 2 or x.shape[1] not in (1, -1):
        raise ctx.error(f"X '{x.name}' {fmt_shape(x.shape)}: expected token ids of shape [N, 1]")
    if not x.dtype.startswith(("int", "uint")):
        raise ctx.error(f"X '{x.name}' is {x.dtype}; expected integer token ids")
    ctx.set_output("Out", (-1, 1), x.dtype, lod_level=x.lod_level)


def _erase(xp, x, *, tokens):
    """Out keeps the ids of X that are not in `tokens`, in order; the outer LoD levels stay and the
    last level counts the rows each sequence kept (the erased rows are known only from the values,
    so the kept positions are found on the host and gathered in one take)."""
    seq = _sequences(x, "sequence_erase: X")
    ids = reshape(xp, seq.data, (-1,))
    keep = ~np.isin(host(ids), np.asarray(tokens, dtype=np.int64))
    kept = np.concatenate(([0], np.cumsum(keep)))
    levels = (*seq.levels[:-1], kept[seq.levels[-1]])
    out = reshape(xp, xp.take(ids, xp.asarray(np.flatnonzero(keep)), axis=0), (-1, 1))
    return LoDTensor(out, levels)


register_op(
    "sequence_erase",
    inputs=("X",),
    outputs=("Out",),
    attrs={"tokens": []},
    infer_shape=_erase_infer,
    kernel=_erase,
    takes_lod=True,
)

# -- sequence_slice -------------------------------------------------------------------------------


def _slice_infer(ctx: InferContext) -> None:
    x = _sequence_var(ctx, "X")
    for slot in ("Offset", "Length"):
        var = ctx.input_var(slot)
        if not var.dtype.startswith(("int", "uint")):
            raise ctx.error(f"{slot} '{var.name}' is {var.dtype}; expected integer row counts")
    ctx.set_output("Out", (-1, *x.shape[1:]), x.dtype, lod_level=x.lod_level)


def _window_rows(xp, seq: LoDTensor, offset, length) -> tuple[np.ndarray, np.ndarray]:
    """The rows of X that Out takes, and Out's lengths: sequence i's rows from its start plus
    Offset[i], Length[i] of them (checked to stay within the sequence, as Paddle)."""
    starts, ends = seq.levels[0][:-1], seq.levels[0][1:]
    offset = host(reshape(xp, offset, (-1,))).astype(np.int64)
    length = host(reshape(xp, length, (-1,))).astype(np.int64)
    if offset.shape != starts.shape or length.shape != starts.shape:
        raise LoDError(f"sequence_slice: Offset and Length need one value per sequence ({starts.size})")
    if (offset < 0).any() or (length < 0).any() or (starts + offset + length > ends).any():
        raise LoDError("sequence_slice: Offset and Length must be non-negative and stay within each sequence")
    first = np.repeat(starts + offset - np.concatenate(([0], np.cumsum(length)[:-1])), length)
    return first + np.arange(int(length.sum())), length


def _slice(xp, x, offset, length):
    """Out holds, for each sequence, Length rows starting Offset rows into it."""
    seq = _sequences(x, "sequence_slice: X", levels=1)
    rows, lengths = _window_rows(xp, seq, offset, length)
    out = xp.take(seq.data, xp.asarray(rows), axis=0)
    return LoDTensor(out, (np.concatenate(([0], np.cumsum(lengths))),))


def _slice_grad(xp, x, offset, length, dout):
    """X@GRAD is Out@GRAD on the rows Out took and zero elsewhere: each row gathers its Out row, or
    a zero row appended past the end (the rows are distinct, so a gather is the scatter)."""
    seq = _sequences(x, "sequence_slice_grad: X", levels=1)
    rows, _ = _window_rows(xp, seq, offset, length)
    dy = strip(dout)
    source = np.full(seq.data.shape[0], rows.size, dtype=np.int64)
    source[rows] = np.arange(rows.size)
    padded = xp.concat([dy, xp.zeros((1, *dy.shape[1:]), dtype=dy.dtype)], axis=0)
    return seq.with_data(xp.take(padded, xp.asarray(source), axis=0))


register_op(
    "sequence_slice",
    inputs=("X", "Offset", "Length"),
    outputs=("Out",),
    infer_shape=_slice_infer,
    grad=make_grad_op(inputs=("X", "Offset", "Length", "Out@GRAD"), outputs=("X@GRAD",)),
    kernel=_slice,
    takes_lod=True,
)
register_op(
    "sequence_slice_grad",
    inputs=("X", "Offset", "Length", "Out@GRAD"),
    outputs=("X@GRAD",),
    kernel=_slice_grad,
    takes_lod=True,
)

# -- sequence_scatter -----------------------------------------------------------------------------


def _scatter_infer(ctx: InferContext) -> None:
    x, ids = ctx.input_var("X"), _sequence_var(ctx, "Ids")
    if not ids.dtype.startswith(("int", "uint")):
        raise ctx.error(f"Ids '{ids.name}' is {ids.dtype}; expected integer column ids")
    ctx.set_output("Out", x.shape, x.dtype)


def _scatter_positions(xp, x_shape, ids) -> np.ndarray:
    """Each id's flat position in X: row i (its sequence) times the row size, plus the id."""
    seq = _sequences(ids, "sequence_scatter: Ids")
    offsets = seq.levels[0]
    if len(offsets) - 1 != x_shape[0]:
        raise LoDError(f"sequence_scatter: Ids has {len(offsets) - 1} sequences; X has {x_shape[0]} rows")
    row = int(np.prod(x_shape[1:]))
    return np.repeat(np.arange(len(offsets) - 1), np.diff(offsets)) * row + host(reshape(xp, seq.data, (-1,)))


def _scatter(xp, x, ids, updates):
    """Out = X with Updates[j] added at row (sequence of j), column Ids[j]; repeated positions add
    up, as Paddle's +=. The sums per distinct position are one matmul with a host-built one-hot,
    then each position of Out gathers its sum or a zero."""
    x = strip(x)
    flat = reshape(xp, x, (-1,))
    unique, inverse = np.unique(_scatter_positions(xp, x.shape, ids), return_inverse=True)
    v = reshape(xp, strip(updates), (-1,))
    onehot = xp.asarray((inverse[None, :] == np.arange(unique.size)[:, None]).astype(np.float64))
    sums = xp.matmul(xp.astype(onehot, v.dtype), v) if unique.size else v[:0]
    source = np.full(flat.shape[0], unique.size, dtype=np.int64)
    source[unique] = np.arange(unique.size)
    added = xp.take(xp.concat([sums, xp.zeros((1,), dtype=flat.dtype)]), xp.asarray(source), axis=0)
    return reshape(xp, flat + added, x.shape)


def _scatter_grad(xp, ids, updates, dout):
    """X@GRAD is Out@GRAD; Updates@GRAD gathers Out@GRAD at each update's position, under Ids' LoD."""
    dy = strip(dout)
    positions = _scatter_positions(xp, dy.shape, ids)
    dupdates = xp.take(reshape(xp, dy, (-1,)), xp.asarray(positions), axis=0)
    return dy, _sequences(ids, "sequence_scatter_grad: Ids").with_data(reshape(xp, dupdates, strip(updates).shape))


register_op(
    "sequence_scatter",
    inputs=("X", "Ids", "Updates"),
    outputs=("Out",),
    infer_shape=_scatter_infer,
    grad=make_grad_op(inputs=("Ids", "Updates", "Out@GRAD"), outputs=("X@GRAD", "Updates@GRAD")),
    kernel=_scatter,
    takes_lod=True,
)
register_op(
    "sequence_scatter_grad",
    inputs=("Ids", "Updates", "Out@GRAD"),
    outputs=("X@GRAD", "Updates@GRAD"),
    kernel=_scatter_grad,
    takes_lod=True,
)
