"""Rank tables, the pieces Paddle's DynamicRNN is built from: lod_rank_table (a batch's sequences
ranked longest first), max_sequence_len, lod_tensor_to_array and array_to_lod_tensor (a batch of
sequences to one array element per time step and back, each the other's gradient),
shrink_rnn_memory (the memory rows of the sequences still running) and reorder_lod_tensor_by_rank."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir import InferContext, register_op
from ..ir.errors import FleetgraphError
from ..ir.program import VarType
from ..ir.registry import GRAD_SUFFIX
from .lod_tensor import LoDError, LoDTensor, strip
from .sequence import _offsets, _tensor
from .tensor_array import _array, _empty_like_rows, _gather, _index, _joined_lod, _sub_lod, _with_levels


@dataclass(frozen=True)
class RankTable:
    """Paddle's LoDRankTable: the sequences of one LoD level ranked by length, longest first (a
    stable sort, so equal lengths keep their order); `coarse_lod` keeps the levels above it, which
    array_to_lod_tensor puts back."""

    coarse_lod: tuple[np.ndarray, ...]
    index: np.ndarray  # the sequences' positions in the batch, in rank order
    length: np.ndarray  # their lengths, in rank order (never increasing)

    @property
    def level(self) -> int:
        return len(self.coarse_lod)

    def items(self) -> list[tuple[int, int]]:
        """(index, length) of each sequence in rank order, as Paddle's table prints them."""
        return list(zip(self.index.tolist(), self.length.tolist()))

    def __array__(self, dtype=None, copy=None):
        """The table as Paddle prints it, one (index, length) row per sequence in rank order: what
        fetching a rank table gives."""
        items = np.stack([self.index, self.length], axis=1) if self.index.size else np.zeros((0, 2), np.int64)
        return items if dtype is None else items.astype(dtype)

    def rows_at(self, step: int) -> int:
        """How many sequences are longer than `step`: the batch size at that time step."""
        return int(np.count_nonzero(self.length > step))


# -- lod_rank_table / max_sequence_len ------------------------------------------------------------


def _rank_table_infer(ctx: InferContext) -> None:
    x, level = ctx.input_var("X"), ctx.attr("level")
    if level < 0 or (x.lod_level and level >= x.lod_level):
        raise ctx.error(f"level {level}: expected 0 <= level < X '{x.name}' lod_level {x.lod_level}")
    ctx.set_output("Out", (), type=VarType.LOD_RANK_TABLE)


def _rank_table(xp, x, *, level):
    """The sequences of X's LoD level `level` ranked by length, longest first."""
    levels = x.levels if isinstance(x, LoDTensor) else ()
    if level >= len(levels):
        raise LoDError(f"lod_rank_table: X has {len(levels)} LoD level(s); level {level} cannot be ranked")
    lengths = np.diff(levels[level])
    order = np.argsort(-lengths, kind="stable")
    return RankTable(tuple(levels[:level]), order.astype(np.int64), lengths[order])


register_op(
    "lod_rank_table",
    inputs=("X",),
    outputs=("Out",),
    attrs={"level": 0},
    infer_shape=_rank_table_infer,
    kernel=_rank_table,
    takes_lod=True,
)


def _table(value, where: str) -> RankTable:
    if not isinstance(value, RankTable):
        raise FleetgraphError(
            f"{where}: expected a rank table (fluid.layers.lod_rank_table), got {type(value).__name__}"
        )
    return value


def _max_len(xp, table):
    """Out = [the longest sequence's length] (int64)."""
    lengths = _table(table, "max_sequence_len: RankTable").length
    return xp.asarray([int(lengths[0]) if lengths.size else 0], dtype=xp.int64)


register_op(
    "max_sequence_len",
    inputs=("RankTable",),
    outputs=("Out",),
    infer_shape=lambda ctx: ctx.set_output("Out", (1,), "int64"),
    kernel=_max_len,
    takes_lod=True,
)

# -- lod_tensor_to_array / array_to_lod_tensor ----------------------------------------------------


def _sequence_levels(x, table: RankTable, where: str) -> tuple:
    """X's LoD; a tensor without one (a gradient) is taken as one row per step of the table's
    sequences, in the batch's order."""
    if isinstance(x, LoDTensor) and x.levels:
        if table.level >= len(x.levels):
            raise LoDError(f"{where}: X has {len(x.levels)} LoD level(s); the rank table ranks level {table.level}")
        return x.levels
    lengths = np.zeros(len(table.index), np.int64)
    lengths[table.index] = table.length
    return (*table.coarse_lod, _offsets(lengths))


