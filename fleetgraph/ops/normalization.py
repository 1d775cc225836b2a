"""Normalizations computed afresh each run: layer, group and instance norms, norm (l2_normalize), lrn
and affine_channel; the ones that keep statistics are in normalization_stats.py.

Each op keeps Paddle 1.8's slots, attrs and saved statistics (layer_norm and group_norm save the
variance, instance_norm the inverse standard deviation), so its gradient op reads what Paddle's does.
"""

from __future__ import annotations

from ..ir import InferContext, make_grad_op, register_op
from ..ir.errors import fmt_shape
from ._common import normalize_axis, prod
from ._xp import pad, reshape, total
from .normalization_stats import mean_keep, standardized_grad


def _check_vector(ctx: InferContext, slot: str, size: int, what: str) -> None:
    if not ctx.has_input(slot):
        return
    shape = ctx.input_shape(slot)
    if size >= 0 and tuple(shape) != (size,) and not (len(shape) == 1 and shape[0] < 0):
        raise ctx.error(f"{slot} '{ctx.op.inputs[slot][0]}': expected shape [{size}] ({what}), got {fmt_shape(shape)}")


# -- layer_norm: over the dims from begin_norm_axis on ----------------------------------------------


def _layer_norm_infer(ctx: InferContext) -> None:
    x = ctx.input_var("X")
    axis = ctx.attr("begin_norm_axis")
    if not 0 < axis < len(x.shape):
        raise ctx.error(
            f"begin_norm_axis {axis}: expected 1 to {len(x.shape) - 1} for X '{x.name}' {fmt_shape(x.shape)}"
        )
    left, right = prod(x.shape[:axis]), prod(x.shape[axis:])
    for slot in ("Scale", "Bias"):
        _check_vector(ctx, slot, right, f"the product of X's dims from begin_norm_axis {axis}")
    ctx.set_output("Y", x.shape, x.dtype, lod_level=x.lod_level)
    ctx.set_output("Mean", (left,), x.dtype)
    ctx.set_output("Variance", (left,), x.dtype)


def _rows(xp, x, begin_norm_axis):
    return reshape(xp, x, (prod(x.shape[:begin_norm_axis]), prod(x.shape[begin_norm_axis:])))


def _layer_norm(xp, x, scale, bias, *, epsilon, begin_norm_axis):
    x2 = _rows(xp, x, begin_norm_axis)
    mean = mean_keep(xp, x2, 1)
    var = mean_keep(xp, (x2 - mean) ** 2, 1)
    y = (x2 - mean) / xp.sqrt(var + epsilon)
    if scale is not None:
        y = y * reshape(xp, scale, (1, -1))
    if bias is not None:
        y = y + reshape(xp, bias, (1, -1))
    return reshape(xp, y, x.shape), reshape(xp, mean, (-1,)), reshape(xp, var, (-1,))


def _layer_norm_grad(xp, x, mean, variance, scale, bias, dy, *, epsilon, begin_norm_axis):
    x2, dy2 = _rows(xp, x, begin_norm_axis), _rows(xp, dy, begin_norm_axis)
    inv_std = 1 / xp.sqrt(reshape(xp, variance, (-1, 1)) + epsilon)
    xhat = (x2 - reshape(xp, mean, (-1, 1))) * inv_std
    dxhat = dy2 if scale is None else dy2 * reshape(xp, scale, (1, -1))
    dx = reshape(xp, standardized_grad(xp, xhat, inv_std, dxhat, 1), x.shape)
    dscale = None if scale is None else total(xp, dy2 * xhat, axis=0)
    dbias = None if bias is None else total(xp, dy2, axis=0)
    return dx, dscale, dbias


_LN_GRAD_INPUTS = ("X", "Mean", "Variance", "Scale?", "Bias?", "Y@GRAD")
register_op(
    "layer_norm",
    inputs=("X", "Scale?", "Bias?"),
    outputs=("Y", "Mean", "Variance"),
    attrs={"epsilon": 1e-5, "begin_norm_axis": 1},
    infer_shape=_layer_norm_infer,
    grad=make_grad_op(
        inputs=tuple(s.rstrip("?") for s in _LN_GRAD_INPUTS), outputs=("X@GRAD", "Scale@GRAD", "Bias@GRAD")
    ),
    kernel=_layer_norm,
)
register_op(
    "layer_norm_grad",
    inputs=_LN_GRAD_INPUTS,
    outputs=("X@GRAD", "Scale@GRAD", "Bias@GRAD"),
    attrs={"epsilon": 1e-5, "begin_norm_axis": 1},
    kernel=_layer_norm_grad,
)


# -- group_norm: over each group of channels of each sample -----------------------------------------


