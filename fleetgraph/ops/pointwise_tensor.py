"""Pointwise ops that also read a second tensor or an axis: prelu (a learned slope), pow (whose
factor may be a tensor), maxout and cumsum along an axis, and the whole-tensor checks isinf, isnan,
isfinite, allclose, size and is_empty, each a one-element answer as Paddle 1.8's."""

from __future__ import annotations

from ..ir import InferContext, make_grad_op, register_op
from ..ir.errors import fmt_shape
from ._common import known, normalize_axis, prod, same_shape
from ._xp import dtype_of, host, is_float, largest, mask, reshape
from .math import unbroadcast

# -- prelu -------------------------------------------------------------------------------------------


def _alpha_like(xp, x, alpha, mode):
    """Alpha shaped to broadcast over x: one slope ('all'), one per channel (axis 1, 'channel'), or
    one per element of a sample ('element')."""
    if mode == "channel":
        return reshape(xp, alpha, (1, x.shape[1]) + (1,) * (x.ndim - 2))
    if mode == "element":
        return reshape(xp, alpha, (1,) + tuple(x.shape[1:]))
    return alpha


def _prelu(xp, x, alpha, *, mode):
    return xp.where(x > 0, x, _alpha_like(xp, x, alpha, mode) * x)


def _prelu_grad(xp, x, alpha, dout, *, mode, need):
    a = _alpha_like(xp, x, alpha, mode)
    positive = mask(xp, x > 0, dout)
    dx = dout * (positive + (1 - positive) * a) if "X@GRAD" in need else None
    dalpha = None
    if "Alpha@GRAD" in need:
        dalpha = reshape(xp, unbroadcast(xp, (1 - positive) * x * dout, a.shape), alpha.shape)
    return dx, dalpha


_PRELU_MODES = ("all", "channel", "element")


def _prelu_infer(ctx: InferContext) -> None:
    x, mode = ctx.input_var("X"), ctx.attr("mode")
    if mode not in _PRELU_MODES:
        raise ctx.error(f"attr mode: expected one of {_PRELU_MODES}, got {mode!r}")
    if mode == "channel" and len(x.shape) < 2:
        raise ctx.error(f"mode 'channel' needs X of rank 2 or more (N, C, ...); got {fmt_shape(x.shape)}")
    ctx.set_output("Out", x.shape, x.dtype, lod_level=x.lod_level)


register_op(
    "prelu",
    inputs=("X", "Alpha"),
    outputs=("Out",),
    attrs={"mode": "all"},
    infer_shape=_prelu_infer,
    grad=make_grad_op(inputs=("X", "Alpha", "Out@GRAD"), outputs=("X@GRAD", "Alpha@GRAD")),
    kernel=_prelu,
)
register_op(
    "prelu_grad",
    inputs=("X", "Alpha", "Out@GRAD"),
    outputs=("X@GRAD", "Alpha@GRAD"),
    attrs={"mode": "all"},
    kernel=_prelu_grad,
    wants_outputs=True,
)

# -- pow ---------------------------------------------------------------------------------------------


def _factor(factor_tensor, factor):
    """The exponent: FactorTensor's one value where it is given, else the attr (Paddle's order)."""
    return factor if factor_tensor is None else float(host(factor_tensor).reshape(-1)[0])


def _pow(xp, x, factor_tensor, *, factor):
    f = _factor(factor_tensor, factor)
    return x**f if is_float(xp, x) else x ** int(f)  # Eigen's pow of an integer tensor: T(factor)


def _pow_grad(xp, x, factor_tensor, dout, *, factor):
    f = _factor(factor_tensor, factor)
    return dout * f * x ** (f - 1)


register_op(
    "pow",
    inputs=("X", "FactorTensor?"),
    outputs=("Out",),
    attrs={"factor": 1.0},
    infer_shape=same_shape(),
    grad=make_grad_op(inputs=("X", "FactorTensor", "Out@GRAD"), outputs=("X@GRAD",)),
    kernel=_pow,
)
register_op(
    "pow_grad",
    inputs=("X", "FactorTensor?", "Out@GRAD"),
    outputs=("X@GRAD",),
    attrs={"factor": 1.0},
    infer_shape=same_shape("X", "X@GRAD"),
    kernel=_pow_grad,
)

# -- maxout ------------------------------------------------------------------------------------------


