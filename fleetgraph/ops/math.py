"""Arithmetic ops: elementwise with Paddle's `axis` broadcasting, mul/matmul, scale, sum and reductions."""

from __future__ import annotations

import numpy as np

from ..ir import InferContext, make_grad_op, register_op
from ..ir.errors import fmt_shape
from ._common import aligned_y_shape, broadcast_dims, normalize_axis, prod, same_shape
from ._xp import mask, reshape, scalar, total
from .selected_rows import SelectedRows, merge_dense
from .sparse_table import RowFunction, SparseTable

# -- elementwise --------------------------------------------------------------------------------


def _elementwise_infer(ctx: InferContext) -> None:
    x, y = ctx.input_var("X"), ctx.input_var("Y")
    axis = ctx.attr("axis")
    if axis == -1 or len(y.shape) > len(x.shape):
        shape = broadcast_dims(ctx, x.shape, y.shape, f"Y '{y.name}' and X '{x.name}'")
    else:
        if axis < -1 or axis + _trimmed_rank(y.shape) > len(x.shape):
            raise ctx.error(
                f"axis {axis}: Y '{y.name}' {fmt_shape(y.shape)} does not fit X '{x.name}' "
                f"{fmt_shape(x.shape)} from that axis"
            )
        aligned = aligned_y_shape(len(x.shape), y.shape, axis)
        shape = broadcast_dims(ctx, x.shape, aligned, f"Y '{y.name}' at axis {axis} and X '{x.name}'")
    if x.dtype != y.dtype:
        raise ctx.error(f"X '{x.name}' is {x.dtype} but Y '{y.name}' is {y.dtype}; expected the same dtype")
    sparse = x.type == "selected_rows"  # a sparse gradient times a scale stays sparse (Paddle's InferVarType)
    ctx.set_output("Out", shape, x.dtype, lod_level=x.lod_level, type="selected_rows" if sparse else "dense_tensor")


def _trimmed_rank(shape) -> int:
    n = len(shape)
    while n > 1 and shape[n - 1] == 1:
        n -= 1
    return n


def _align(xp, x, y, axis):
    """Y reshaped so NumPy broadcasting does what Paddle's axis asks."""
    if axis == -1 or y.ndim > x.ndim:
        return y
    return reshape(xp, y, aligned_y_shape(x.ndim, y.shape, axis))


def unbroadcast(xp, grad, shape):
    """Sum a gradient over the dims broadcasting added, back to `shape`."""
    if grad.shape == tuple(shape):
        return grad
    lead = grad.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(i + lead for i, d in enumerate(shape) if d == 1 and grad.shape[i + lead] != 1)
    return reshape(xp, total(xp, grad, axes, keepdims=True) if axes else grad, shape)


def _grad_y(xp, g, x, y, axis):
    """Reduce a gradient with X's (broadcast) shape to Y's shape."""
    aligned = _align(xp, x, y, axis)
    return reshape(xp, unbroadcast(xp, g, aligned.shape), y.shape)


def _add(xp, x, y, *, axis):
    # axis -1 (NumPy's broadcasting) is tested inline: an eager call pays for every Python call made
    return x + (y if axis == -1 else _align(xp, x, y, axis))


def _sub(xp, x, y, *, axis):
    return x - (y if axis == -1 else _align(xp, x, y, axis))


def _mul(xp, x, y, *, axis):
    if isinstance(x, SelectedRows):  # a sparse gradient scaled (global-norm clipping): its rows only
        if y.size != 1:
            raise TypeError(f"a SelectedRows X takes a one-element Y (a scale); got Y of shape {tuple(y.shape)}")
        return SelectedRows(x.rows, x.value * y.reshape(()), x.height)
    return x * (y if axis == -1 else _align(xp, x, y, axis))


def _div(xp, x, y, *, axis):
    return x / (y if axis == -1 else _align(xp, x, y, axis))


def _add_grad(xp, x, y, dout, *, axis, need):
    return (
        unbroadcast(xp, dout, x.shape) if "X@GRAD" in need else None,
        _grad_y(xp, dout, x, y, axis) if "Y@GRAD" in need else None,
    )


def _sub_grad(xp, x, y, dout, *, axis, need):
    return (
        unbroadcast(xp, dout, x.shape) if "X@GRAD" in need else None,
        -_grad_y(xp, dout, x, y, axis) if "Y@GRAD" in need else None,
    )


def _mul_grad(xp, x, y, dout, *, axis, need):
    ya = _align(xp, x, y, axis)
    return (
        unbroadcast(xp, dout * ya, x.shape) if "X@GRAD" in need else None,
        _grad_y(xp, dout * x, x, y, axis) if "Y@GRAD" in need else None,
    )