def _to_array(xp, x, table):
    """Element t holds step t of every sequence longer than t, in rank order (with the LoD of the
    levels below the ranked one)."""
    table = _table(table, "lod_tensor_to_array: RankTable")
    levels = _sequence_levels(x, table, "lod_tensor_to_array")
    rows, level = strip(x), table.level
    starts = levels[level][table.index]
    out = []
    for t in range(int(table.length[0]) if table.length.size else 0):
        pieces, lods = [], []
        for start in starts[: table.rows_at(t)] + t:
            lengths, a, b = _sub_lod(levels, int(start), int(start) + 1, level + 1)
            pieces.append((0, a, b))
            lods.append(lengths)
        data = _gather(xp, [rows], pieces)
        out.append(
            _with_levels(
                _empty_like_rows(xp, rows) if data is None else data, _joined_lod(lods, len(levels) - level - 1)
            )
        )
    return out


def _to_array_infer(ctx: InferContext) -> None:
    x = ctx.input_var("X")
    ctx.set_output("Out", x.shape, x.dtype, lod_level=max(x.lod_level - 1, 0), type=VarType.LOD_TENSOR_ARRAY)


def _from_array(xp, array, table):
    """The inverse of lod_tensor_to_array: each sequence's steps gathered back from the elements, in
    the batch's order, under the table's coarse levels. An element never written (a gradient nobody
    sent) counts as zeros."""
    table = _table(table, "array_to_lod_tensor: RankTable")
    array = _array(array, "array_to_lod_tensor: X")
    known = [a for a in array if a is not None]
    if not known:
        raise FleetgraphError("array_to_lod_tensor: X holds no element")
    if len(array) < (int(table.length[0]) if table.length.size else 0):
        raise FleetgraphError(
            f"array_to_lod_tensor: X holds {len(array)} elements; the longest sequence has {int(table.length[0])} steps"
        )
    like = strip(known[0])
    elements = [_empty_like_rows(xp, like, table.rows_at(t)) if a is None else strip(a) for t, a in enumerate(array)]
    element_levels = [a.levels if isinstance(a, LoDTensor) else () for a in array]
    pieces, lods = [], []
    for rank in np.argsort(table.index, kind="stable"):
        for t in range(int(table.length[rank])):
            lengths, a, b = (
                _sub_lod(element_levels[t], int(rank), int(rank) + 1, 0) if element_levels[t] else ([], rank, rank + 1)
            )
            pieces.append((t, int(a), int(b)))
            lods.append(lengths)
    data = _gather(xp, elements, pieces)
    lengths = np.zeros(len(table.index), np.int64)
    lengths[table.index] = table.length
    depth = len(element_levels[0]) if element_levels else 0
    levels = (*table.coarse_lod, _offsets(lengths), *_joined_lod(lods, depth))
    return _tensor(_empty_like_rows(xp, like) if data is None else data, levels)


def _from_array_infer(ctx: InferContext) -> None:
    x = ctx.input_var("X")
    ctx.set_output("Out", x.shape, x.dtype, lod_level=x.lod_level + 1)


def _swap_grad(type: str):
    """Paddle's grad makers of lod_tensor_to_array and array_to_lod_tensor, each the other op on the
    output's gradient with the same rank table."""

    def maker(op) -> list[dict]:
        inputs = {"X": [n + GRAD_SUFFIX for n in op.outputs["Out"]], "RankTable": list(op.inputs["RankTable"])}
        return [dict(type=type, inputs=inputs, outputs={"Out": [n + GRAD_SUFFIX for n in op.inputs["X"]]}, attrs={})]

    return maker


register_op(
    "lod_tensor_to_array",
    inputs=("X", "RankTable"),
    outputs=("Out",),
    infer_shape=_to_array_infer,
    grad=_swap_grad("array_to_lod_tensor"),
    kernel=_to_array,
    takes_lod=True,
)
register_op(
    "array_to_lod_tensor",
    inputs=("X", "RankTable"),
    outputs=("Out",),
    infer_shape=_from_array_infer,
    grad=_swap_grad("lod_tensor_to_array"),
    kernel=_from_array,
    takes_lod=True,
)

# -- shrink_rnn_memory ----------------------------------------------------------------------------


def _shrink(xp, x, table, i):
    """Out = the first rows of the memory X: one per sequence still running at step I (the table
    ranks them longest first); with LoD, the rows of those first sequences."""
    rows = _table(table, "shrink_rnn_memory: RankTable").rows_at(_index(xp, i, "shrink_rnn_memory"))
    levels = x.levels if isinstance(x, LoDTensor) else ()
    if levels and len(levels[0]) > rows:
        lengths, _, height = _sub_lod(levels, 0, rows, 0)
        return _tensor(strip(x)[:height, ...], tuple(_offsets(n) for n in lengths))
    return strip(x)[:rows, ...]


