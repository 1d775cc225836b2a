"""Export rules of the inference ops among the loss and CTR families: cos_sim (ops/similarity.py),
with Paddle's 1e-8 floor on each squared norm, and cvm (ops/ctr.py), the show/click columns
log-scaled or dropped. The losses themselves are training only (export prunes them)."""

from __future__ import annotations

from ..ops.similarity import _COS_EPS
from .emitter import Emitter, exports


def _rows_and_norm(e: Emitter, v: str, like: str) -> tuple[str, str]:
    """v flattened to [rows, -1] and each row's norm, its squared norm floored at Paddle's 1e-8."""
    rows = e.node("Flatten", [v], axis=1)
    squares = e.node("ReduceSum", [e.node("Mul", [rows, rows]), e.const([1])], keepdims=1)
    return rows, e.node("Sqrt", [e.node("Max", [squares, e.scalar(_COS_EPS, like)])])


@exports("cos_sim")
def _cos_sim(e: Emitter, op) -> None:
    x, y = e.x(op, "X"), e.x(op, "Y")
    xs, x_norm = _rows_and_norm(e, x, x)
    ys, y_norm = _rows_and_norm(e, y, x)
    dot = e.node("ReduceSum", [e.node("Mul", [xs, ys]), e.const([1])], keepdims=1)  # one Y row broadcasts
    e.node("Div", [dot, e.node("Mul", [x_norm, y_norm])], e.out(op, "Out"))
    for slot, norm in (("XNorm", x_norm), ("YNorm", y_norm)):
        if e.has_out(op, slot):
            e.node("Identity", [norm], e.out(op, slot))


def _columns(e: Emitter, x: str, start: int, end: int) -> str:
    return e.node("Slice", [x, e.const([start]), e.const([end]), e.const([1])])


@exports("cvm")
def _cvm(e: Emitter, op) -> None:
    x = e.x(op, "X")
    rest = _columns(e, x, 2, 2**62)
    if not op.attr("use_cvm"):
        e.node("Identity", [rest], e.out(op, "Y"))
        return
    one = e.scalar(1, x)
    show = e.node("Log", [e.node("Add", [_columns(e, x, 0, 1), one])])
    click = e.node("Sub", [e.node("Log", [e.node("Add", [_columns(e, x, 1, 2), one])]), show])
    e.node("Concat", [show, click, rest], e.out(op, "Y"), axis=1)
