"""Matrix-product ops: mul (fc's product of inputs flattened to 2-D) and matmul (batched, transposed,
scaled by alpha), with their gradients."""

from __future__ import annotations

import numpy as np

from ..ir import InferContext, make_grad_op, register_op
from ..ir.errors import fmt_shape
from ._common import broadcast_dims, prod
from ._xp import reshape
from .math import unbroadcast

# -- mul (fc's matrix product) ------------------------------------------------------------------


def _mul_infer(ctx: InferContext) -> None:
    x, y = ctx.input_var("X"), ctx.input_var("Y")
    xn, yn = ctx.attr("x_num_col_dims"), ctx.attr("y_num_col_dims")
    if not 0 < xn < len(x.shape) or not 0 < yn < len(y.shape):
        raise ctx.error(
            f"x_num_col_dims {xn} / y_num_col_dims {yn} do not fit X '{x.name}' "
            f"{fmt_shape(x.shape)} and Y '{y.name}' {fmt_shape(y.shape)}"
        )
    k_x, k_y = x.shape[xn:], y.shape[:yn]
    if all(d >= 0 for d in k_x + k_y) and prod(k_x) != prod(k_y):
        raise ctx.error(
            f"X '{x.name}' {fmt_shape(x.shape)} flattens to width {prod(k_x)} but Y '{y.name}' "
            f"{fmt_shape(y.shape)} has height {prod(k_y)}; expected them equal"
        )
    ctx.set_output("Out", x.shape[:xn] + y.shape[yn:], x.dtype, lod_level=x.lod_level)


def _flat2d(xp, a, n):
    return reshape(xp, a, (prod(a.shape[:n]), prod(a.shape[n:])))


def _mul_kernel(xp, x, y, *, x_num_col_dims, y_num_col_dims):
    out = _flat2d(xp, x, x_num_col_dims) @ _flat2d(xp, y, y_num_col_dims)
    return reshape(xp, out, x.shape[:x_num_col_dims] + y.shape[y_num_col_dims:])


def _mul_grad_kernel(xp, x, y, dout, *, x_num_col_dims, y_num_col_dims, need):
    x2, y2 = _flat2d(xp, x, x_num_col_dims), _flat2d(xp, y, y_num_col_dims)
    d2 = reshape(xp, dout, (x2.shape[0], y2.shape[1]))
    dx = reshape(xp, d2 @ y2.T, x.shape) if "X@GRAD" in need else None
    dy = reshape(xp, x2.T @ d2, y.shape) if "Y@GRAD" in need else None
    return dx, dy


_MUL_ATTRS = {"x_num_col_dims": 1, "y_num_col_dims": 1}
register_op(
    "mul",
    inputs=("X", "Y"),
    outputs=("Out",),
    attrs=_MUL_ATTRS,
    infer_shape=_mul_infer,
    grad=make_grad_op(inputs=("X", "Y", "Out@GRAD"), outputs=("X@GRAD", "Y@GRAD")),
    kernel=_mul_kernel,
)
register_op(
    "mul_grad",
    inputs=("X", "Y", "Out@GRAD"),
    outputs=("X@GRAD", "Y@GRAD"),
    attrs=_MUL_ATTRS,
    kernel=_mul_grad_kernel,
    wants_outputs=True,
)

# -- matmul ------------------------------------------------------------------------------------


def _matmul_shapes(ctx: InferContext, x, y, tx, ty):
    xs, ys = list(x.shape), list(y.shape)
    if len(xs) == 1:
        xs = [1, xs[0]] if not tx else [xs[0], 1]
    if len(ys) == 1:
        ys = [ys[0], 1] if not ty else [1, ys[0]]
    if tx:
        xs[-2], xs[-1] = xs[-1], xs[-2]
    if ty:
        ys[-2], ys[-1] = ys[-1], ys[-2]
    if xs[-1] >= 0 and ys[-2] >= 0 and xs[-1] != ys[-2]:
        raise ctx.error(
            f"X '{x.name}' {fmt_shape(x.shape)} and Y '{y.name}' {fmt_shape(y.shape)} "
            f"(transpose_X={tx}, transpose_Y={ty}): inner dims {xs[-1]} and {ys[-2]} differ"
        )
    batch = broadcast_dims(ctx, tuple(xs[:-2]), tuple(ys[:-2]), "batch dims")
    out = list(batch) + [xs[-2], ys[-1]]
    if len(x.shape) == 1:
        out.pop(-2)
    if len(y.shape) == 1:
        out.pop(-1)
    return tuple(out) or (1,)


def _matmul_infer(ctx: InferContext) -> None:
    x, y = ctx.input_var("X"), ctx.input_var("Y")
    shape = _matmul_shapes(ctx, x, y, ctx.attr("transpose_X"), ctx.attr("transpose_Y"))
    ctx.set_output("Out", shape, x.dtype, lod_level=x.lod_level)