def _shrink_grad(xp, x, dout):
    """X@GRAD = Out@GRAD on the rows Out kept, zeros on the rest, under X's LoD."""
    rows, dout = strip(x), strip(dout)
    rest = _empty_like_rows(xp, dout, rows.shape[0] - dout.shape[0])
    grad = xp.concat([dout, rest], axis=0) if rest.shape[0] else dout
    return _with_levels(grad, x.levels if isinstance(x, LoDTensor) else ())


def _shrink_infer(ctx: InferContext) -> None:
    x = ctx.input_var("X")
    ctx.set_output("Out", x.shape, x.dtype, lod_level=x.lod_level)


def _shrink_grad_maker(op) -> list[dict]:
    return [
        dict(
            type="shrink_rnn_memory_grad",
            inputs={"X": list(op.inputs["X"]), "Out@GRAD": [n + GRAD_SUFFIX for n in op.outputs["Out"]]},
            outputs={"X@GRAD": [n + GRAD_SUFFIX for n in op.inputs["X"]]},
            attrs={},
        )
    ]


_shrink_grad_maker.inputs, _shrink_grad_maker.outputs = ("X", "Out@GRAD"), ("X@GRAD",)
register_op(
    "shrink_rnn_memory",
    inputs=("X", "RankTable", "I"),
    outputs=("Out",),
    infer_shape=_shrink_infer,
    grad=_shrink_grad_maker,
    kernel=_shrink,
    takes_lod=True,
)
register_op(
    "shrink_rnn_memory_grad",
    inputs=("X", "Out@GRAD"),
    outputs=("X@GRAD",),
    kernel=_shrink_grad,
    takes_lod=True,
)

# -- reorder_lod_tensor_by_rank -------------------------------------------------------------------


def _segments_of(x) -> tuple[list, list]:
    """Each top-level sequence of X (each row, without LoD) as (start row, end row) and the lengths
    of the levels below it."""
    levels = x.levels if isinstance(x, LoDTensor) else ()
    if not levels:
        n = strip(x).shape[0]
        return [(r, r + 1) for r in range(n)], [[] for _ in range(n)]
    spans, lods = [], []
    for s in range(len(levels[0]) - 1):
        lengths, a, b = _sub_lod(levels, s, s + 1, 0)
        spans.append((a, b))
        lods.append(lengths)
    return spans, lods


def _reordered(xp, x, order: np.ndarray, where: str):
    """X's top-level sequences in `order`, with the LoD they carry."""
    spans, lods = _segments_of(x)
    if order.size and int(order.max()) >= len(spans):
        raise FleetgraphError(f"{where}: the rank table names sequence {int(order.max())}; X has {len(spans)}")
    rows = strip(x)
    data = _gather(xp, [rows], [(0, *spans[k]) for k in order])
    depth = len(x.levels) if isinstance(x, LoDTensor) else 0
    return _with_levels(
        _empty_like_rows(xp, rows) if data is None else data, _joined_lod([lods[k] for k in order], depth)
    )


def _reorder(xp, x, table):
    """Out = X's sequences (rows, without LoD) in the table's rank order."""
    return _reordered(xp, x, _table(table, "reorder_lod_tensor_by_rank: RankTable").index, "reorder_lod_tensor_by_rank")


def _reorder_grad(xp, dout, table):
    """X@GRAD: Out@GRAD's sequences put back in the batch's order."""
    order = np.argsort(_table(table, "reorder_lod_tensor_by_rank_grad: RankTable").index, kind="stable")
    return _reordered(xp, dout, order, "reorder_lod_tensor_by_rank_grad")


def _reorder_grad_maker(op) -> list[dict]:
    """Paddle's slots: the gradient op reads Out@GRAD as X and writes X@GRAD as Out."""
    return [
        dict(
            type="reorder_lod_tensor_by_rank_grad",
            inputs={"X": [n + GRAD_SUFFIX for n in op.outputs["Out"]], "RankTable": list(op.inputs["RankTable"])},
            outputs={"Out": [n + GRAD_SUFFIX for n in op.inputs["X"]]},
            attrs={},
        )
    ]


register_op(
    "reorder_lod_tensor_by_rank",
    inputs=("X", "RankTable"),
    outputs=("Out",),
    infer_shape=_shrink_infer,
    grad=_reorder_grad_maker,
    kernel=_reorder,
    takes_lod=True,
)
register_op(
    "reorder_lod_tensor_by_rank_grad",
    inputs=("X", "RankTable"),
    outputs=("Out",),
    infer_shape=_shrink_infer,
    kernel=_reorder_grad,
    takes_lod=True,
)
