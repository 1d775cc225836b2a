"""Tensor creation (Paddle 1.8's op types, slots and attrs): linspace, eye, diag, diag_embed,
tril_triu and meshgrid, with gradients where Paddle has them. The random ones are in
ops/creation_random.py, imported here."""

from __future__ import annotations

from ..ir import InferContext, make_grad_op, register_op
from ..ir.dtypes import convert_dtype
from ..ir.errors import fmt_shape
from ._common import normalize_axis, same_shape
from ._xp import dtype_of, reshape, total

# -- linspace: num evenly spaced values from Start to Stop ------------------------------------------


def _linspace_infer(ctx: InferContext) -> None:
    start = ctx.input_var("Start")
    if start.dtype not in ("float32", "float64"):
        raise ctx.error(f"Start '{start.name}' of dtype {start.dtype}; expected float32 or float64")
    if ctx.input_var("Num").dtype != "int32":
        raise ctx.error(f"Num '{ctx.input_var('Num').name}' of dtype {ctx.input_var('Num').dtype}; expected int32")
    ctx.set_output("Out", (-1,), start.dtype)


def _linspace(xp, start, stop, num):
    """As Paddle's kernel: start, then step = (stop - start) / (num - 1) added one at a time in the
    output's dtype (a running sum, so float32 rounds as Paddle's does)."""
    count = int(reshape(xp, num, (-1,))[0])
    if count <= 0:
        raise ValueError(f"linspace: num {count}; expected a number larger than 0")
    start, stop = reshape(xp, start, (1,)), reshape(xp, stop, (1,))
    if count == 1:
        return start
    step = (stop - start) / (count - 1)
    return xp.cumulative_sum(xp.concat([start, xp.broadcast_to(step, (count - 1,))]), dtype=start.dtype)


register_op(
    "linspace", inputs=("Start", "Stop", "Num"), outputs=("Out",), infer_shape=_linspace_infer, kernel=_linspace
)

# -- eye, diag: identity and diagonal matrices ----------------------------------------------------


def _eye_infer(ctx: InferContext) -> None:
    rows, cols = ctx.attr("num_rows"), ctx.attr("num_columns")
    if rows < 0:
        raise ctx.error(f"num_rows {rows}; expected a non-negative int")
    ctx.set_output("Out", (rows, rows if cols == -1 else cols), convert_dtype(ctx.attr("dtype")))


register_op(
    "eye",
    outputs=("Out",),
    attrs={"dtype": "float32", "num_rows": 0, "num_columns": -1},
    infer_shape=_eye_infer,
    kernel=lambda xp, *, dtype, num_rows, num_columns: xp.eye(
        num_rows, num_rows if num_columns == -1 else num_columns, dtype=dtype_of(xp, convert_dtype(dtype))
    ),
)


def _diag_infer(ctx: InferContext) -> None:
    d = ctx.check_rank("Diagonal", (1,))
    ctx.set_output("Out", (d[0], d[0]), ctx.input_var("Diagonal").dtype)


register_op(
    "diag",
    inputs=("Diagonal",),
    outputs=("Out",),
    infer_shape=_diag_infer,
    kernel=lambda xp, d: xp.eye(d.shape[0], dtype=d.dtype) * d,
)

# -- diag_embed: the last axis written on the offset diagonal of the planes (dim1, dim2) ------------


def _embed_axes(rank: int, dim1: int, dim2: int) -> tuple[int, int]:
    """dim1 and dim2 as axes of the output, whose rank is the input's plus one."""
    return normalize_axis(dim1, rank + 1), normalize_axis(dim2, rank + 1)


def _diag_embed_infer(ctx: InferContext) -> None:
    x = ctx.input_var("Input")
    rank, dim1, dim2 = len(x.shape), ctx.attr("dim1"), ctx.attr("dim2")
    if rank < 1 or abs(dim1) > rank or abs(dim2) > rank:
        raise ctx.error(f"dim1 {dim1}, dim2 {dim2}: expected axes in [{-rank - 1}, {rank}] of the output")
    a, b = _embed_axes(rank, dim1, dim2)
    if a == b:
        raise ctx.error(f"dim1 {dim1} and dim2 {dim2} name one axis; expected two")
    n = x.shape[-1] + abs(ctx.attr("offset")) if x.shape[-1] >= 0 else -1
    sizes = list(x.shape[:-1])
    sizes.insert(min(a, b), n)
    sizes.insert(max(a, b), n)
    ctx.set_output("Out", sizes, x.dtype)