def _t(xp, a, flag):
    return a.mT if flag and a.ndim >= 2 else a


def _dot(xp, a, b):
    """matmul of 2-D operands: NumPy's dot, without matmul's microseconds of set-up on small ones."""
    return np.dot(a, b) if xp is np else a @ b


def _rows(x, transpose_X: bool, y) -> bool:
    """x [..., M, K] against a 2-D y: its batch dims fold into rows, one 2-D product instead of a
    batched one (nn.Linear on [batch, time, features]; the gradient's sum over the batch goes too)."""
    return x.ndim >= 3 and y.ndim == 2 and not transpose_X


def _matmul_kernel(xp, x, y, *, transpose_X, transpose_Y, alpha):
    if _rows(x, transpose_X, y):
        rows = _matmul_kernel(xp, reshape(xp, x, (-1, x.shape[-1])), y, transpose_X=False,
                              transpose_Y=transpose_Y, alpha=alpha)  # fmt: skip
        return reshape(xp, rows, (*x.shape[:-1], rows.shape[-1]))
    a, b = _t(xp, x, transpose_X), _t(xp, y, transpose_Y)
    # dot is matmul for 2-D operands, without NumPy matmul's microseconds of set-up on small ones
    out = _dot(xp, a, b) if a.ndim == 2 and b.ndim == 2 else xp.matmul(a, b)
    out = out if alpha == 1.0 else out * xp.asarray(alpha, dtype=out.dtype)
    return reshape(xp, out, (1,)) if out.ndim == 0 else out


def _matmul_grad_kernel(xp, x, y, dout, *, transpose_X, transpose_Y, alpha, need):
    if x.ndim == 2 and y.ndim == 2 and dout.ndim == 2:  # no batch dims to broadcast: the short way
        return _matmul_grad_2d(xp, x, y, dout, transpose_X, transpose_Y, alpha, need)
    if _rows(x, transpose_X, y):
        x_rows, g_rows = reshape(xp, x, (-1, x.shape[-1])), reshape(xp, dout, (-1, dout.shape[-1]))
        dx, dy = _matmul_grad_2d(xp, x_rows, y, g_rows, False, transpose_Y, alpha, need)
        return (None if dx is None else reshape(xp, dx, x.shape)), dy
    x2 = reshape(xp, x, (1, -1)) if x.ndim == 1 else x
    y2 = reshape(xp, y, (-1, 1)) if y.ndim == 1 else y
    a, b = _t(xp, x2, transpose_X), _t(xp, y2, transpose_Y)
    # dout may have lost the dims a 1-D input squeezed out; restore [..., M, N]
    g = reshape(xp, dout, np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (a.shape[-2], b.shape[-1]))
    if alpha != 1.0:
        g = g * xp.asarray(alpha, dtype=g.dtype)
    dx = dy = None
    if "X@GRAD" in need:
        da = xp.matmul(g, b.mT)  # d(a)
        da = _t(xp, da, transpose_X)
        dx = reshape(xp, unbroadcast(xp, da, x2.shape), x.shape)
    if "Y@GRAD" in need:
        db = xp.matmul(a.mT, g)
        db = _t(xp, db, transpose_Y)
        dy = reshape(xp, unbroadcast(xp, db, y2.shape), y.shape)
    return dx, dy


def _matmul_grad_2d(xp, x, y, g, tx, ty, alpha, need):
    """out = a . b with a = x or x^T, b = y or y^T: da = g . b^T, db = a^T . g, transposed back."""
    a, b = (x.T if tx else x), (y.T if ty else y)
    if alpha != 1.0:
        g = g * xp.asarray(alpha, dtype=g.dtype)
    dx = dy = None
    if "X@GRAD" in need:
        dx = _dot(xp, b, g.T) if tx else _dot(xp, g, b.T)  # (g . b^T)^T = b . g^T
    if "Y@GRAD" in need:
        dy = _dot(xp, g.T, a) if ty else _dot(xp, a.T, g)
    return dx, dy


_MATMUL_ATTRS = {"transpose_X": False, "transpose_Y": False, "alpha": 1.0}
register_op(
    "matmul",
    inputs=("X", "Y"),
    outputs=("Out",),
    attrs=_MATMUL_ATTRS,
    infer_shape=_matmul_infer,
    grad=make_grad_op(inputs=("X", "Y", "Out@GRAD"), outputs=("X@GRAD", "Y@GRAD")),
    kernel=_matmul_kernel,
)
register_op(
    "matmul_grad",
    inputs=("X", "Y", "Out@GRAD"),
    outputs=("X@GRAD", "Y@GRAD"),
    attrs=_MATMUL_ATTRS,
    kernel=_matmul_grad_kernel,
    wants_outputs=True,
)