def _channels_first(xp, x, data_layout):
    """NHWC as NCHW (the kernels' layout); NCHW as it is."""
    if data_layout != "NHWC":
        return x
    return xp.permute_dims(x, (0, x.ndim - 1, *range(1, x.ndim - 1)))


def _channels_back(xp, x, data_layout):
    if data_layout != "NHWC":
        return x
    return xp.permute_dims(x, (0, *range(2, x.ndim), 1))


def _group_norm_infer(ctx: InferContext) -> None:
    x = ctx.input_var("X")
    ctx.check_rank("X", (2, 3, 4, 5))
    layout, groups = ctx.attr("data_layout"), ctx.attr("groups")
    if layout not in ("NCHW", "NHWC"):
        raise ctx.error(f"data_layout {layout!r}: expected 'NCHW' or 'NHWC'")
    c = x.shape[1] if layout == "NCHW" else x.shape[-1]
    if groups < 1 or (c >= 0 and c % groups):
        raise ctx.error(f"groups {groups}: expected a divisor of the {c} channels of X '{x.name}' {fmt_shape(x.shape)}")
    for slot in ("Scale", "Bias"):
        _check_vector(ctx, slot, c, "the channels of X")
    ctx.set_output("Y", x.shape, x.dtype, lod_level=x.lod_level)
    ctx.set_output("Mean", (x.shape[0], groups), x.dtype)
    ctx.set_output("Variance", (x.shape[0], groups), x.dtype)


def _per_channel(xp, v, ndim):
    return reshape(xp, v, (1, -1) + (1,) * (ndim - 2))


def _group_norm(xp, x, scale, bias, *, epsilon, groups, data_layout):
    xc = _channels_first(xp, x, data_layout)
    xg = reshape(xp, xc, (xc.shape[0], groups, -1))
    mean = mean_keep(xp, xg, 2)
    var = mean_keep(xp, xg * xg, 2) - mean * mean  # Paddle's E[x^2] - E[x]^2
    y = reshape(xp, (xg - mean) / xp.sqrt(var + epsilon), xc.shape)
    if scale is not None:
        y = y * _per_channel(xp, scale, y.ndim)
    if bias is not None:
        y = y + _per_channel(xp, bias, y.ndim)
    n = xc.shape[0]
    return _channels_back(xp, y, data_layout), reshape(xp, mean, (n, groups)), reshape(xp, var, (n, groups))


def _group_norm_grad(xp, y, variance, scale, bias, dy, *, epsilon, groups, data_layout):
    """Paddle's: the normalized input is recovered from Y, (Y - Bias) / Scale where Scale is not 0."""
    yc, dyc = _channels_first(xp, y, data_layout), _channels_first(xp, dy, data_layout)
    xhat = yc if bias is None else yc - _per_channel(xp, bias, yc.ndim)
    dxhat = dyc
    if scale is not None:
        s = _per_channel(xp, scale, yc.ndim)
        xhat = xp.where(s != 0, xhat / xp.where(s != 0, s, xp.ones_like(s)), xhat)
        dxhat = dyc * s
    axes = (0, *range(2, yc.ndim))
    dscale = None if scale is None else total(xp, dyc * xhat, axis=axes)
    dbias = None if bias is None else total(xp, dyc, axis=axes)
    n = yc.shape[0]
    inv_std = 1 / xp.sqrt(reshape(xp, variance, (n, groups, 1)) + epsilon)
    grouped = [reshape(xp, a, (n, groups, -1)) for a in (xhat, dxhat)]
    dx = reshape(xp, standardized_grad(xp, grouped[0], inv_std, grouped[1], 2), yc.shape)
    return _channels_back(xp, dx, data_layout), dscale, dbias


_GN_ATTRS = {"epsilon": 1e-5, "groups": -1, "data_layout": "NCHW"}
register_op(
    "group_norm",
    inputs=("X", "Scale?", "Bias?"),
    outputs=("Y", "Mean", "Variance"),
    attrs=_GN_ATTRS,
    infer_shape=_group_norm_infer,
    grad=make_grad_op(
        inputs=("Y", "Variance", "Scale", "Bias", "Y@GRAD"), outputs=("X@GRAD", "Scale@GRAD", "Bias@GRAD")
    ),
    kernel=_group_norm,
)
register_op(
    "group_norm_grad",
    inputs=("Y", "Variance", "Scale?", "Bias?", "Y@GRAD"),
    outputs=("X@GRAD", "Scale@GRAD", "Bias@GRAD"),
    attrs=_GN_ATTRS,
    kernel=_group_norm_grad,
)


# -- instance_norm: over the spatial dims of each sample and channel --------------------------------