def _div_grad(xp, x, y, dout, *, axis, need):
    ya = _align(xp, x, y, axis)
    dx = unbroadcast(xp, dout / ya, x.shape) if "X@GRAD" in need else None
    dy = _grad_y(xp, -dout * x / (ya * ya), x, y, axis) if "Y@GRAD" in need else None
    return dx, dy


def _pow(xp, x, y, *, axis):
    return x ** _align(xp, x, y, axis)


def _pow_grad(xp, x, y, dout, *, axis, need):
    ya = _align(xp, x, y, axis)
    dx = unbroadcast(xp, dout * ya * x ** (ya - 1), x.shape) if "X@GRAD" in need else None
    dy = _grad_y(xp, dout * x**ya * xp.log(x), x, y, axis) if "Y@GRAD" in need else None
    return dx, dy


def _min(xp, x, y, *, axis):
    return xp.minimum(x, _align(xp, x, y, axis))


def _max(xp, x, y, *, axis):
    return xp.maximum(x, _align(xp, x, y, axis))


def _pick_grad(take_x):
    """The gradient of min/max goes to the input chosen (to Y on a tie, as Paddle's kernels)."""

    def grad(xp, x, y, dout, *, axis, need):
        ya = _align(xp, x, y, axis)
        to_x = take_x(x, ya)
        dx = unbroadcast(xp, dout * mask(xp, to_x, dout), x.shape) if "X@GRAD" in need else None
        dy = _grad_y(xp, dout * mask(xp, ~to_x, dout), x, y, axis) if "Y@GRAD" in need else None
        return dx, dy

    return grad


for _name, _fwd, _bwd in (
    ("add", _add, _add_grad),
    ("sub", _sub, _sub_grad),
    ("mul", _mul, _mul_grad),
    ("div", _div, _div_grad),
    ("pow", _pow, _pow_grad),
    ("min", _min, _pick_grad(lambda x, y: x < y)),
    ("max", _max, _pick_grad(lambda x, y: x > y)),
):
    register_op(
        f"elementwise_{_name}",
        inputs=("X", "Y"),
        outputs=("Out",),
        attrs={"axis": -1},
        infer_shape=_elementwise_infer,
        grad=make_grad_op(inputs=("X", "Y", "Out@GRAD"), outputs=("X@GRAD", "Y@GRAD")),
        kernel=_fwd,
    )
    register_op(
        f"elementwise_{_name}_grad",
        inputs=("X", "Y", "Out@GRAD"),
        outputs=("X@GRAD", "Y@GRAD"),
        attrs={"axis": -1},
        kernel=_bwd,
        wants_outputs=True,
    )

# -- comparisons and the step counter --------------------------------------------------------------------


def _compare_infer(ctx: InferContext) -> None:
    x, y = ctx.input_var("X"), ctx.input_var("Y")
    ctx.set_output("Out", broadcast_dims(ctx, x.shape, y.shape, f"Y '{y.name}' and X '{x.name}'"), "bool")


for _name, _fn in (
    ("less_than", "less"),
    ("less_equal", "less_equal"),
    ("greater_than", "greater"),
    ("greater_equal", "greater_equal"),
    ("equal", "equal"),
    ("not_equal", "not_equal"),
):
    register_op(
        _name,
        inputs=("X", "Y"),
        outputs=("Out",),
        attrs={"axis": -1, "force_cpu": False},
        infer_shape=_compare_infer,
        kernel=lambda xp, x, y, *, axis, force_cpu, fn=_fn: getattr(xp, fn)(x, _align(xp, x, y, axis)),
    )


def _increment_infer(ctx: InferContext) -> None:
    x = ctx.input_var("X")
    if prod(x.shape) != 1:
        raise ctx.error(f"X '{x.name}' {fmt_shape(x.shape)}: expected one element (a counter)")
    ctx.set_output("Out", x.shape, x.dtype)


register_op(
    "increment",
    inputs=("X",),
    outputs=("Out",),
    attrs={"step": 1.0},
    infer_shape=_increment_infer,
    kernel=lambda xp, x, *, step: x + scalar(xp, x, step),
)

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


def _matmul_kernel(xp, x, y, *, transpose_X, transpose_Y, alpha):
    a, b = _t(xp, x, transpose_X), _t(xp, y, transpose_Y)
    # dot is matmul for 2-D operands, without NumPy matmul's microseconds of set-up on small ones
    out = _dot(xp, a, b) if a.ndim == 2 and b.ndim == 2 else xp.matmul(a, b)
    out = out if alpha == 1.0 else out * xp.asarray(alpha, dtype=out.dtype)
    return reshape(xp, out, (1,)) if out.ndim == 0 else out


