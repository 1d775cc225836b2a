"""Export rules of the creation and product ops (ops/creation.py, ops/products.py): eye and diag as
constants and masks, diag_embed, tril_triu (Trilu), meshgrid (Expand), and dot, bmm, addmm (Gemm),
kron, cross, trace, dist and fsp. A rule that needs a dim known only at run time (kron's, trace's,
diag_embed's, fsp's) refuses it."""

from __future__ import annotations

import numpy as np
from onnx import numpy_helper

from ..ir.dtypes import convert_dtype
from ..ops._common import normalize_axis
from ..ops.products import DEFAULT_DIM, cross_axis
from .emitter import Emitter, UnsupportedOp, exports, onnx_dtype


def _known(e: Emitter, op, name: str, dims=None) -> tuple[int, ...]:
    """The shape of `name` (its dims `dims`), which the rule needs known before the run."""
    shape = e.shape(name)
    if any(shape[d] < 0 for d in (range(len(shape)) if dims is None else dims)):
        raise UnsupportedOp(f"{op.type}: '{e.variable(name)}' {list(shape)} has dims known only at run time")
    return shape


def _moved(rank: int, source: tuple[int, int], dest: tuple[int, int]) -> list[int]:
    """The Transpose perm of moving axes `source` to `dest` (NumPy's moveaxis)."""
    rest = [a for a in range(rank) if a not in source]
    perm = [0] * rank
    for s, d in zip(source, dest):
        perm[d] = s
    free = iter(rest)
    return [perm[i] if i in dest else next(free) for i in range(rank)]


# -- creation ------------------------------------------------------------------------------------


@exports("eye")
def _eye(e: Emitter, op) -> None:
    rows, cols = op.attr("num_rows"), op.attr("num_columns")
    value = np.eye(rows, rows if cols == -1 else cols, dtype=convert_dtype(op.attr("dtype")))
    e.node("Constant", [], e.out(op, "Out"), value=numpy_helper.from_array(value))


@exports("diag")
def _diag(e: Emitter, op) -> None:
    d = e.x(op, "Diagonal")
    (n,) = _known(e, op, d)
    e.node("Mul", [d, e.const(np.eye(n, dtype=e.dtype(d)))], e.out(op, "Out"))


@exports("diag_embed")
def _diag_embed(e: Emitter, op) -> None:
    """x[..., i] times the 0/1 planes E[i] (1 at the offset diagonal's i-th place), summed over i,
    then the planes' axes moved to dim1 and dim2."""
    x = e.x(op, "Input")
    shape = _known(e, op, x, [-1])
    n, offset = shape[-1], op.attr("offset")
    m = n + abs(offset)
    planes = np.zeros((n, m, m), dtype=e.dtype(x))
    i = np.arange(n)
    planes[i, i + max(-offset, 0), i + max(offset, 0)] = 1
    rank = len(shape)
    spread = e.node("Mul", [e.node("Unsqueeze", [x, e.const([rank, rank + 1])]), e.const(planes)])
    summed = e.node("ReduceSum", [spread, e.const([rank - 1])], keepdims=0)
    dims = (normalize_axis(op.attr("dim1"), rank + 1), normalize_axis(op.attr("dim2"), rank + 1))
    e.node("Transpose", [summed], e.out(op, "Out"), perm=_moved(rank + 1, (rank - 1, rank), dims))


@exports("tril_triu")
def _tril_triu(e: Emitter, op) -> None:
    k = e.const(np.array(op.attr("diagonal"), dtype=np.int64))
    e.node("Trilu", [e.x(op, "X"), k], e.out(op, "Out"), upper=int(not op.attr("lower")))


@exports("meshgrid")
def _meshgrid(e: Emitter, op) -> None:
    xs = e.xs(op, "X")
    lengths = e.node("Concat", [e.node("Shape", [e.node("Reshape", [x, e.const([-1])])]) for x in xs], axis=0)
    rank = len(xs)
    for i, (x, out) in enumerate(zip(xs, op.output("Out"))):
        column = e.node("Reshape", [x, e.const([-1 if j == i else 1 for j in range(rank)])])
        e.node("Expand", [column, lengths], out)


# -- products ------------------------------------------------------------------------------------


@exports("dot")
def _dot(e: Emitter, op) -> None:
    product = e.node("Mul", [e.x(op, "X"), e.x(op, "Y")])
    e.node("ReduceSum", [product, e.const([-1])], e.out(op, "Out"), keepdims=1)


@exports("bmm")
def _bmm(e: Emitter, op) -> None:
    e.node("MatMul", [e.x(op, "X"), e.x(op, "Y")], e.out(op, "Out"))