def _instance_norm_infer(ctx: InferContext) -> None:
    x = ctx.input_var("X")
    ctx.check_rank("X", (2, 3, 4, 5))
    for slot in ("Scale", "Bias"):
        _check_vector(ctx, slot, x.shape[1], "the channels of X")
    ctx.set_output("Y", x.shape, x.dtype, lod_level=x.lod_level)
    nc = x.shape[0] * x.shape[1] if x.shape[0] >= 0 else -1
    ctx.set_output("SavedMean", (nc,), x.dtype)
    ctx.set_output("SavedVariance", (nc,), x.dtype)


def _instances(xp, x):
    return reshape(xp, x, (x.shape[0] * x.shape[1], -1))


def _instance_norm(xp, x, scale, bias, *, epsilon):
    x2 = _instances(xp, x)
    mean = mean_keep(xp, x2, 1)
    inv_std = 1 / xp.sqrt(mean_keep(xp, (x2 - mean) ** 2, 1) + epsilon)
    y = reshape(xp, (x2 - mean) * inv_std, x.shape)
    if scale is not None:
        y = y * _per_channel(xp, scale, x.ndim)
    if bias is not None:
        y = y + _per_channel(xp, bias, x.ndim)
    return y, reshape(xp, mean, (-1,)), reshape(xp, inv_std, (-1,))


def _instance_norm_grad(xp, x, scale, saved_mean, saved_inv_std, dy, *, epsilon):
    inv_std = reshape(xp, saved_inv_std, (-1, 1))
    xhat = (_instances(xp, x) - reshape(xp, saved_mean, (-1, 1))) * inv_std
    xhat_full = reshape(xp, xhat, x.shape)
    axes = (0, *range(2, x.ndim))
    dscale, dbias = total(xp, dy * xhat_full, axis=axes), total(xp, dy, axis=axes)
    dxhat = dy if scale is None else dy * _per_channel(xp, scale, x.ndim)
    dx = reshape(xp, standardized_grad(xp, xhat, inv_std, _instances(xp, dxhat), 1), x.shape)
    return dx, dscale, dbias


register_op(
    "instance_norm",
    inputs=("X", "Scale?", "Bias?"),
    outputs=("Y", "SavedMean", "SavedVariance"),
    attrs={"epsilon": 1e-5},
    infer_shape=_instance_norm_infer,
    grad=make_grad_op(
        inputs=("X", "Scale", "SavedMean", "SavedVariance", "Y@GRAD"), outputs=("X@GRAD", "Scale@GRAD", "Bias@GRAD")
    ),
    kernel=_instance_norm,
)
register_op(
    "instance_norm_grad",
    inputs=("X", "Scale?", "SavedMean", "SavedVariance", "Y@GRAD"),
    outputs=("X@GRAD", "Scale@GRAD", "Bias@GRAD"),
    attrs={"epsilon": 1e-5},
    kernel=_instance_norm_grad,
)


# -- norm (l2_normalize): x / sqrt(sum(x^2) + epsilon) along one axis -------------------------------


def _norm_infer(ctx: InferContext) -> None:
    x = ctx.input_var("X")
    axis = normalize_axis(ctx.attr("axis"), len(x.shape))
    if not 0 <= axis < len(x.shape):
        raise ctx.error(
            f"axis {ctx.attr('axis')}: expected -{len(x.shape)} to {len(x.shape) - 1} for X {fmt_shape(x.shape)}"
        )
    ctx.set_output("Out", x.shape, x.dtype, lod_level=x.lod_level)
    ctx.set_output("Norm", tuple(1 if i == axis else d for i, d in enumerate(x.shape)), x.dtype)


def _norm(xp, x, *, axis, epsilon):
    norm = xp.sqrt(total(xp, x * x, axis=normalize_axis(axis, x.ndim), keepdims=True) + epsilon)
    return x / norm, norm


def _norm_grad(xp, x, norm, dout, *, axis, epsilon):
    """Paddle's: dx = dout / norm - x * sum(x * dout) / norm^3."""
    s = total(xp, x * dout, axis=normalize_axis(axis, x.ndim), keepdims=True)
    return dout / norm - x * s / (norm * norm * norm)


register_op(
    "norm",
    inputs=("X",),
    outputs=("Out", "Norm"),
    attrs={"axis": 1, "epsilon": 1e-10},
    infer_shape=_norm_infer,
    grad=make_grad_op(inputs=("X", "Norm", "Out@GRAD"), outputs=("X@GRAD",)),
    kernel=_norm,
)
register_op(
    "norm_grad",
    inputs=("X", "Norm", "Out@GRAD"),
    outputs=("X@GRAD",),
    attrs={"axis": 1, "epsilon": 1e-10},
    kernel=_norm_grad,
)


