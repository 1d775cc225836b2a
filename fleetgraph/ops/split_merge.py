"""`split_lod_tensor` and `merge_lod_tensor` (Paddle's ops under IfElse): the rows, or the
sequences at a LoD level, that a bool mask marks go to one output and the rest to the other; merge
puts two such parts back in the original order. Each is the other's gradient."""

from __future__ import annotations

import numpy as np

from ..ir import InferContext, register_op
from ..ir.errors import fmt_shape
from ._xp import host
from .lod_tensor import LoDError, LoDTensor, strip


def _units(x, level: int) -> tuple[int, list[np.ndarray]]:
    """How many units the mask selects among (rows, or sequences at `level`), and the LoD levels
    from `level` down (empty for rows)."""
    if not isinstance(x, LoDTensor) or not x.levels:
        if level != 0:
            raise LoDError(f"level {level}: X has no LoD, so only level 0 (its rows) can be split")
        return int(strip(x).shape[0]), []
    if not 0 <= level < len(x.levels):
        raise LoDError(f"level {level}: X has {len(x.levels)} LoD levels")
    levels = list(x.levels[level:])
    return len(levels[0]) - 1, levels


def _select(levels: list[np.ndarray], picked: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """The row indices of the picked units, in order, and the LoD levels they keep."""
    if not levels:
        return picked, []
    out_levels, units = [], picked
    for offsets in levels:
        lengths = offsets[units + 1] - offsets[units]
        out_levels.append(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64))
        units = np.concatenate([np.arange(offsets[u], offsets[u + 1]) for u in units]).astype(np.int64)
        units = units if units.size else np.zeros(0, np.int64)
    return units, out_levels


def _mask(mask, units: int) -> np.ndarray:
    m = host(mask).reshape(-1).astype(bool)
    if m.shape[0] != units:
        raise LoDError(f"Mask holds {m.shape[0]} values for {units} rows or sequences of X")
    return m


def _part(xp, x, rows: np.ndarray, levels: list[np.ndarray]):
    data = xp.take(strip(x), xp.asarray(rows, dtype=xp.int64), axis=0)
    return LoDTensor(data, levels) if levels else data


def _split(xp, x, mask, *, level):
    units, levels = _units(x, level)
    m = _mask(mask, units)
    true_rows, true_levels = _select(levels, np.flatnonzero(m))
    false_rows, false_levels = _select(levels, np.flatnonzero(~m))
    return _part(xp, x, true_rows, true_levels), _part(xp, x, false_rows, false_levels)


def _merge(xp, x, mask, in_true, in_false, *, level):
    units, levels = _units(x, level)
    m = _mask(mask, units)
    true_rows, _ = _select(levels, np.flatnonzero(m))
    false_rows, _ = _select(levels, np.flatnonzero(~m))
    order = np.empty(len(true_rows) + len(false_rows), dtype=np.int64)  # where each part's row goes
    order[true_rows] = np.arange(len(true_rows))
    order[false_rows] = len(true_rows) + np.arange(len(false_rows))
    both = xp.concat([strip(in_true), strip(in_false)], axis=0)
    data = xp.take(both, xp.asarray(order, dtype=xp.int64), axis=0)
    return LoDTensor(data, x.levels) if isinstance(x, LoDTensor) and x.levels else data


def _split_infer(ctx: InferContext) -> None:
    x, mask = ctx.input_var("X"), ctx.input_var("Mask")
    if mask.dtype != "bool":
        raise ctx.error(f"Mask '{mask.name}' is {mask.dtype}; expected bool")
    if len(mask.shape) != 2 or mask.shape[1] != 1:
        raise ctx.error(f"Mask '{mask.name}' {fmt_shape(mask.shape)}: expected [N, 1]")
    for slot in ("OutTrue", "OutFalse"):
        ctx.set_output(slot, (-1, *x.shape[1:]), x.dtype, lod_level=max(0, x.lod_level - ctx.attr("level")))


def _merge_infer(ctx: InferContext) -> None:
    x, in_true = ctx.input_var("X"), ctx.input_var("InTrue")
    ctx.set_output("Out", (x.shape[0], *in_true.shape[1:]), in_true.dtype, lod_level=x.lod_level)


def _split_grad(op) -> list[dict]:
    return [
        dict(
            type="merge_lod_tensor",
            inputs={
                "X": op.input("X"),
                "Mask": op.input("Mask"),
                "InTrue": [op.output("OutTrue")[0] + "@GRAD"],
                "InFalse": [op.output("OutFalse")[0] + "@GRAD"],
            },
            outputs={"Out": [op.input("X")[0] + "@GRAD"]},
            attrs={"level": op.attrs["level"]},
        )
    ]


def _merge_grad(op) -> list[dict]:
    return [
        dict(
            type="split_lod_tensor",
            inputs={"X": [op.output("Out")[0] + "@GRAD"], "Mask": op.input("Mask")},
            outputs={"OutTrue": [op.input("InTrue")[0] + "@GRAD"], "OutFalse": [op.input("InFalse")[0] + "@GRAD"]},
            attrs={"level": op.attrs["level"]},
        )
    ]


register_op(
    "split_lod_tensor",
    inputs=("X", "Mask"),
    outputs=("OutTrue", "OutFalse"),
    attrs={"level": 0},
    infer_shape=_split_infer,
    grad=_split_grad,
    kernel=_split,
    takes_lod=True,
)
register_op(
    "merge_lod_tensor",
    inputs=("X", "Mask", "InTrue", "InFalse"),
    outputs=("Out",),
    attrs={"level": 0},
    infer_shape=_merge_infer,
    grad=_merge_grad,
    kernel=_merge,
    takes_lod=True,
)
