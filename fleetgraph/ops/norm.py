"""Normalization ops: batch_norm (batch or running statistics, NCHW or NHWC) and its gradient."""

from __future__ import annotations

from ..ir import InferContext, make_grad_op, register_op
from ..ir.errors import fmt_shape


def _global_stats(is_test, use_global_stats, trainable_statistics) -> bool:
    return use_global_stats or (is_test and not trainable_statistics)


def _channel_axis(ndim: int, data_layout: str) -> int:
    return 1 if data_layout in ("NCHW", "AnyLayout") else ndim - 1


def _batch_norm_infer(ctx: InferContext) -> None:
    x = ctx.input_var("X")
    ctx.check_rank("X", (2, 3, 4, 5))
    if ctx.attr("data_layout") not in ("NCHW", "NHWC", "AnyLayout"):
        raise ctx.error(f"data_layout {ctx.attr('data_layout')!r}: expected 'NCHW' or 'NHWC'")
    c = x.shape[_channel_axis(len(x.shape), ctx.attr("data_layout"))]
    for slot in ("Scale", "Bias", "Mean", "Variance"):
        v = ctx.input_var(slot)
        if len(v.shape) != 1 or (c >= 0 and v.shape[0] >= 0 and v.shape[0] != c):
            raise ctx.error(
                f"{slot} '{v.name}': expected shape [{c}] (the channels of X '{x.name}' "
                f"{fmt_shape(x.shape)}, {ctx.attr('data_layout')}), got {fmt_shape(v.shape)}"
            )
    ctx.set_output("Y", x.shape, x.dtype, lod_level=x.lod_level)
    for slot in ("MeanOut", "VarianceOut", "SavedMean", "SavedVariance"):
        ctx.set_output(slot, (c,), x.dtype)


def _bn_layout(x, data_layout):
    """(axes reduced over, the shape a per-channel vector broadcasts as)."""
    axis = _channel_axis(x.ndim, data_layout)
    shape = [1] * x.ndim
    shape[axis] = x.shape[axis]
    return tuple(a for a in range(x.ndim) if a != axis), tuple(shape)


def _batch_norm(
    xp,
    x,
    scale,
    bias,
    mean,
    variance,
    *,
    momentum,
    epsilon,
    is_test,
    data_layout,
    use_global_stats,
    trainable_statistics,
    need,
):
    axes, cshape = _bn_layout(x, data_layout)
    t = x.dtype.type
    if _global_stats(is_test, use_global_stats, trainable_statistics):
        batch_mean, inv_std = mean.copy(), 1 / xp.sqrt(variance + t(epsilon))
    else:
        batch_mean = x.mean(axis=axes)
        batch_var = xp.square(x - batch_mean.reshape(cshape)).mean(axis=axes)
        inv_std = 1 / xp.sqrt(batch_var + t(epsilon))
        for slot, running, batch in (("MeanOut", mean, batch_mean), ("VarianceOut", variance, batch_var)):
            if slot in need:  # MeanOut / VarianceOut share the running statistics' buffers
                running *= t(momentum)
                running += batch * t(1 - momentum)
    y = (x - batch_mean.reshape(cshape)) * (inv_std * scale).reshape(cshape) + bias.reshape(cshape)
    return y, mean, variance, batch_mean, inv_std, None


def _batch_norm_grad(
    xp,
    x,
    scale,
    bias,
    mean,
    variance,
    saved_mean,
    saved_inv_std,
    dy,
    *,
    momentum,
    epsilon,
    is_test,
    data_layout,
    use_global_stats,
    trainable_statistics,
    need,
):
    axes, cshape = _bn_layout(x, data_layout)
    if _global_stats(is_test, use_global_stats, trainable_statistics) and mean is not None:
        saved_mean, saved_inv_std = mean, 1 / xp.sqrt(variance + x.dtype.type(epsilon))
    xhat = (x - saved_mean.reshape(cshape)) * saved_inv_std.reshape(cshape)
    dbias = dy.sum(axis=axes)
    dscale = (dy * xhat).sum(axis=axes)
    dx = None
    if "X@GRAD" in need:
        k = (scale * saved_inv_std).reshape(cshape)
        if _global_stats(is_test, use_global_stats, trainable_statistics):
            dx = dy * k
        else:
            n = x.dtype.type(x.size // scale.size)
            dx = k * (dy - (dbias.reshape(cshape) + xhat * dscale.reshape(cshape)) / n)
    return dx, dscale, dbias


def _batch_norm_grad_maker(op) -> list[dict]:
    """Paddle's: the running statistics are read back only when they normalised the forward pass."""
    ins = ("X", "Scale", "Bias", "SavedMean", "SavedVariance", "Y@GRAD")
    if _global_stats(op.attr("is_test"), op.attr("use_global_stats"), op.attr("trainable_statistics")):
        ins += ("Mean", "Variance")
    return make_grad_op(inputs=ins, outputs=("X@GRAD", "Scale@GRAD", "Bias@GRAD"))(op)


_BN_ATTRS = {
    "momentum": 0.9,
    "epsilon": 1e-5,
    "is_test": False,
    "data_layout": "NCHW",
    "use_global_stats": False,
    "trainable_statistics": False,
}
register_op(
    "batch_norm",
    inputs=("X", "Scale", "Bias", "Mean", "Variance"),
    outputs=("Y", "MeanOut?", "VarianceOut?", "SavedMean?", "SavedVariance?", "ReserveSpace?"),
    attrs=_BN_ATTRS,
    infer_shape=_batch_norm_infer,
    grad=_batch_norm_grad_maker,
    kernel=_batch_norm,
    inplace={"MeanOut": "Mean", "VarianceOut": "Variance"},
    wants_outputs=True,
)
register_op(
    "batch_norm_grad",
    inputs=("X", "Scale", "Bias?", "Mean?", "Variance?", "SavedMean", "SavedVariance", "Y@GRAD"),
    outputs=("X@GRAD", "Scale@GRAD", "Bias@GRAD"),
    attrs=_BN_ATTRS,
    kernel=_batch_norm_grad,
    wants_outputs=True,
)