# -- lrn: local response normalization across channels ----------------------------------------------


def _lrn_axis(data_format: str) -> int:
    return 3 if data_format == "NHWC" else 1


def _lrn_infer(ctx: InferContext) -> None:
    x = ctx.input_var("X")
    ctx.check_rank("X", (4,))
    if ctx.attr("n") < 1:
        raise ctx.error(f"n {ctx.attr('n')}: expected a positive window of channels")
    ctx.set_output("Out", x.shape, x.dtype)
    ctx.set_output("MidOut", x.shape, x.dtype)


def _channel_window_sum(xp, a, n, axis):
    """sum of a[c - (n-1)//2 .. c - (n-1)//2 + n - 1] along `axis` for each c (zeros beyond the ends):
    the window Paddle's forward and gradient kernels both use."""
    before = (n - 1) // 2
    widths = [(0, 0)] * a.ndim
    widths[axis] = (before, n - 1 - before)
    padded = pad(xp, a, widths)
    c = a.shape[axis]
    out = None
    for j in range(n):
        index = tuple(slice(j, j + c) if d == axis else slice(None) for d in range(a.ndim))
        out = padded[index] if out is None else out + padded[index]
    return out


def _lrn(xp, x, *, n, k, alpha, beta, data_format, is_test):
    mid = k + alpha * _channel_window_sum(xp, x * x, n, _lrn_axis(data_format))
    return x * mid ** (-beta), mid


def _lrn_grad(xp, x, out, mid, dout, *, n, k, alpha, beta, data_format, is_test):
    """Paddle's kernel: exact for odd n; for even n its window is the forward's, not its mirror."""
    window = _channel_window_sum(xp, dout * out / mid, n, _lrn_axis(data_format))
    return mid ** (-beta) * dout - 2 * alpha * beta * x * window


_LRN_ATTRS = {"n": 5, "k": 2.0, "alpha": 1e-4, "beta": 0.75, "data_format": "AnyLayout", "is_test": False}
register_op(
    "lrn",
    inputs=("X",),
    outputs=("Out", "MidOut"),
    attrs=_LRN_ATTRS,
    infer_shape=_lrn_infer,
    grad=make_grad_op(inputs=("X", "Out", "MidOut", "Out@GRAD"), outputs=("X@GRAD",)),
    kernel=_lrn,
)
register_op(
    "lrn_grad",
    inputs=("X", "Out", "MidOut", "Out@GRAD"),
    outputs=("X@GRAD",),
    attrs=_LRN_ATTRS,
    kernel=_lrn_grad,
)


# -- affine_channel: x * scale + bias per channel ---------------------------------------------------


def _affine_axis(ndim: int, data_layout: str) -> int:
    return ndim - 1 if data_layout == "NHWC" else 1


def _affine_channel_infer(ctx: InferContext) -> None:
    x = ctx.input_var("X")
    ctx.check_rank("X", (2, 3, 4, 5))
    c = x.shape[_affine_axis(len(x.shape), ctx.attr("data_layout"))]
    for slot in ("Scale", "Bias"):
        _check_vector(ctx, slot, c, f"the channels of X, {ctx.attr('data_layout')}")
    ctx.set_output("Out", x.shape, x.dtype, lod_level=x.lod_level)


def _channel_shape(xp, v, ndim, data_layout):
    shape = [1] * ndim
    shape[_affine_axis(ndim, data_layout)] = -1
    return reshape(xp, v, tuple(shape))


def _affine_channel(xp, x, scale, bias, *, data_layout):
    return x * _channel_shape(xp, scale, x.ndim, data_layout) + _channel_shape(xp, bias, x.ndim, data_layout)


def _affine_channel_grad(xp, x, scale, dout, *, data_layout):
    axes = tuple(d for d in range(x.ndim) if d != _affine_axis(x.ndim, data_layout))
    dx = dout * _channel_shape(xp, scale, x.ndim, data_layout)
    return dx, total(xp, dout * x, axis=axes), total(xp, dout, axis=axes)


register_op(
    "affine_channel",
    inputs=("X", "Scale", "Bias"),
    outputs=("Out",),
    attrs={"data_layout": "AnyLayout"},
    infer_shape=_affine_channel_infer,
    grad=make_grad_op(inputs=("X", "Scale", "Out@GRAD"), outputs=("X@GRAD", "Scale@GRAD", "Bias@GRAD")),
    kernel=_affine_channel,
)
register_op(
    "affine_channel_grad",
    inputs=("X", "Scale", "Out@GRAD"),
    outputs=("X@GRAD", "Scale@GRAD", "Bias@GRAD"),
    attrs={"data_layout": "AnyLayout"},
    kernel=_affine_channel_grad,
)