@exports("addmm")
def _addmm(e: Emitter, op) -> None:
    inputs = [e.x(op, "X"), e.x(op, "Y"), e.x(op, "Input")]
    e.node("Gemm", inputs, e.out(op, "Out"), alpha=float(op.attr("Alpha")), beta=float(op.attr("Beta")))


@exports("kron")
def _kron(e: Emitter, op) -> None:
    """x as [a0, 1, a1, 1, ...] times y as [1, b0, 1, b1, ...], reshaped to [a0 b0, a1 b1, ...]."""
    x, y = e.x(op, "X"), e.x(op, "Y")
    xs, ys = _known(e, op, x), _known(e, op, y)
    rank = max(len(xs), len(ys))
    xs, ys = (1,) * (rank - len(xs)) + xs, (1,) * (rank - len(ys)) + ys
    xi = e.node("Reshape", [x, e.const([d for a in xs for d in (a, 1)])])
    yi = e.node("Reshape", [y, e.const([d for b in ys for d in (1, b)])])
    e.node("Reshape", [e.node("Mul", [xi, yi]), e.const([a * b for a, b in zip(xs, ys)])], e.out(op, "Out"))


@exports("cross")
def _cross(e: Emitter, op) -> None:
    x, y = e.x(op, "X"), e.x(op, "Y")
    shape = e.shape(x)
    try:
        axis = cross_axis(shape, op.attr("dim"))
    except ValueError as err:
        raise UnsupportedOp(str(err)) from None
    if op.attr("dim") == DEFAULT_DIM and any(d < 0 for d in shape[:axis]):
        raise UnsupportedOp(f"cross: no dim given, and a dim of X {list(shape)} before axis {axis} may be 3 when run")
    a = e.node("Split", [x], 3, axis=axis, num_outputs=3)
    b = e.node("Split", [y], 3, axis=axis, num_outputs=3)
    parts = [
        e.node("Sub", [e.node("Mul", [a[i], b[j]]), e.node("Mul", [a[j], b[i]])]) for i, j in ((1, 2), (2, 0), (0, 1))
    ]
    e.node("Concat", parts, e.out(op, "Out"), axis=axis)


@exports("trace")
def _trace(e: Emitter, op) -> None:
    x = e.x(op, "Input")
    shape = e.shape(x)
    rank = len(shape)
    a, b = normalize_axis(op.attr("dim1"), rank), normalize_axis(op.attr("dim2"), rank)
    _known(e, op, x, [a, b])
    mask = np.eye(shape[a], shape[b], k=op.attr("offset"), dtype=e.dtype(x))
    moved = e.node("Transpose", [x], perm=_moved(rank, (a, b), (rank - 2, rank - 1)))
    summed = e.node("ReduceSum", [e.node("Mul", [moved, e.const(mask)]), e.const([-2, -1])], keepdims=0)
    if rank == 2:
        e.node("Reshape", [summed, e.const([1])], e.out(op, "Out"))
    else:
        e.node("Identity", [summed], e.out(op, "Out"))


@exports("dist")
def _dist(e: Emitter, op) -> None:
    x = e.x(op, "X")
    d = e.node("Abs", [e.node("Sub", [x, e.x(op, "Y")])])
    p = op.attr("p")
    if p == 0:
        nonzero = e.node("Cast", [e.node("Not", [e.node("Equal", [d, e.scalar(0, x)])])], to=onnx_dtype(e.dtype(x)))
        norm = e.node("ReduceSum", [nonzero], keepdims=0)
    elif p in (float("inf"), float("-inf")):
        norm = e.node("ReduceMax" if p > 0 else "ReduceMin", [d], keepdims=0)
    else:
        powered = e.node("ReduceSum", [e.node("Pow", [d, e.scalar(p, x)])], keepdims=0)
        norm = e.node("Pow", [powered, e.scalar(1.0 / p, x)])
    e.node("Reshape", [norm, e.const([1])], e.out(op, "Out"))


@exports("fsp")
def _fsp(e: Emitter, op) -> None:
    x, y = e.x(op, "X"), e.x(op, "Y")
    shape = _known(e, op, x, [2, 3])
    xf = e.node("Reshape", [x, e.const([0, 0, -1])])
    yt = e.node("Transpose", [e.node("Reshape", [y, e.const([0, 0, -1])])], perm=[0, 2, 1])
    e.node("Mul", [e.node("MatMul", [xf, yt]), e.scalar(1.0 / (shape[2] * shape[3]), x)], e.out(op, "Out"))