def _matmul_grad_kernel(xp, x, y, dout, *, transpose_X, transpose_Y, alpha, need):
    if x.ndim == 2 and y.ndim == 2 and dout.ndim == 2:  # no batch dims to broadcast: the short way
        return _matmul_grad_2d(xp, x, y, dout, transpose_X, transpose_Y, alpha, need)
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

# -- scale, sum ----------------------------------------------------------------------------------


def _scale_kernel(xp, x, *, scale, bias, bias_after_scale):
    if isinstance(x, _ROWS_OR_TABLES):  # one check for a dense array, the common case
        return _scale_rows(xp, x, scale, bias, bias_after_scale)
    scale = x.dtype.type(scale) if xp is np else scalar(xp, x, scale)  # inline: the hottest kernel eager runs
    if bias == 0.0:
        return x * scale
    bias = scalar(xp, x, bias)
    return x * scale + bias if bias_after_scale else (x + bias) * scale


def _scale_rows(xp, x, scale, bias, bias_after_scale):
    def scaled(v):
        return _scale_kernel(xp, v, scale=scale, bias=bias, bias_after_scale=bias_after_scale)

    if isinstance(x, SelectedRows):  # a sparse gradient scaled on a pserver
        return SelectedRows(x.rows, scaled(x.value), x.height)
    return RowFunction.of(x, scaled)  # weight decay of a table: evaluated at a gradient's rows


_ROWS_OR_TABLES = (SparseTable, RowFunction, SelectedRows)


def _scale_grad_maker(op) -> list[dict]:
    """d(scale*x + b)/dx = scale: the gradient is itself a scale op, as in Paddle."""
    return [
        dict(
            type="scale",
            inputs={"X": [n + "@GRAD" for n in op.output("Out")]},
            outputs={"Out": [n + "@GRAD" for n in op.input("X")]},
            attrs={"scale": op.attr("scale"), "bias": 0.0, "bias_after_scale": True},
        )
    ]


register_op(
    "scale",
    inputs=("X",),
    outputs=("Out",),
    attrs={"scale": 1.0, "bias": 0.0, "bias_after_scale": True},
    infer_shape=same_shape(),
    grad=_scale_grad_maker,
    kernel=_scale_kernel,
)


def _sum_infer(ctx: InferContext) -> None:
    xs = ctx.input_vars("X")
    shape = xs[0].shape
    for v in xs[1:]:
        if len(v.shape) != len(shape) or any(a >= 0 and b >= 0 and a != b for a, b in zip(shape, v.shape)):
            raise ctx.error(
                f"input '{v.name}' {fmt_shape(v.shape)} differs from '{xs[0].name}' "
                f"{fmt_shape(shape)}; expected every input to have the same shape"
            )
    # SelectedRows only when every input is (Paddle's InferVarType): one dense input makes it dense
    sparse = all(v.type == "selected_rows" for v in xs)
    ctx.set_output("Out", shape, xs[0].dtype, type="selected_rows" if sparse else "dense_tensor")


def _sum_kernel(xp, xs):
    if isinstance(xs[0], SparseTable):  # a GEO pserver adds sparse deltas into its table, in place
        table = xs[0]
        for rows in xs[1:]:
            positions = table.positions(rows.rows)  # first: it may grow the table
            xp.add.at(table.values, positions, rows.value)
        return table
    if any(isinstance(x, RowFunction) for x in xs):  # a table's sparse gradient plus its weight decay
        grad = merge_dense(xp, [x for x in xs if not isinstance(x, RowFunction)]).merged(xp)
        for f in (x for x in xs if isinstance(x, RowFunction)):
            grad.value += f.at(grad.rows)
        return grad
    return merge_dense(xp, xs)  # dense arrays and SelectedRows alike


def _sum_grad_maker(op) -> list[dict]:
    g = op.output("Out")[0] + "@GRAD"
    return [
        dict(
            type="scale",
            inputs={"X": [g]},
            outputs={"Out": [n + "@GRAD"]},
            attrs={"scale": 1.0, "bias": 0.0, "bias_after_scale": True},
        )
        for n in op.input("X")
    ]


register_op("sum", inputs=("X*",), outputs=("Out",), infer_shape=_sum_infer, grad=_sum_grad_maker, kernel=_sum_kernel)

# -- reductions ----------------------------------------------------------------------------------