def _grouped(xp, x, groups, axis):
    """x with its channel axis split into (channels / groups, groups): the groups are neighbours."""
    shape = tuple(x.shape)
    return reshape(xp, x, shape[:axis] + (shape[axis] // groups, groups) + shape[axis + 1 :])


def _maxout(xp, x, *, groups, axis):
    return largest(xp, _grouped(xp, x, groups, axis), axis + 1)


def _maxout_grad(xp, x, out, dout, *, groups, axis):
    """Out@GRAD to the first largest of each group, as Paddle's kernel."""
    g = _grouped(xp, x, groups, axis)
    first = xp.argmax(g, axis=axis + 1, keepdims=True)
    ids = reshape(xp, xp.arange(groups, dtype=first.dtype), (1,) * (axis + 1) + (groups,) + (1,) * (x.ndim - axis - 1))
    spread = xp.expand_dims(dout, axis=axis + 1) * mask(xp, ids == first, dout)
    return reshape(xp, spread, tuple(x.shape))


def _maxout_infer(ctx: InferContext) -> None:
    x = ctx.check_rank("X", (4,))
    groups, axis = ctx.attr("groups"), ctx.attr("axis")
    if axis not in (1, 3):
        raise ctx.error(f"attr axis: expected 1 (NCHW) or 3 (NHWC), got {axis}")
    if groups < 1 or (known(x[axis]) and x[axis] % groups):
        raise ctx.error(f"X {fmt_shape(x)}: expected channels (dim {axis}) divisible by groups, got groups={groups}")
    shape = list(x)
    shape[axis] = x[axis] // groups if known(x[axis]) else -1
    ctx.set_output("Out", shape, ctx.input_dtype("X"))


_MAXOUT_ATTRS = {"groups": 1, "axis": 1}
register_op(
    "maxout",
    inputs=("X",),
    outputs=("Out",),
    attrs=_MAXOUT_ATTRS,
    infer_shape=_maxout_infer,
    grad=make_grad_op(inputs=("X", "Out", "Out@GRAD"), outputs=("X@GRAD",)),
    kernel=_maxout,
)
register_op(
    "maxout_grad", inputs=("X", "Out", "Out@GRAD"), outputs=("X@GRAD",), attrs=_MAXOUT_ATTRS, kernel=_maxout_grad
)

# -- cumsum ------------------------------------------------------------------------------------------


def _cumsum(xp, x, *, axis, exclusive, reverse):
    axis = normalize_axis(axis, x.ndim)
    if reverse:
        x = xp.flip(x, axis=axis)
    out = xp.cumulative_sum(x, axis=axis, dtype=x.dtype, include_initial=exclusive)
    if exclusive:  # a zero first, the total dropped: each entry sums those before it
        out = out[tuple(slice(0, x.shape[axis]) if i == axis else slice(None) for i in range(x.ndim))]
    return xp.flip(out, axis=axis) if reverse else out


def _cumsum_grad_maker(op) -> list[dict]:
    """The gradient of a running sum is the running sum the other way: a cumsum op with `reverse`
    flipped, from Out@GRAD to X@GRAD, as Paddle's CumsumGradMaker."""
    attrs = {k: op.attr(k) for k in ("axis", "exclusive", "reverse")}
    attrs["reverse"] = not attrs["reverse"]
    return [
        dict(
            type="cumsum",
            inputs={"X": [n + "@GRAD" for n in op.output("Out")]},
            outputs={"Out": [n + "@GRAD" for n in op.input("X")]},
            attrs=attrs,
        )
    ]


register_op(
    "cumsum",
    inputs=("X",),
    outputs=("Out",),
    attrs={"axis": -1, "exclusive": False, "reverse": False},
    infer_shape=same_shape(),
    grad=_cumsum_grad_maker,
    kernel=_cumsum,
)

# -- whole-tensor checks: one element each -------------------------------------------------------------


def _one(xp, value, dtype: str):
    """A [1] tensor holding `value` (a 0-d array or a number)."""
    return reshape(xp, xp.asarray(value, dtype=dtype_of(xp, dtype)), (1,))


def _one_element(slot: str, dtype: str):
    def infer(ctx: InferContext) -> None:
        ctx.input_var(slot)
        ctx.set_output("Out", (1,), dtype)

    return infer


def _allclose(xp, input, other, *, rtol, atol, equal_nan):
    """|input - other| <= atol + rtol |other| everywhere, Paddle's formula (an infinity equals
    nothing, not even itself); with equal_nan a NaN matches a NaN at the same place."""
    close = xp.abs(input - other) <= atol + rtol * xp.abs(other)
    if equal_nan:
        close = close | (xp.isnan(input) & xp.isnan(other))
    return _one(xp, xp.all(close), "bool")


for _name, _kernel in (
    ("isinf", lambda xp, x: _one(xp, xp.any(xp.isinf(x)), "bool")),
    ("isnan", lambda xp, x: _one(xp, xp.any(xp.isnan(x)), "bool")),
    ("isfinite", lambda xp, x: _one(xp, xp.all(xp.isfinite(x)), "bool")),
    ("is_empty", lambda xp, x: _one(xp, prod(x.shape) == 0, "bool")),
):
    register_op(_name, inputs=("X",), outputs=("Out",), infer_shape=_one_element("X", "bool"), kernel=_kernel)
register_op(
    "size",
    inputs=("Input",),
    outputs=("Out",),
    infer_shape=_one_element("Input", "int64"),
    kernel=lambda xp, x: _one(xp, prod(x.shape), "int64"),
)
register_op(
    "allclose",
    inputs=("Input", "Other"),
    outputs=("Out",),
    attrs={"rtol": 1e-5, "atol": 1e-8, "equal_nan": False},
    infer_shape=_one_element("Input", "bool"),
    kernel=_allclose,
)
