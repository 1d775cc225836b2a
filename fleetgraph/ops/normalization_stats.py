"""Normalizations whose statistics outlive one run: spectral_norm (its power-iteration vectors U, V),
inplace_abn (batch_norm's running mean and variance, with an activation fused in) and data_norm
(summaries of all batches seen: its gradient op gives each batch's count, sum and squared deviations
as the summaries' gradients); plus the standardization gradient every normalization op of
ops/normalization.py shares."""

from __future__ import annotations

from ..ir import InferContext, make_grad_op, register_op
from ..ir.errors import fmt_shape
from ._common import prod
from ._xp import astype, reshape, total
from .norm import _BN_ATTRS, _batch_norm_infer, _channel_axis, _global_stats


def mean_keep(xp, x, axis):
    return xp.mean(x, axis=axis, keepdims=True)


def standardized_grad(xp, xhat, inv_std, dxhat, axis):
    """d loss / d x of xhat = (x - mean(x)) * inv_std over `axis` (the batch's own statistics),
    given d loss / d xhat."""
    return inv_std * (dxhat - mean_keep(xp, dxhat, axis) - xhat * mean_keep(xp, dxhat * xhat, axis))


# -- spectral_norm: Weight / its largest singular value, estimated by power iteration ---------------


def _spectral_infer(ctx: InferContext) -> None:
    w = ctx.input_var("Weight")
    ctx.check_rank("Weight", (2, 3, 4, 5))
    dim = ctx.attr("dim")
    if not 0 <= dim < len(w.shape):
        raise ctx.error(f"dim {dim}: expected 0 to {len(w.shape) - 1} for Weight '{w.name}' {fmt_shape(w.shape)}")
    h = w.shape[dim]
    for slot, size in (("U", h), ("V", prod(w.shape) // h if h > 0 else -1)):
        shape = ctx.input_shape(slot)
        if size >= 0 and tuple(shape) != (size,):
            raise ctx.error(
                f"{slot}: expected shape [{size}] for Weight {fmt_shape(w.shape)} at dim {dim}, got {fmt_shape(shape)}"
            )
    ctx.set_output("Out", w.shape, w.dtype)


def _perm(ndim, dim):
    return (dim, *(d for d in range(ndim) if d != dim))


def _as_matrix(xp, a, dim):
    """a with axis `dim` moved first, as an [a.shape[dim], rest] matrix (Paddle's weight_mat)."""
    moved = xp.permute_dims(a, _perm(a.ndim, dim))
    return reshape(xp, moved, (a.shape[dim], -1))


def _from_matrix(xp, m, like, dim):
    perm = _perm(like.ndim, dim)
    moved = reshape(xp, m, tuple(like.shape[p] for p in perm))
    return xp.permute_dims(moved, tuple(perm.index(d) for d in range(like.ndim)))


def _power_iteration(xp, weight, u, v, dim, power_iters, eps):
    """(u, v, sigma) as Paddle's CalcMatrixSigmaAndNormWeight: the iterations start from U and V
    and their results are not written back (U and V stay as they are)."""
    wm = _as_matrix(xp, weight, dim)
    u, v = reshape(xp, u, (-1, 1)), reshape(xp, v, (-1, 1))
    for _ in range(power_iters):
        v = wm.T @ u
        v = v / (xp.sqrt(total(xp, v * v)) + eps)
        u = wm @ v
        u = u / (xp.sqrt(total(xp, u * u)) + eps)
    return u, v, total(xp, u * (wm @ v))


def _spectral_norm(xp, weight, u, v, *, dim, power_iters, eps):
    return weight / _power_iteration(xp, weight, u, v, dim, power_iters, eps)[2]


def _spectral_norm_grad(xp, weight, u, v, dout, *, dim, power_iters, eps):
    """Out = W / sigma with sigma = u^T W v, u and v held constant (no gradient flows through the
    power iterations, as Paddle's): dW = dOut / sigma - sum(dOut * W) / sigma^2 * u v^T. Paddle
    1.8's kernel writes sum(W) for sum(dOut * W), which agrees where dOut is uniform (its tests)."""
    u, v, sigma = _power_iteration(xp, weight, u, v, dim, power_iters, eps)
    uv = _from_matrix(xp, u @ v.T, weight, dim)
    return dout / sigma - total(xp, dout * weight) / (sigma * sigma) * uv


_SN_ATTRS = {"dim": 0, "power_iters": 1, "eps": 1e-12}
register_op(
    "spectral_norm",
    inputs=("Weight", "U", "V"),
    outputs=("Out",),
    attrs=_SN_ATTRS,
    infer_shape=_spectral_infer,
    grad=make_grad_op(inputs=("Weight", "U", "V", "Out@GRAD"), outputs=("Weight@GRAD",)),
    kernel=_spectral_norm,
)
register_op(
    "spectral_norm_grad",
    inputs=("Weight", "U", "V", "Out@GRAD"),
    outputs=("Weight@GRAD",),
    attrs=_SN_ATTRS,
    kernel=_spectral_norm_grad,
)


# -- inplace_abn: batch_norm then identity / leaky_relu / elu, its gradient read from Y ---------------


def _activation(xp, y, activation, alpha):
    if activation == "leaky_relu":
        return xp.maximum(y, alpha * y)
    if activation == "elu":
        return xp.where(y > 0, y, alpha * (xp.exp(xp.minimum(y, xp.zeros_like(y))) - 1))
    return y


def _undo_activation(xp, y, dy, activation, alpha):
    """(batch_norm's output, its gradient) recovered from the activation's output, as Paddle's
    InplaceABNActivation.GradCompute."""
    if activation == "leaky_relu":
        return xp.where(y > 0, y, y / alpha), xp.where(y > 0, dy, dy * alpha)
    if activation == "elu":
        negative = xp.log(xp.maximum(y / alpha + 1, xp.full_like(y, 1e-30)))
        return xp.where(y > 0, y, negative), xp.where(y > 0, dy, dy * (y + alpha))
    return y, dy


def _abn_infer(ctx: InferContext) -> None:
    if ctx.attr("activation") not in ("", "identity", "leaky_relu", "elu"):
        raise ctx.error(f"activation {ctx.attr('activation')!r}: expected '', 'identity', 'leaky_relu' or 'elu'")
    if ctx.attr("use_sync_bn"):
        raise NotImplementedError("inplace_abn: use_sync_bn (statistics synchronized across devices) is not supported")
    _batch_norm_infer(ctx)


def _channels(x, data_layout):
    axis = _channel_axis(x.ndim, data_layout)
    shape = [1] * x.ndim
    shape[axis] = -1
    return tuple(d for d in range(x.ndim) if d != axis), tuple(shape)


def _inplace_abn(xp, x, scale, bias, mean, variance, *, activation, alpha, use_sync_bn, need, **bn):
    axes, cshape = _channels(x, bn["data_layout"])
    eps, momentum = bn["epsilon"], bn["momentum"]
    if _global_stats(bn["is_test"], bn["use_global_stats"], bn["trainable_statistics"]):
        batch_mean, inv_std = mean + 0, 1 / xp.sqrt(variance + eps)
    else:
        batch_mean = xp.mean(x, axis=axes)
        batch_var = xp.mean((x - reshape(xp, batch_mean, cshape)) ** 2, axis=axes)
        inv_std = 1 / xp.sqrt(batch_var + eps)
        for slot, running, batch in (("MeanOut", mean, batch_mean), ("VarianceOut", variance, batch_var)):
            if slot in need:  # MeanOut / VarianceOut share the running statistics' buffers
                running *= momentum
                running += batch * (1 - momentum)
    y = (x - reshape(xp, batch_mean, cshape)) * reshape(xp, inv_std * scale, cshape) + reshape(xp, bias, cshape)
    return _activation(xp, y, activation, alpha), mean, variance, batch_mean, inv_std, None


def _inplace_abn_grad(
    xp, y, scale, bias, mean, variance, saved_mean, saved_inv_std, dy, *, activation, alpha, use_sync_bn, need, **bn
):
    axes, cshape = _channels(y, bn["data_layout"])
    ybn, dybn = _undo_activation(xp, y, dy, activation, alpha)
    xhat = (ybn - reshape(xp, bias, cshape)) / reshape(xp, scale, cshape)
    dbias, dscale = total(xp, dybn, axis=axes), total(xp, dybn * xhat, axis=axes)
    if _global_stats(bn["is_test"], bn["use_global_stats"], bn["trainable_statistics"]):
        inv_std = saved_inv_std if variance is None else 1 / xp.sqrt(variance + bn["epsilon"])
        dx = dybn * reshape(xp, scale * inv_std, cshape)
    else:
        dxhat = dybn * reshape(xp, scale, cshape)
        dx = standardized_grad(xp, xhat, reshape(xp, saved_inv_std, cshape), dxhat, axes)
    return dx, dscale, dbias


def _inplace_abn_grad_maker(op) -> list[dict]:
    """Paddle's: Y (not X) and the saved statistics; the running ones under use_global_stats."""
    ins = ("Y", "Scale", "Bias", "SavedMean", "SavedVariance", "Y@GRAD")
    if op.attr("use_global_stats"):
        ins += ("Mean", "Variance")
    return make_grad_op(inputs=ins, outputs=("X@GRAD", "Scale@GRAD", "Bias@GRAD"))(op)


_ABN_ATTRS = {**_BN_ATTRS, "activation": "", "alpha": 0.1, "use_sync_bn": False}
register_op(
    "inplace_abn",
    inputs=("X", "Scale", "Bias", "Mean", "Variance"),
    outputs=("Y", "MeanOut?", "VarianceOut?", "SavedMean?", "SavedVariance?", "ReserveSpace?"),
    attrs=_ABN_ATTRS,
    infer_shape=_abn_infer,
    grad=_inplace_abn_grad_maker,
    kernel=_inplace_abn,
    inplace={"MeanOut": "Mean", "VarianceOut": "Variance"},
    wants_outputs=True,
)
register_op(
    "inplace_abn_grad",
    inputs=("Y", "Scale", "Bias", "Mean?", "Variance?", "SavedMean", "SavedVariance", "Y@GRAD"),
    outputs=("X@GRAD", "Scale@GRAD", "Bias@GRAD"),
    attrs=_ABN_ATTRS,
    kernel=_inplace_abn_grad,
    wants_outputs=True,
)


# -- data_norm: (X - BatchSum / BatchSize) * sqrt(BatchSize / BatchSquareSum), slots of shown features --

_SHOW_PRECISION = 1e-7  # Paddle's min_precision: a slot whose first value is within it is not shown


def _data_norm_infer(ctx: InferContext) -> None:
    x = ctx.check_rank("X", (2,))
    if ctx.attr("sync_stats"):
        raise NotImplementedError("data_norm: sync_stats (statistics synchronized across GPUs) is not supported")
    c = x[1]
    slot_dim = ctx.attr("slot_dim")
    if slot_dim > 0 and c >= 0 and c % slot_dim:
        raise ctx.error(f"slot_dim {slot_dim}: expected a divisor of X's {c} features")
    slots = ["BatchSize", "BatchSum", "BatchSquareSum"]
    if ctx.attr("enable_scale_and_shift"):
        slots += ["scale_w", "bias"]
    for slot in slots:
        if not ctx.has_input(slot) or tuple(ctx.input_shape(slot)) != (c,):
            got = fmt_shape(ctx.input_shape(slot)) if ctx.has_input(slot) else "nothing"
            raise ctx.error(f"{slot}: expected shape [{c}] (X's features), got {got}")
    ctx.set_output("Y", x, ctx.input_dtype("X"), lod_level=ctx.input_var("X").lod_level)
    ctx.set_output("Means", (c,), ctx.input_dtype("X"))
    ctx.set_output("Scales", (c,), ctx.input_dtype("X"))


def _shown(xp, x, slot_dim):
    """[N, C] mask of the features whose slot is shown (its first value is not ~0); None without slots."""
    if slot_dim <= 0:
        return None
    n, c = x.shape
    first = reshape(xp, x, (n, c // slot_dim, slot_dim))[:, :, :1]
    shown = (first <= -_SHOW_PRECISION) | (first >= _SHOW_PRECISION)
    return reshape(xp, xp.broadcast_to(shown, (n, c // slot_dim, slot_dim)), (n, c))


def _zero_unshown(xp, a, shown):
    return a if shown is None else xp.where(shown, a, xp.zeros_like(a))


def _data_norm(xp, x, batch_size, batch_sum, batch_square_sum, scale_w, bias, *, slot_dim, enable_scale_and_shift, **_):
    means = batch_sum / batch_size
    scales = xp.sqrt(batch_size / batch_square_sum)
    y = (x - means) * scales
    if enable_scale_and_shift:
        y = y * scale_w + bias
    return _zero_unshown(xp, y, _shown(xp, x, slot_dim)), means, scales


def _batch_summaries(xp, x, means, shown, epsilon):
    """This batch's count, sum and squared deviations per feature, Paddle's 'gradients' of the
    summaries; with slots, over the shown rows, as averages of one row plus count * epsilon."""
    dev = (x - means) ** 2
    if shown is None:
        n = x.shape[0]
        return xp.full_like(means, n), total(xp, x, axis=0), total(xp, dev, axis=0) + n * epsilon
    count = total(xp, astype(xp, shown, x.dtype), axis=0)
    seen = count >= 1
    safe = xp.where(seen, count, xp.ones_like(count))
    zero = xp.zeros_like(count)
    mean_sum = total(xp, _zero_unshown(xp, x, shown), axis=0) / safe
    mean_square = total(xp, _zero_unshown(xp, dev, shown), axis=0) / safe + count * epsilon
    return xp.where(seen, xp.ones_like(count), zero), xp.where(seen, mean_sum, zero), xp.where(seen, mean_square, zero)


def _data_norm_grad(xp, x, scale_w, bias, means, scales, dy, *, slot_dim, enable_scale_and_shift, epsilon, need, **_):
    shown = _shown(xp, x, slot_dim)
    dscale_w = dbias = None
    if enable_scale_and_shift:
        dx = _zero_unshown(xp, dy * scales * scale_w, shown)
        dbias = total(xp, _zero_unshown(xp, dy, shown), axis=0)
        dscale_w = total(xp, _zero_unshown(xp, (x - means) * scales * dy, shown), axis=0)
    else:
        dx = dy * scales  # Paddle's: every feature, shown or not
    return (dx, *_batch_summaries(xp, x, means, shown, epsilon), dscale_w, dbias)


_DN_ATTRS = {
    "epsilon": 1e-4,
    "slot_dim": -1,
    "summary_decay_rate": 0.9999999,
    "enable_scale_and_shift": False,
    "data_layout": "NCHW",
    "sync_stats": False,
}
_DN_GRADS = ("X@GRAD", "BatchSize@GRAD", "BatchSum@GRAD", "BatchSquareSum@GRAD", "scale_w@GRAD", "bias@GRAD")
register_op(
    "data_norm",
    inputs=("X", "BatchSize", "BatchSum", "BatchSquareSum", "scale_w?", "bias?"),
    outputs=("Y", "Means", "Scales"),
    attrs=_DN_ATTRS,
    infer_shape=_data_norm_infer,
    grad=make_grad_op(inputs=("X", "scale_w", "bias", "Means", "Scales", "Y@GRAD"), outputs=_DN_GRADS),
    kernel=_data_norm,
)
register_op(
    "data_norm_grad",
    inputs=("X", "scale_w?", "bias?", "Means", "Scales", "Y@GRAD"),
    outputs=_DN_GRADS,
    attrs=_DN_ATTRS,
    kernel=_data_norm_grad,
    wants_outputs=True,
)
