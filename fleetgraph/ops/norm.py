"""Normalization ops: batch_norm (batch or running statistics, NCHW or NHWC) and its gradient, and
sync_batch_norm, the same op whose batch statistics are those of every rank's batch together."""

from __future__ import annotations

import numpy as np

from ..ir import InferContext, make_grad_op, register_op
from ..ir.errors import fmt_shape
from ._xp import astype, host, total


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


def _local_moments(xp, x, axes, cshape):
    """(mean, variance) per channel of this process's x."""
    mean = x.mean(axis=axes)
    return mean, xp.square(x - mean.reshape(cshape)).mean(axis=axes)


def _local_sums(dbias, dscale, n):
    return dbias, dscale, n


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
    moments=_local_moments,
):
    axes, cshape = _bn_layout(x, data_layout)
    t = x.dtype.type
    if _global_stats(is_test, use_global_stats, trainable_statistics):
        batch_mean, inv_std = mean.copy(), 1 / xp.sqrt(variance + t(epsilon))
    else:
        batch_mean, batch_var = moments(xp, x, axes, cshape)
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
    sums=_local_sums,
):
    """Scale@GRAD and Bias@GRAD are this process's sums (data parallelism averages them as any
    gradient); X@GRAD under batch statistics reads the sums over every rank (`sums`)."""
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
            all_dbias, all_dscale, n = sums(dbias, dscale, x.size // scale.size)
            dx = k * (dy - (all_dbias.reshape(cshape) + xhat * all_dscale.reshape(cshape)) / x.dtype.type(n))
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


# -- sync_batch_norm: batch_norm over the batches of every rank of the job ---------------------------

_SYNC_RING = 0  # Paddle's op has no ring attr: it all-reduces over the job's (data-parallel) ring


def _ring_of(ctx):
    """The ring of the job's ranks; None in a job of one process, where the op is batch_norm."""
    if not ctx.comm.has_ring(_SYNC_RING):
        return None
    ring = ctx.comm.ring(_SYNC_RING)
    return ring if ring.nranks > 1 else None


def _summed(xp, ring, vectors, count, what):
    """The per-channel `vectors` and the `count` of values behind them, each summed over the ranks
    in one float64 message on the host: (the sums as host arrays, the total count)."""
    flat = np.concatenate([host(astype(xp, v, "float64")) for v in vectors] + [np.array([count], "float64")])
    flat = ring.allreduce(flat, what)
    c = (flat.size - 1) // len(vectors)
    return [flat[i * c : (i + 1) * c] for i in range(len(vectors))], flat[-1]


def _ring_moments(ring):
    def moments(xp, x, axes, cshape):
        """Paddle's: every rank's sum(x) and sum(x^2) all-reduced (in float64 here, with the counts,
        so ranks may hold batches of different sizes)."""
        x64 = astype(xp, x, "float64")
        count = x.size // int(np.prod(cshape))
        (s1, s2), n = _summed(xp, ring, [total(xp, x64, axes), total(xp, x64 * x64, axes)], count, "sync_batch_norm")
        mean = s1 / n
        var = np.maximum(s2 / n - mean * mean, 0.0)
        return xp.asarray(mean.astype(x.dtype)), xp.asarray(var.astype(x.dtype))

    return moments


def _ring_sums(xp, ring, dtype):
    def sums(dbias, dscale, count):
        """Paddle's: every rank's sum(dy) and sum(dy * x_hat) all-reduced."""
        (all_dbias, all_dscale), n = _summed(xp, ring, [dbias, dscale], count, "sync_batch_norm_grad")
        return xp.asarray(all_dbias.astype(dtype)), xp.asarray(all_dscale.astype(dtype)), n

    return sums


def _sync_batch_norm(xp, *inputs, ctx, **attrs):
    ring = _ring_of(ctx)
    return _batch_norm(xp, *inputs, **attrs, **({} if ring is None else {"moments": _ring_moments(ring)}))


def _sync_batch_norm_grad(xp, *inputs, ctx, **attrs):
    ring = _ring_of(ctx)
    return _batch_norm_grad(
        xp, *inputs, **attrs, **({} if ring is None else {"sums": _ring_sums(xp, ring, inputs[0].dtype)})
    )


# batch_norm and sync_batch_norm: one declaration, Paddle's slots and attrs for both
for _type, _kernel, _grad_kernel, _comm in (
    ("batch_norm", _batch_norm, _batch_norm_grad, False),
    ("sync_batch_norm", _sync_batch_norm, _sync_batch_norm_grad, True),
):
    register_op(
        _type,
        inputs=("X", "Scale", "Bias", "Mean", "Variance"),
        outputs=("Y", "MeanOut?", "VarianceOut?", "SavedMean?", "SavedVariance?", "ReserveSpace?"),
        attrs=_BN_ATTRS,
        infer_shape=_batch_norm_infer,
        grad=_batch_norm_grad_maker,
        kernel=_kernel,
        inplace={"MeanOut": "Mean", "VarianceOut": "Variance"},
        wants_outputs=True,
        needs_context=_comm,
    )
    register_op(
        _type + "_grad",
        inputs=("X", "Scale", "Bias?", "Mean?", "Variance?", "SavedMean", "SavedVariance", "Y@GRAD"),
        outputs=("X@GRAD", "Scale@GRAD", "Bias@GRAD"),
        attrs=_BN_ATTRS,
        kernel=_grad_kernel,
        wants_outputs=True,
        needs_context=_comm,
    )
