"""Sequence ops over LoD tensors: sequence_pool, sequence_concat, sequence_reshape, sequence_expand."""

from __future__ import annotations

import numpy as np

from ..ir import InferContext, make_grad_op, register_op
from ..ir.errors import fmt_shape
from ..ir.program import Variable
from ._common import prod
from ._xp import reshape, split
from .lod_tensor import LoDError, LoDTensor, one_row_each, strip

_FEED_HINT = "feed it as a LoDTensor (fluid.create_lod_tensor, nested lists, DataFeeder, DataLoader or a Dataset)"

# -- shared helpers -------------------------------------------------------------------------------


def _sequence_var(ctx: InferContext, slot: str, i: int = 0) -> Variable:
    """The input variable, which must be declared as a sequence (the build-time check)."""
    var = ctx.input_var(slot, i)
    if var.lod_level < 1:
        raise ctx.error(f"{slot} '{var.name}' has lod_level 0; expected a sequence (lod_level >= 1)")
    return var


def _sequences(value, where: str, levels: int | None = None) -> LoDTensor:
    """The value as a LoDTensor with LoD (the run-time check); `levels` asks for that many levels."""
    if not isinstance(value, LoDTensor) or not value.levels:
        raise LoDError(f"{where} carries no LoD; {_FEED_HINT}")
    if levels is not None and len(value.levels) != levels:
        raise LoDError(f"{where} has {len(value.levels)} LoD levels; expected {levels}")
    return value


def _tensor(data, levels) -> LoDTensor:
    """A LoDTensor over `data` as it is (a NumPy or CuPy array) with new offsets."""
    out = LoDTensor(None, levels)
    out.data = data
    return out