def _reduce_axes(shape_len: int, dim, reduce_all: bool) -> tuple[int, ...]:
    if reduce_all or not dim:
        return tuple(range(shape_len))
    return tuple(sorted(normalize_axis(d, shape_len) for d in dim))


def _reduce_infer(ctx: InferContext) -> None:
    x = ctx.input_var("X")
    dim, keep = ctx.attr("dim"), ctx.attr("keep_dim")
    for d in dim:
        if not -len(x.shape) <= d < max(1, len(x.shape)):
            raise ctx.error(f"dim {d} is out of range for X '{x.name}' {fmt_shape(x.shape)}")
    axes = _reduce_axes(len(x.shape), dim, ctx.attr("reduce_all"))
    if keep:
        shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    else:
        shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    ctx.set_output("Out", shape or (1,), x.dtype)


def _reduced(out, xp):
    return reshape(xp, out, (1,)) if out.ndim == 0 else out


def _reduce_sum(xp, x, *, dim, keep_dim, reduce_all):
    return _reduced(total(xp, x, _reduce_axes(x.ndim, dim, reduce_all), keepdims=keep_dim), xp)


def _reduce_mean(xp, x, *, dim, keep_dim, reduce_all):
    axes = None if reduce_all or not dim else _reduce_axes(x.ndim, dim, reduce_all)
    return _reduced(_mean(xp, x, axes, keep_dim), xp)


def _mean(xp, x, axis, keepdims):
    """x.mean(axis, keepdims) as NumPy 2 computes it for float32/64 (the sum divided by the count in
    x's dtype), without NumPy's Python wrapper, which costs more than the arithmetic on small tensors."""
    if xp is not np:
        return xp.mean(x, axis=axis, keepdims=keepdims)
    if x.dtype.kind != "f" or x.dtype.itemsize < 4:  # ints and float16 accumulate wider: NumPy's rules
        return x.mean(axis=axis, keepdims=keepdims)
    summed = x.sum(axis=axis, keepdims=keepdims)
    return summed / summed.dtype.type(x.size if axis is None else prod(x.shape[a] for a in axis))


def _expand_back(xp, x, dout, dim, reduce_all, mean: bool):
    """dout spread back over x's shape (divided by the count of each sum, for a mean): an array of
    x's shape filled by assignment, which broadcasts in C (xp.broadcast_to costs microseconds)."""
    axes = _reduce_axes(x.ndim, dim, reduce_all)
    g = reshape(xp, dout, tuple(1 if i in axes else d for i, d in enumerate(x.shape)))
    if mean:
        g = g / scalar(xp, x, prod(x.shape[i] for i in axes))
    out = xp.empty(x.shape, dtype=g.dtype)
    out[...] = g
    return out


def _reduce_sum_grad(xp, x, dout, *, dim, keep_dim, reduce_all):
    return _expand_back(xp, x, dout, dim, reduce_all, mean=False)


def _reduce_mean_grad(xp, x, dout, *, dim, keep_dim, reduce_all):
    return _expand_back(xp, x, dout, dim, reduce_all, mean=True)


_REDUCE_ATTRS = {"dim": [0], "keep_dim": False, "reduce_all": False}
for _name, _fwd, _bwd in (
    ("reduce_sum", _reduce_sum, _reduce_sum_grad),
    ("reduce_mean", _reduce_mean, _reduce_mean_grad),
):
    register_op(
        _name,
        inputs=("X",),
        outputs=("Out",),
        attrs=_REDUCE_ATTRS,
        infer_shape=_reduce_infer,
        grad=make_grad_op(inputs=("X", "Out@GRAD"), outputs=("X@GRAD",)),
        kernel=_fwd,
    )
    register_op(_name + "_grad", inputs=("X", "Out@GRAD"), outputs=("X@GRAD",), attrs=_REDUCE_ATTRS, kernel=_bwd)


def _mean_infer(ctx: InferContext) -> None:
    ctx.set_output("Out", (1,), ctx.input_dtype("X"))


register_op(
    "mean",
    inputs=("X",),
    outputs=("Out",),
    infer_shape=_mean_infer,
    grad=make_grad_op(inputs=("X", "Out@GRAD"), outputs=("X@GRAD",)),
    kernel=lambda xp, x: reshape(xp, _mean(xp, x, None, False), (1,)),
)
register_op(
    "mean_grad",
    inputs=("X", "Out@GRAD"),
    outputs=("X@GRAD",),
    kernel=lambda xp, x, dout: xp.full(x.shape, float(reshape(xp, dout, ()) / x.size), dtype=x.dtype),
)
