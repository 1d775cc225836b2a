"""Arithmetic ops: elementwise with Paddle's `axis` broadcasting, comparisons, increment, scale and sum."""

from __future__ import annotations

import numpy as np

from ..ir import InferContext, make_grad_op, register_op
from ..ir.errors import fmt_shape
from ._common import aligned_y_shape, broadcast_dims, prod, same_shape
from ._xp import is_float, mask, reshape, scalar, total
from .lod_tensor import LoDTensor, strip
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

# -- floordiv, mod: integer arithmetic of Paddle's elementwise family, no gradient ----------------------


def _floordiv(xp, x, y, *, axis):
    """a / b truncated toward zero, as Paddle's kernel (std::trunc), dividing by zero an error."""
    y = _align(xp, x, y, axis)
    if bool(xp.any(y == 0)):
        raise ZeroDivisionError("elementwise_floordiv: Y holds a zero")
    if is_float(xp, x):
        return xp.trunc(x / y)
    return xp.astype(xp.trunc(xp.astype(x, xp.float64) / xp.astype(y, xp.float64)), x.dtype)


def _mod(xp, x, y, *, axis):
    """The remainder with the divisor's sign (Python's %), as Paddle 2.0's kernel."""
    return xp.remainder(x, _align(xp, x, y, axis))


for _name, _fwd in (("floordiv", _floordiv), ("mod", _mod)):
    register_op(
        f"elementwise_{_name}",
        inputs=("X", "Y"),
        outputs=("Out",),
        attrs={"axis": -1},
        infer_shape=_elementwise_infer,
        kernel=_fwd,
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


# -- logical ops: bool in, bool out (Paddle's logical_and/or/xor/not) ----------------------------------


def _logical_infer(ctx: InferContext) -> None:
    x = ctx.input_var("X")
    for slot in ("X", "Y"):
        if ctx.has_input(slot) and ctx.input_var(slot).dtype != "bool":
            v = ctx.input_var(slot)
            raise ctx.error(f"{slot} '{v.name}' is {v.dtype}; expected bool")
    shape = x.shape
    if ctx.has_input("Y"):
        y = ctx.input_var("Y")
        shape = broadcast_dims(ctx, x.shape, y.shape, f"Y '{y.name}' and X '{x.name}'")
    ctx.set_output("Out", shape, "bool")


for _name in ("and", "or", "xor"):
    register_op(
        f"logical_{_name}",
        inputs=("X", "Y"),
        outputs=("Out",),
        infer_shape=_logical_infer,
        kernel=lambda xp, x, y, fn=f"logical_{_name}": getattr(xp, fn)(x, y),
    )
register_op(
    "logical_not", inputs=("X",), outputs=("Out",), infer_shape=_logical_infer, kernel=lambda xp, x: xp.logical_not(x)
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


def scale_grad(op, scale: float) -> list[dict]:
    """The gradient of an op whose derivative is the constant `scale`: a scale op from Out@GRAD to
    X@GRAD, as Paddle builds it for scale (and, with 0, for sign)."""
    return [
        dict(
            type="scale",
            inputs={"X": [n + "@GRAD" for n in op.output("Out")]},
            outputs={"Out": [n + "@GRAD" for n in op.input("X")]},
            attrs={"scale": scale, "bias": 0.0, "bias_after_scale": True},
        )
    ]


def _scale_grad_maker(op) -> list[dict]:
    """d(scale*x + b)/dx = scale."""
    return scale_grad(op, op.attr("scale"))


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
    kind = "selected_rows" if sparse else "dense_tensor"
    if xs[0].type == "lod_tensor_array":  # arrays add element by element
        kind = "lod_tensor_array"
    ctx.set_output("Out", shape, xs[0].dtype, type=kind)


def sum_values(xp, xs):
    """The sum op's kernel: dense arrays, SelectedRows, a table's sparse parts, LoD tensors (rows
    added, the first's LoD kept) and tensor arrays (element by element)."""
    if isinstance(xs[0], list):
        return add_arrays(xp, xs)
    if any(isinstance(x, LoDTensor) for x in xs):
        lod = next(x.levels for x in xs if isinstance(x, LoDTensor))
        return LoDTensor(sum_values(xp, [strip(x) for x in xs]), lod)
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


def add_arrays(xp, arrays: list[list]) -> list:
    """Tensor arrays (lists) added element by element, as Paddle's sum of LoDTensorArrays: an
    element missing (or None) in some of them is the sum of those that have it."""
    out = []
    for i in range(max(len(a) for a in arrays)):
        present = [a[i] for a in arrays if i < len(a) and a[i] is not None]
        if not present:
            out.append(None)
        elif len(present) == 1:
            out.append(present[0])
        else:
            out.append(sum_values(xp, present))
    return out


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


register_op("sum", inputs=("X*",), outputs=("Out",), infer_shape=_sum_infer, grad=_sum_grad_maker, kernel=sum_values)