def _diag_embed(xp, x, *, offset, dim1, dim2):
    """Each row of x's last axis as the matrix holding it on its offset diagonal, made without a
    scatter: rows of [x_i, m zeros] laid end to end put x_i every m + 1 places, which is the
    diagonal of an m x m matrix once the zeros of the first `start` places lead."""
    lead, n = x.shape[:-1], x.shape[-1]
    m = n + abs(offset)
    start = offset if offset >= 0 else -offset * m
    rows = xp.concat([x[..., None], xp.zeros((*lead, n, m), dtype=x.dtype)], axis=-1)
    flat = reshape(xp, rows, (*lead, n * (m + 1)))
    tail = max(m * m - start - n * (m + 1), 0)
    flat = xp.concat([xp.zeros((*lead, start), dtype=x.dtype), flat, xp.zeros((*lead, tail), dtype=x.dtype)], axis=-1)
    planes = reshape(xp, flat[..., : m * m], (*lead, m, m))
    return xp.moveaxis(planes, (-2, -1), _embed_axes(x.ndim, dim1, dim2))


register_op(
    "diag_embed",
    inputs=("Input",),
    outputs=("Out",),
    attrs={"offset": 0, "dim1": -2, "dim2": -1},
    infer_shape=_diag_embed_infer,
    kernel=_diag_embed,
)

# -- tril_triu: the lower or upper triangle of the last two axes ---------------------------------------


def _tril_triu_infer(ctx: InferContext) -> None:
    x = ctx.input_var("X")
    if len(x.shape) < 2:
        raise ctx.error(f"X '{x.name}' {fmt_shape(x.shape)}: expected at least 2 dims")
    ctx.set_output("Out", x.shape, x.dtype, lod_level=x.lod_level)


def _triangle(xp, x, *, diagonal, lower):
    """x where column - row <= diagonal (lower) or >= diagonal (upper), zero elsewhere."""
    rows, cols = x.shape[-2], x.shape[-1]
    offset = xp.arange(cols)[None, :] - xp.arange(rows)[:, None]
    keep = offset <= diagonal if lower else offset >= diagonal
    return xp.where(keep, x, xp.zeros_like(x))


_TRIANGLE_ATTRS = {"diagonal": 0, "lower": False}
register_op(
    "tril_triu",
    inputs=("X",),
    outputs=("Out",),
    attrs=_TRIANGLE_ATTRS,
    infer_shape=_tril_triu_infer,
    grad=make_grad_op(inputs=("Out@GRAD",), outputs=("X@GRAD",)),
    kernel=_triangle,
)
register_op(
    "tril_triu_grad",
    inputs=("Out@GRAD",),
    outputs=("X@GRAD",),
    attrs=_TRIANGLE_ATTRS,
    infer_shape=same_shape("Out@GRAD", "X@GRAD"),
    kernel=_triangle,
)


# -- meshgrid: N vectors as N grids of their lengths' shape (ij indexing) -----------------------------


def _meshgrid_infer(ctx: InferContext) -> None:
    xs = ctx.input_vars("X")
    for x in xs:
        if len(x.shape) > 1:
            raise ctx.error(f"X '{x.name}' {fmt_shape(x.shape)}: expected 1-D inputs")
    shape = tuple(x.shape[0] if x.shape else 1 for x in xs)
    for i, x in enumerate(xs):
        ctx.set_output("Out", shape, x.dtype, i=i)


def _grid_shape(xs) -> tuple[int, ...]:
    return tuple(x.shape[0] if x.ndim else 1 for x in xs)


def _meshgrid(xp, xs):
    shape = _grid_shape(xs)
    return [
        xp.broadcast_to(reshape(xp, x, tuple(-1 if j == i else 1 for j in range(len(xs)))), shape)
        for i, x in enumerate(xs)
    ]


def _meshgrid_grad(xp, xs, douts):
    """Each input's gradient: its grid's gradient summed over the other axes."""
    rank = len(xs)
    return [
        reshape(xp, total(xp, g, axis=tuple(j for j in range(rank) if j != i)), x.shape)
        for i, (x, g) in enumerate(zip(xs, douts))
    ]


register_op(
    "meshgrid",
    inputs=("X*",),
    outputs=("Out*",),
    infer_shape=_meshgrid_infer,
    grad=make_grad_op(inputs=("X", "Out@GRAD"), outputs=("X@GRAD",)),
    kernel=_meshgrid,
)
register_op(
    "meshgrid_grad",
    inputs=("X*", "Out@GRAD*"),
    outputs=("X@GRAD*",),
    kernel=_meshgrid_grad,
)

from . import creation_random  # noqa: E402,F401  (registers the random creation ops)