def _segment_rows(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Row indices of the segments [start, start + length), one segment after another."""
    ends = np.cumsum(lengths)
    return np.arange(int(ends[-1]) if ends.size else 0) + np.repeat(starts - (ends - lengths), lengths)


def _offsets(lengths: np.ndarray) -> np.ndarray:
    return np.concatenate([np.zeros(1, np.int64), np.cumsum(lengths)])


def _column(a, ndim: int):
    """A 1-D array shaped to broadcast along the rows of an array of rank `ndim`."""
    return a.reshape((-1,) + (1,) * (ndim - 1))


# -- sequence_pool --------------------------------------------------------------------------------

_POOL_TYPES = ("AVERAGE", "SUM", "SQRT", "LAST", "FIRST", "MAX")


def _pool_infer(ctx: InferContext) -> None:
    x = _sequence_var(ctx, "X")
    pooltype = ctx.attr("pooltype")
    if pooltype not in _POOL_TYPES:
        raise ctx.error(f"pooltype {pooltype!r} is unknown; expected one of {', '.join(_POOL_TYPES)}")
    if pooltype == "MAX" and not ctx.has_output("MaxIndex"):
        raise ctx.error("pooltype MAX records the row of each maximum; expected a MaxIndex output")
    shape = (-1, *x.shape[1:])
    ctx.set_output("Out", shape, x.dtype, lod_level=x.lod_level - 1)
    ctx.set_output("MaxIndex", shape, "int32")


def _pool(xp, x, *, pooltype, is_test, pad_value, need):
    """Out[i] pools the rows of sequence i of X's last level; an empty sequence gives pad_value.
    MaxIndex (MAX, training) holds the row each maximum came from, -1 for an empty sequence."""
    seq = _sequences(x, "sequence_pool: X")
    rows, offsets = seq.data, seq.offsets
    if one_row_each(offsets, rows):  # one row per sequence (a CTR slot, one id a sample): pooling keeps it
        index = None
        if pooltype == "MAX" and "MaxIndex" in need and not is_test:
            index = xp.broadcast_to(_column(xp.arange(len(rows), dtype=np.int32), rows.ndim), rows.shape).copy()
        return (_tensor(rows, seq.levels[:-1]) if len(seq.levels) > 1 else rows), index
    lengths = offsets[1:] - offsets[:-1]
    full = bool(lengths.all())  # the common case, and the fast one: no empty sequence
    nonempty = None if full else lengths > 0
    starts, lens = (offsets[:-1], lengths) if full else (offsets[:-1][nonempty], lengths[nonempty])
    pooled = _pool_rows(xp, rows, starts, lens, pooltype)
    index = None
    if pooltype == "MAX" and "MaxIndex" in need and not is_test:
        index = _max_rows(xp, rows, starts, lens, pooled)
    if not full:
        pooled = _pad(xp, pooled, nonempty, pad_value)
        index = None if index is None else _pad(xp, index, nonempty, -1)
    out = _tensor(pooled, seq.levels[:-1]) if len(seq.levels) > 1 else pooled
    return out, index


def _pool_rows(xp, rows, starts, lens, pooltype):
    """One pooled row per (non-empty) segment."""
    if pooltype == "FIRST":
        return rows[starts]
    if pooltype == "LAST":
        return rows[starts + lens - 1]
    if not len(starts):
        return rows[:0]
    if pooltype == "MAX":
        return xp.maximum.reduceat(rows, starts, axis=0)
    total = xp.add.reduceat(rows, starts, axis=0)
    if pooltype == "SUM":
        return total
    scale = lens if pooltype == "AVERAGE" else np.sqrt(lens)
    return total / _column(xp.asarray(scale, dtype=rows.dtype), rows.ndim)


def _max_rows(xp, rows, starts, lens, pooled):
    """The first row of each segment that holds the segment's maximum, per element (Paddle's `>`)."""
    segment = np.repeat(np.arange(len(starts)), lens)
    row_ids = _column(xp.arange(len(rows), dtype=np.int32), rows.ndim)
    hits = xp.where(rows == pooled[segment], row_ids, np.int32(len(rows)))
    return xp.minimum.reduceat(hits, starts, axis=0) if len(starts) else hits[:0]


def _pad(xp, pooled, nonempty, value):
    out = xp.full((len(nonempty), *pooled.shape[1:]), value, dtype=pooled.dtype)
    out[nonempty] = pooled
    return out


def _pool_grad(xp, x, max_index, dout, *, pooltype, is_test, pad_value):
    """X@GRAD (with X's LoD): Out@GRAD[i] spread over sequence i as its pooling weighs the rows."""
    seq = _sequences(x, "sequence_pool_grad: X")
    rows, offsets, dout = seq.data, seq.offsets, strip(dout)
    if one_row_each(offsets, rows):
        return seq.with_data(dout)
    lengths = offsets[1:] - offsets[:-1]
    if pooltype == "MAX":
        if max_index is None:
            raise LoDError("sequence_pool_grad: pooltype MAX needs the forward op's MaxIndex; expected it as input")
        return seq.with_data(_max_grad(xp, rows, max_index, dout))
    if pooltype in ("FIRST", "LAST"):
        nonempty = lengths > 0
        picked = offsets[:-1][nonempty] if pooltype == "FIRST" else offsets[1:][nonempty] - 1
        dx = xp.zeros_like(rows)
        dx[picked] = dout[nonempty]
        return seq.with_data(dx)
    if pooltype != "SUM":
        counts = np.maximum(lengths, 1)
        scale = counts if pooltype == "AVERAGE" else np.sqrt(counts)
        dout = dout / _column(xp.asarray(scale, dtype=dout.dtype), dout.ndim)
    return seq.with_data(xp.repeat(dout, lengths, axis=0))


def _max_grad(xp, rows, max_index, dout):
    dx = xp.zeros((len(rows), prod(rows.shape[1:])), dtype=dout.dtype)
    index = max_index.reshape(len(max_index), -1)
    picked = index >= 0
    cols = xp.broadcast_to(xp.arange(index.shape[1]), index.shape)
    dx[index[picked], cols[picked]] = dout.reshape(index.shape)[picked]
    return dx.reshape(rows.shape)


def _pool_grad_maker(op) -> list[dict]:
    """sequence_pool_grad reads MaxIndex only for MAX pooling, as Paddle's grad maker."""
    inputs = ("X", "MaxIndex", "Out@GRAD") if op.attr("pooltype") == "MAX" else ("X", "Out@GRAD")
    return make_grad_op(inputs=inputs, outputs=("X@GRAD",))(op)


_POOL_ATTRS = {"pooltype": "AVERAGE", "is_test": False, "pad_value": 0.0}
register_op(
    "sequence_pool",
    inputs=("X",),
    outputs=("Out", "MaxIndex?"),
    attrs=_POOL_ATTRS,
    infer_shape=_pool_infer,
    grad=_pool_grad_maker,
    kernel=_pool,
    wants_outputs=True,
    takes_lod=True,
)
register_op(
    "sequence_pool_grad",
    inputs=("X", "MaxIndex?", "Out@GRAD"),
    outputs=("X@GRAD",),
    attrs=_POOL_ATTRS,
    kernel=_pool_grad,
    takes_lod=True,
)

# -- sequence_concat ------------------------------------------------------------------------------


def _concat_infer(ctx: InferContext) -> None:
    xs = [_sequence_var(ctx, "X", i) for i in range(len(ctx.op.inputs["X"]))]
    if len(xs) < 2:
        raise ctx.error(f"got {len(xs)} input; expected at least 2 sequences to join")
    first = xs[0]
    for x in xs[1:]:
        widths = (prod(first.shape[1:]), prod(x.shape[1:]))
        if all(d >= 0 for d in first.shape[1:] + x.shape[1:]) and widths[0] != widths[1]:
            raise ctx.error(
                f"X '{x.name}' {fmt_shape(x.shape)} has rows of {widths[1]} values; expected {widths[0]}, "
                f"as X '{first.name}' {fmt_shape(first.shape)}"
            )
        if x.dtype != first.dtype:
            raise ctx.error(f"X '{x.name}' is {x.dtype}; expected {first.dtype}, as X '{first.name}'")
    heights = [x.shape[0] for x in xs]
    height = sum(heights) if all(h >= 0 for h in heights) else -1
    ctx.set_output("Out", (height, *first.shape[1:]), first.dtype, lod_level=first.lod_level)


def _concat_sequences(xs, where: str) -> list[LoDTensor]:
    seqs = [_sequences(x, f"{where}: X[{i}]", levels=1) for i, x in enumerate(xs)]
    n = len(seqs[0].offsets) - 1
    for i, s in enumerate(seqs[1:], 1):
        if len(s.offsets) - 1 != n:
            raise LoDError(f"{where}: X[{i}] holds {len(s.offsets) - 1} sequences; expected {n}, as X[0]")
    return seqs


def _interleave(seqs: list[LoDTensor]) -> tuple[np.ndarray, np.ndarray]:
    """Where Out's rows lie in the stacked rows of X[0], X[1], ..., and Out's offsets."""
    bases = np.cumsum([0] + [s.data.shape[0] for s in seqs[:-1]])
    starts = np.stack([base + s.offsets[:-1] for base, s in zip(bases, seqs)], axis=1)
    lengths = np.stack([np.diff(s.offsets) for s in seqs], axis=1)
    return _segment_rows(starts.ravel(), lengths.ravel()), _offsets(lengths.sum(axis=1))


def _rows_at(xp, rows, index: np.ndarray):
    """rows[index] for a host array of row numbers (the LoD's offsets live on the host)."""
    return rows[index] if xp is np else xp.take(rows, xp.asarray(index), axis=0)


def _concat(xp, xs):
    """Sequence i of Out is sequence i of X[0], then sequence i of X[1], ..."""
    seqs = _concat_sequences(xs, "sequence_concat")
    order, offsets = _interleave(seqs)
    return _tensor(_rows_at(xp, xp.concat([s.data for s in seqs]), order), [offsets])


def _concat_grad(xp, xs, dout):
    seqs = _concat_sequences(xs, "sequence_concat_grad")
    order, _ = _interleave(seqs)
    stacked = _rows_at(xp, strip(dout), np.argsort(order))  # order is a permutation: gather by its inverse
    return [s.with_data(part) for s, part in zip(seqs, split(xp, stacked, [s.data.shape[0] for s in seqs], 0))]


register_op(
    "sequence_concat",
    inputs=("X*",),
    outputs=("Out",),
    infer_shape=_concat_infer,
    grad=make_grad_op(inputs=("X", "Out@GRAD"), outputs=("X@GRAD",)),
    kernel=_concat,
    takes_lod=True,
)
register_op(
    "sequence_concat_grad",
    inputs=("X*", "Out@GRAD"),
    outputs=("X@GRAD*",),
    kernel=_concat_grad,
    takes_lod=True,
)

# -- sequence_reshape -----------------------------------------------------------------------------


def _reshape_infer(ctx: InferContext) -> None:
    x = _sequence_var(ctx, "X")
    ctx.check_rank("X", (2,))
    new_dim = ctx.attr("new_dim")
    if new_dim <= 0:
        raise ctx.error(f"new_dim {new_dim}; expected a positive row width")
    ctx.set_output("Out", (-1, new_dim), x.dtype, lod_level=x.lod_level)


def _reshape(xp, x, *, new_dim):
    """Each sequence's values re-cut into rows of width new_dim: length * width / new_dim rows."""
    seq = _sequences(x, "sequence_reshape: X", levels=1)
    width = seq.data.shape[1]
    values = seq.offsets * width
    bad = np.flatnonzero(np.diff(values) % new_dim)
    if bad.size:
        i = int(bad[0])
        raise LoDError(
            f"sequence_reshape: sequence {i} holds {int(values[i + 1] - values[i])} values "
            f"({int(seq.offsets[i + 1] - seq.offsets[i])} row(s) of width {width}); expected a multiple of "
            f"new_dim {new_dim}"
        )
    return _tensor(reshape(xp, seq.data, (-1, new_dim)), [values // new_dim])


def _reshape_grad(xp, x, dout, *, new_dim):
    seq = _sequences(x, "sequence_reshape_grad: X", levels=1)
    return seq.with_data(reshape(xp, strip(dout), seq.data.shape))


register_op(
    "sequence_reshape",
    inputs=("X",),
    outputs=("Out",),
    attrs={"new_dim": 0},
    infer_shape=_reshape_infer,
    grad=make_grad_op(inputs=("X", "Out@GRAD"), outputs=("X@GRAD",)),
    kernel=_reshape,
    takes_lod=True,
)
register_op(
    "sequence_reshape_grad",
    inputs=("X", "Out@GRAD"),
    outputs=("X@GRAD",),
    attrs={"new_dim": 0},
    kernel=_reshape_grad,
    takes_lod=True,
)

# -- sequence_expand ------------------------------------------------------------------------------


def _expand_infer(ctx: InferContext) -> None:
    x, y = ctx.input_var("X"), _sequence_var(ctx, "Y")
    if len(x.shape) < 2:
        raise ctx.error(f"X '{x.name}' {fmt_shape(x.shape)}: expected rank 2 or more")
    ref_level = ctx.attr("ref_level")
    if not -1 <= ref_level < y.lod_level:
        raise ctx.error(
            f"ref_level {ref_level} is out of range; expected -1 or a level of Y '{y.name}' below its "
            f"lod_level {y.lod_level}"
        )
    ctx.set_output("Out", (-1, *x.shape[1:]), x.dtype, lod_level=x.lod_level)


def _expand_plan(x, y, ref_level: int, where: str):
    """The rows of X that make Out, and Out's offsets (None when X carries no LoD): sequence i of X
    (row i, without LoD) repeated as many times as Y's ref_level sequence i is long."""
    ys = _sequences(y, f"{where}: Y")
    level = len(ys.levels) - 1 if ref_level == -1 else ref_level
    if not 0 <= level < len(ys.levels):
        raise LoDError(f"{where}: ref_level {ref_level} is out of range; Y has {len(ys.levels)} LoD level(s)")
    repeats = np.diff(ys.levels[level])
    if isinstance(x, LoDTensor) and x.levels:
        if len(x.levels) > 1:
            raise LoDError(f"{where}: X has {len(x.levels)} LoD levels; expected at most 1")
        if len(x.offsets) - 1 != len(repeats):
            raise LoDError(
                f"{where}: X holds {len(x.offsets) - 1} sequences; expected {len(repeats)}, as level {level} of Y"
            )
        source = np.repeat(np.arange(len(repeats)), repeats)
        lengths = np.diff(x.offsets)[source]
        return _segment_rows(x.offsets[:-1][source], lengths), _offsets(lengths)
    rows = strip(x).shape[0]
    if rows != len(repeats):
        raise LoDError(
            f"{where}: X carries no LoD, so it needs one row per sequence of level {level} of Y; "
            f"expected {len(repeats)} rows, got {rows}"
        )
    return np.repeat(np.arange(rows), repeats), None


def _expand(xp, x, y, *, ref_level):
    index, offsets = _expand_plan(x, y, ref_level, "sequence_expand")
    out = _rows_at(xp, strip(x), index)
    return out if offsets is None else _tensor(out, [offsets])


def _expand_grad(xp, x, y, dout, *, ref_level):
    """X@GRAD sums the gradients of every repeat of a row back onto it."""
    index, _ = _expand_plan(x, y, ref_level, "sequence_expand_grad")
    rows = strip(x)
    dx = xp.zeros(rows.shape, dtype=dout.dtype)
    xp.add.at(dx, index, strip(dout))
    return x.with_data(dx) if isinstance(x, LoDTensor) else dx


register_op(
    "sequence_expand",
    inputs=("X", "Y"),
    outputs=("Out",),
    attrs={"ref_level": -1},
    infer_shape=_expand_infer,
    grad=make_grad_op(inputs=("X", "Y", "Out@GRAD"), outputs=("X@GRAD",)),
    kernel=_expand,
    takes_lod=True,
)
register_op(
    "sequence_expand_grad",
    inputs=("X", "Y", "Out@GRAD"),
    outputs=("X@GRAD",),
    attrs={"ref_level": -1},
    kernel=_expand_grad,
    takes_lod=True,
)
