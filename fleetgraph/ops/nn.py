"""Neural-network layer ops: conv2d, pool2d, batch_norm, dropout and the lookup_table embeddings."""

from __future__ import annotations

import numpy as np

from ..ir import InferContext, make_grad_op, register_op
from ..ir.errors import fmt_shape
from ._xp import astype, contiguous, largest, mask, reshape, smallest
from .selected_rows import SelectedRows
from .sparse_table import SparseTable

# -- window geometry shared by conv2d and pool2d ---------------------------------------------------


def _pads4(paddings) -> list[int]:
    """Paddle's paddings as [top, bottom, left, right]; [h, w] pads both sides alike."""
    p = [int(v) for v in paddings]
    return [p[0], p[0], p[1], p[1]] if len(p) == 2 else p


def _same_pads(size: int, k: int, s: int) -> list[int]:
    """TensorFlow-style SAME padding: the output has ceil(size / stride) positions."""
    if size < 0:
        return [0, 0]
    total = max((-(-size // s) - 1) * s + k - size, 0)
    return [total // 2, total - total // 2]


def _resolve_pads(algorithm, paddings, in_hw, k_hw, strides) -> list[int]:
    if algorithm == "VALID":
        return [0, 0, 0, 0]
    if algorithm == "SAME":
        return _same_pads(in_hw[0], k_hw[0], strides[0]) + _same_pads(in_hw[1], k_hw[1], strides[1])
    return _pads4(paddings)


def _out_size(size: int, k: int, s: int, p0: int, p1: int, ceil_mode: bool = False) -> int:
    if size < 0:
        return -1
    span = size + p0 + p1 - k
    return max((span + s - 1) // s + 1 if ceil_mode else span // s + 1, 0)


def _check_window_attrs(ctx: InferContext, names: tuple[str, ...]) -> None:
    for name in names:
        if len(ctx.attr(name)) != 2:
            raise ctx.error(f"{name} {ctx.attr(name)}: expected 2 values [h, w]")
    if len(ctx.attr("paddings")) not in (2, 4):
        raise ctx.error(f"paddings {ctx.attr('paddings')}: expected [h, w] or [top, bottom, left, right]")
    if ctx.attr("padding_algorithm") not in ("EXPLICIT", "SAME", "VALID"):
        raise ctx.error(f"padding_algorithm {ctx.attr('padding_algorithm')!r}: expected EXPLICIT, SAME or VALID")
    if ctx.attr("data_format") not in ("NCHW", "AnyLayout"):
        raise ctx.error(f"data_format {ctx.attr('data_format')!r} is not supported; expected 'NCHW'")


def _windows(span: int, k: int, s: int, d: int = 1):
    """Slices of a padded axis picking, for each of the k window offsets, the `span` outputs' inputs."""
    return [slice(i * d, i * d + s * (span - 1) + 1, s) for i in range(k)]


def _pad(xp, x, pads, value=0.0):
    top, bottom, left, right = pads
    if not any(pads):
        return x
    return xp.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)), mode="constant", constant_values=value)


# -- conv2d ---------------------------------------------------------------------------------------


def _conv_geometry(x_shape, w_shape, strides, paddings, dilations, padding_algorithm):
    """(pads, dilations, output [h, w]) of a convolution; -1 where the input size is unknown."""
    k_hw = w_shape[2:]
    pads = _resolve_pads(padding_algorithm, paddings, x_shape[2:], k_hw, strides)
    dils = [1, 1] if padding_algorithm == "SAME" else list(dilations)
    out = [
        _out_size(x_shape[2 + i], dils[i] * (k_hw[i] - 1) + 1, strides[i], pads[2 * i], pads[2 * i + 1])
        for i in range(2)
    ]
    return pads, dils, out


def _conv2d_infer(ctx: InferContext) -> None:
    x, w = ctx.input_var("Input"), ctx.input_var("Filter")
    ctx.check_rank("Input", (4,))
    ctx.check_rank("Filter", (4,))
    _check_window_attrs(ctx, ("strides", "dilations"))
    groups = ctx.attr("groups")
    if groups < 1 or w.shape[0] % groups:
        raise ctx.error(
            f"Filter '{w.name}' {fmt_shape(w.shape)} has {w.shape[0]} output channels, not divisible by groups {groups}"
        )
    if x.shape[1] >= 0 and x.shape[1] != w.shape[1] * groups:
        raise ctx.error(
            f"Filter '{w.name}' {fmt_shape(w.shape)} expects {w.shape[1] * groups} input channels "
            f"(groups {groups}), got Input '{x.name}' {fmt_shape(x.shape)}"
        )
    if x.dtype != w.dtype:
        raise ctx.error(f"Input '{x.name}' is {x.dtype} but Filter '{w.name}' is {w.dtype}; expected the same dtype")
    _, _, out = _conv_geometry(
        x.shape,
        w.shape,
        ctx.attr("strides"),
        ctx.attr("paddings"),
        ctx.attr("dilations"),
        ctx.attr("padding_algorithm"),
    )
    if 0 in out:
        raise ctx.error(
            f"Filter '{w.name}' {fmt_shape(w.shape)} with strides {ctx.attr('strides')}, paddings "
            f"{ctx.attr('paddings')} and dilations {ctx.attr('dilations')} does not fit Input "
            f"'{x.name}' {fmt_shape(x.shape)}: output size {fmt_shape(out)}"
        )
    ctx.set_output("Output", (x.shape[0], w.shape[0], out[0], out[1]), x.dtype)


class _Conv:
    """One convolution's geometry, resolved at run time from the actual shapes."""

    def __init__(self, x_shape, w_shape, strides, paddings, dilations, groups, padding_algorithm):
        self.pads, self.dils, (self.oh, self.ow) = _conv_geometry(
            x_shape, w_shape, strides, paddings, dilations, padding_algorithm
        )
        self.n, self.c = x_shape[0], x_shape[1]
        self.m, _, self.kh, self.kw = w_shape
        self.groups = groups
        self.rows = _windows(self.oh, self.kh, strides[0], self.dils[0])
        self.cols = _windows(self.ow, self.kw, strides[1], self.dils[1])

    def im2col(self, xp, x):
        """[groups, C/groups * kh * kw, N * OH * OW] patches, built with one copy per kernel offset."""
        xt = _pad(xp, x, self.pads).transpose(1, 0, 2, 3)
        cols = xp.empty((self.c, self.kh, self.kw, self.n, self.oh, self.ow), dtype=x.dtype)
        for i, rs in enumerate(self.rows):
            for j, cs in enumerate(self.cols):
                cols[:, i, j] = xt[:, :, rs, cs]
        return cols.reshape(self.groups, -1, self.n * self.oh * self.ow)

    def col2im(self, xp, dcols, x_shape, dtype):
        t, b, l, r = self.pads  # noqa: E741  (top, bottom, left, right)
        h, w = x_shape[2:]
        dcols = dcols.reshape(self.c, self.kh, self.kw, self.n, self.oh, self.ow)
        dxt = xp.zeros((self.c, self.n, h + t + b, w + l + r), dtype=dtype)
        for i, rs in enumerate(self.rows):
            for j, cs in enumerate(self.cols):
                dxt[:, :, rs, cs] += dcols[:, i, j]
        return xp.ascontiguousarray(dxt[:, :, t : t + h, l : l + w].transpose(1, 0, 2, 3))

    def filter_matrix(self, w):
        return w.reshape(self.groups, self.m // self.groups, -1)


def _conv2d(xp, x, w, *, strides, paddings, dilations, groups, data_format, padding_algorithm):
    conv = _Conv(x.shape, w.shape, strides, paddings, dilations, groups, padding_algorithm)
    out = xp.matmul(conv.filter_matrix(w), conv.im2col(xp, x))
    return xp.ascontiguousarray(out.reshape(conv.m, conv.n, conv.oh, conv.ow).transpose(1, 0, 2, 3))


def _conv2d_grad(xp, x, w, dout, *, strides, paddings, dilations, groups, data_format, padding_algorithm, need):
    conv = _Conv(x.shape, w.shape, strides, paddings, dilations, groups, padding_algorithm)
    g = xp.ascontiguousarray(dout.transpose(1, 0, 2, 3)).reshape(groups, conv.m // groups, -1)
    dx = dw = None
    if "Filter@GRAD" in need:
        dw = xp.matmul(g, xp.swapaxes(conv.im2col(xp, x), 1, 2)).reshape(w.shape)
    if "Input@GRAD" in need:
        dcols = xp.matmul(xp.swapaxes(conv.filter_matrix(w), 1, 2), g)
        dx = conv.col2im(xp, dcols, x.shape, x.dtype)
    return dx, dw


_CONV_ATTRS = {
    "strides": [1, 1],
    "paddings": [0, 0],
    "dilations": [1, 1],
    "groups": 1,
    "data_format": "NCHW",
    "padding_algorithm": "EXPLICIT",
}
register_op(
    "conv2d",
    inputs=("Input", "Filter"),
    outputs=("Output",),
    attrs=_CONV_ATTRS,
    infer_shape=_conv2d_infer,
    grad=make_grad_op(inputs=("Input", "Filter", "Output@GRAD"), outputs=("Input@GRAD", "Filter@GRAD")),
    kernel=_conv2d,
)
register_op(
    "conv2d_grad",
    inputs=("Input", "Filter", "Output@GRAD"),
    outputs=("Input@GRAD", "Filter@GRAD"),
    attrs=_CONV_ATTRS,
    kernel=_conv2d_grad,
    wants_outputs=True,
)

# -- pool2d ---------------------------------------------------------------------------------------


class _Pool:
    """One pooling's windows along H and W, resolved from the input size and the attrs."""

    def __init__(self, hw, *, ksize, strides, paddings, global_pooling, adaptive, ceil_mode, padding_algorithm, **_):
        self.adaptive = adaptive and not global_pooling
        if global_pooling:
            ksize, strides, paddings, padding_algorithm = list(hw), [1, 1], [0, 0], "EXPLICIT"
        elif self.adaptive:
            self.out = list(ksize)
            if all(n >= 0 and n % o == 0 for n, o in zip(hw, ksize)):  # even windows: a plain pooling
                ksize = strides = [n // o for n, o in zip(hw, ksize)]
                self.adaptive = False
            paddings, padding_algorithm, ceil_mode = [0, 0], "EXPLICIT", False
        self.hw, self.k, self.s = list(hw), list(ksize), list(strides)
        self.pads = _resolve_pads(padding_algorithm, paddings, hw, ksize, strides)
        if global_pooling:
            self.out = [1, 1]
        elif not self.adaptive:
            self.out = [
                _out_size(hw[i], self.k[i], self.s[i], self.pads[2 * i], self.pads[2 * i + 1], ceil_mode)
                for i in range(2)
            ]

    @property
    def whole(self) -> bool:
        """One window covering the whole input (global pooling, adaptive to 1x1)."""
        return self.k == self.hw and not any(self.pads)

    def extra_pads(self) -> list[int]:
        """Pads that also cover windows a ceil_mode output runs past the padded input."""
        pads = list(self.pads)
        for i in range(2):
            need = (self.out[i] - 1) * self.s[i] + self.k[i] - (self.hw[i] + pads[2 * i])
            pads[2 * i + 1] = max(pads[2 * i + 1], need)
        return pads

    def divisor(self, exclusive: bool) -> np.ndarray:
        """[OH, OW] element counts avg pooling divides by (host-side index math)."""
        counts = []
        for i in range(2):
            start = np.arange(self.out[i]) * self.s[i] - self.pads[2 * i]
            end = np.minimum(start + self.k[i], self.hw[i] + self.pads[2 * i + 1])
            if exclusive:
                start, end = np.maximum(start, 0), np.minimum(end, self.hw[i])
            counts.append(end - start)
        return np.outer(counts[0], counts[1])

    def cells(self):
        """Adaptive windows: ((h0, h1), (w0, w1)) per output cell, as Paddle's floor/ceil split."""
        (h, w), (oh, ow) = self.hw, self.out
        for a in range(oh):
            for b in range(ow):
                yield a, b, (a * h // oh, -(-(a + 1) * h // oh)), (b * w // ow, -(-(b + 1) * w // ow))


def _pool2d_infer(ctx: InferContext) -> None:
    x = ctx.input_var("X")
    ctx.check_rank("X", (4,))
    _check_window_attrs(ctx, ("ksize", "strides"))
    if ctx.attr("pooling_type") not in ("max", "avg"):
        raise ctx.error(f"pooling_type {ctx.attr('pooling_type')!r}: expected 'max' or 'avg'")
    attrs = {k: ctx.attr(k) for k in _POOL_ATTRS}
    pool = _Pool(x.shape[2:], **attrs)
    if 0 in pool.out:
        raise ctx.error(
            f"ksize {ctx.attr('ksize')} with strides {ctx.attr('strides')} and paddings "
            f"{ctx.attr('paddings')} does not fit X '{x.name}' {fmt_shape(x.shape)}: "
            f"output size {fmt_shape(pool.out)}"
        )
    ctx.set_output("Out", (x.shape[0], x.shape[1], pool.out[0], pool.out[1]), x.dtype)


def _pool2d(xp, x, *, pooling_type, exclusive, **attrs):
    pool = _Pool(x.shape[2:], **attrs)
    if pool.adaptive:
        return _adaptive_pool(xp, x, pool, pooling_type)
    is_max = pooling_type == "max"
    if pool.whole:
        return (xp.max if is_max else xp.mean)(x, axis=(2, 3), keepdims=True)
    xpad = _pad(xp, x, pool.extra_pads(), -np.inf if is_max else 0.0)
    out = None
    for rs in _windows(pool.out[0], pool.k[0], pool.s[0]):
        for cs in _windows(pool.out[1], pool.k[1], pool.s[1]):
            win = xpad[:, :, rs, cs]
            if out is None:
                out = win.copy()
            elif is_max:
                xp.maximum(out, win, out=out)
            else:
                out += win
    if is_max:
        return out
    return out / xp.asarray(pool.divisor(exclusive), dtype=x.dtype)


def _adaptive_pool(xp, x, pool, pooling_type):
    out = xp.empty(x.shape[:2] + tuple(pool.out), dtype=x.dtype)
    reduce = xp.max if pooling_type == "max" else xp.mean
    for a, b, (h0, h1), (w0, w1) in pool.cells():
        out[:, :, a, b] = reduce(x[:, :, h0:h1, w0:w1], axis=(2, 3))
    return out


def _pool2d_grad(xp, x, out, dout, *, pooling_type, exclusive, **attrs):
    pool = _Pool(x.shape[2:], **attrs)
    if pool.adaptive:
        return _adaptive_pool_grad(xp, x, dout, pool, pooling_type)
    pads = pool.extra_pads()
    is_max = pooling_type == "max"
    if pool.whole and not is_max:
        return xp.ascontiguousarray(xp.broadcast_to(dout / x.dtype.type(x.shape[2] * x.shape[3]), x.shape))
    xpad = _pad(xp, x, pads, -np.inf) if is_max else None
    dxpad = xp.zeros(x.shape[:2] + (x.shape[2] + pads[0] + pads[1], x.shape[3] + pads[2] + pads[3]), dtype=x.dtype)
    g = dout if is_max else dout / xp.asarray(pool.divisor(exclusive), dtype=x.dtype)
    taken = xp.zeros(out.shape, dtype=bool) if is_max else None
    for rs in _windows(pool.out[0], pool.k[0], pool.s[0]):
        for cs in _windows(pool.out[1], pool.k[1], pool.s[1]):
            if is_max:  # the first maximum of a window (in scan order) takes the gradient, as in Paddle
                hit = (xpad[:, :, rs, cs] == out) & ~taken
                taken |= hit
                dxpad[:, :, rs, cs] += g * hit
            else:
                dxpad[:, :, rs, cs] += g
    h, w = x.shape[2:]
    return xp.ascontiguousarray(dxpad[:, :, pads[0] : pads[0] + h, pads[2] : pads[2] + w])


def _adaptive_pool_grad(xp, x, dout, pool, pooling_type):
    dx = xp.zeros_like(x)
    for a, b, (h0, h1), (w0, w1) in pool.cells():
        g = dout[:, :, a, b][:, :, None]
        win = x[:, :, h0:h1, w0:w1].reshape(x.shape[0], x.shape[1], -1)
        if pooling_type == "max":
            first = xp.argmax(win, axis=2)[:, :, None]
            g = g * (xp.arange(win.shape[2]) == first)
        else:
            g = xp.broadcast_to(g / x.dtype.type(win.shape[2]), win.shape)
        dx[:, :, h0:h1, w0:w1] += g.reshape(x.shape[0], x.shape[1], h1 - h0, w1 - w0)
    return dx


_POOL_ATTRS = {
    "pooling_type": "max",
    "ksize": [1, 1],
    "strides": [1, 1],
    "paddings": [0, 0],
    "global_pooling": False,
    "exclusive": True,
    "adaptive": False,
    "ceil_mode": False,
    "data_format": "NCHW",
    "padding_algorithm": "EXPLICIT",
}
register_op(
    "pool2d",
    inputs=("X",),
    outputs=("Out",),
    attrs=_POOL_ATTRS,
    infer_shape=_pool2d_infer,
    grad=make_grad_op(inputs=("X", "Out", "Out@GRAD"), outputs=("X@GRAD",)),
    kernel=_pool2d,
)
register_op("pool2d_grad", inputs=("X", "Out", "Out@GRAD"), outputs=("X@GRAD",), attrs=_POOL_ATTRS, kernel=_pool2d_grad)

# -- batch_norm -----------------------------------------------------------------------------------


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

# -- dropout --------------------------------------------------------------------------------------


def _dropout_infer(ctx: InferContext) -> None:
    x = ctx.input_var("X")
    if ctx.attr("dropout_implementation") not in ("downgrade_in_infer", "upscale_in_train"):
        raise ctx.error(
            f"dropout_implementation {ctx.attr('dropout_implementation')!r}: expected "
            "'downgrade_in_infer' or 'upscale_in_train'"
        )
    if not 0.0 <= ctx.attr("dropout_prob") <= 1.0:
        raise ctx.error(f"dropout_prob {ctx.attr('dropout_prob')}: expected a probability in [0, 1]")
    ctx.set_output("Out", x.shape, x.dtype, lod_level=x.lod_level)
    ctx.set_output("Mask", x.shape, "uint8")


def _kept_scale(p: float, implementation: str) -> float:
    """What a kept element is multiplied by in training (1/(1-p) when upscaling, 0 if nothing is kept)."""
    if implementation != "upscale_in_train":
        return 1.0
    return 1.0 / (1.0 - p) if p < 1.0 else 0.0


def _dropout(xp, x, *, dropout_prob, is_test, fix_seed, seed, dropout_implementation, rng):
    if is_test:
        keep = 1.0 if dropout_implementation == "upscale_in_train" else 1.0 - dropout_prob
        return x * x.dtype.type(keep), None
    mask = xp.asarray(rng.uniform(size=x.shape) >= dropout_prob).astype("uint8")
    return x * mask * x.dtype.type(_kept_scale(dropout_prob, dropout_implementation)), mask


def _dropout_grad(xp, mask, dout, *, dropout_prob, is_test, fix_seed, seed, dropout_implementation):
    if is_test:
        keep = 1.0 if dropout_implementation == "upscale_in_train" else 1.0 - dropout_prob
        return dout * dout.dtype.type(keep)
    if mask is None:
        raise ValueError("training-mode dropout_grad needs the forward op's Mask output; bind Mask in dropout")
    return dout * mask * dout.dtype.type(_kept_scale(dropout_prob, dropout_implementation))


def _dropout_grad_infer(ctx: InferContext) -> None:
    g = ctx.input_var("Out@GRAD")
    ctx.set_output("X@GRAD", g.shape, g.dtype)


_DROPOUT_ATTRS = {
    "dropout_prob": 0.5,
    "is_test": False,
    "fix_seed": False,
    "seed": 0,
    "dropout_implementation": "downgrade_in_infer",
}
register_op(
    "dropout",
    inputs=("X",),
    outputs=("Out", "Mask?"),
    attrs=_DROPOUT_ATTRS,
    infer_shape=_dropout_infer,
    grad=make_grad_op(inputs=("Mask", "Out@GRAD"), outputs=("X@GRAD",)),
    kernel=_dropout,
    random=True,
)
register_op(
    "dropout_grad",
    inputs=("Mask?", "Out@GRAD"),
    outputs=("X@GRAD",),
    attrs=_DROPOUT_ATTRS,
    infer_shape=_dropout_grad_infer,
    kernel=_dropout_grad,
)

# -- lookup_table, lookup_table_v2 ----------------------------------------------------------------


def _lookup_infer(v2: bool):
    def infer(ctx: InferContext) -> None:
        w, ids = ctx.input_var("W"), ctx.input_var("Ids")
        ctx.check_rank("W", (2,))
        if ids.dtype not in ("int64", "int32"):
            raise ctx.error(f"Ids '{ids.name}': expected int64 ids, got {ids.dtype}")
        if not v2 and (not ids.shape or ids.shape[-1] not in (1, -1)):
            raise ctx.error(
                f"Ids '{ids.name}' {fmt_shape(ids.shape)}: expected a last dim of 1, "
                "as lookup_table takes [..., 1] ids (lookup_table_v2 takes any shape)"
            )
        lead = ids.shape if v2 else ids.shape[:-1]
        ctx.set_output("Out", tuple(lead) + (w.shape[1],), w.dtype, lod_level=ids.lod_level)

    return infer


def _flat_ids(xp, w, ids, v2: bool):
    flat = astype(xp, reshape(xp, ids, (-1,)), "int64")
    low, high = (int(smallest(xp, flat)), int(largest(xp, flat))) if flat.shape[0] else (0, 0)
    if low < 0 or high >= w.shape[0]:
        raise IndexError(f"ids must lie in [0, {w.shape[0]}); got ids from {low} to {high}")
    lead = ids.shape if v2 else ids.shape[:-1]
    return flat, tuple(lead) + (w.shape[1],)


def _not_padding(xp, w, flat, padding_idx):
    """[n, 1] weights that zero the rows looked up at padding_idx (-1: no padding row)."""
    return mask(xp, flat != padding_idx, w)[:, None] if padding_idx != -1 else None


def _lookup(v2: bool):
    def kernel(xp, w, ids, *, is_sparse, is_distributed, padding_idx, remote_prefetch):
        flat, shape = _flat_ids(xp, w, ids, v2)
        out = w.lookup(flat) if isinstance(w, SparseTable) else xp.take(w, flat, axis=0)
        keep = _not_padding(xp, w, flat, padding_idx)
        return reshape(xp, out if keep is None else out * keep, shape)

    return kernel


def _lookup_grad(v2: bool):
    def kernel(xp, w, ids, dout, *, is_sparse, is_distributed, padding_idx, remote_prefetch):
        flat, _ = _flat_ids(xp, w, ids, v2)
        rows = reshape(xp, dout, (flat.shape[0], w.shape[1]))
        keep = _not_padding(xp, dout, flat, padding_idx)
        rows = rows if keep is None else rows * keep
        if is_sparse:
            return SelectedRows(flat, contiguous(xp, rows), w.shape[0])
        if isinstance(w, SparseTable):
            raise TypeError("a sparse table's gradient must be sparse; expected is_sparse=True")
        dw = xp.zeros_like(w)
        xp.add.at(dw, flat, rows)
        return dw

    return kernel


def _lookup_grad_infer(ctx: InferContext) -> None:
    w = ctx.input_var("W")
    ctx.set_output("W@GRAD", w.shape, w.dtype, type="selected_rows" if ctx.attr("is_sparse") else "dense_tensor")


_LOOKUP_ATTRS = {"is_sparse": False, "is_distributed": False, "padding_idx": -1, "remote_prefetch": False}
for _name, _v2 in (("lookup_table", False), ("lookup_table_v2", True)):
    register_op(
        _name,
        inputs=("W", "Ids"),
        outputs=("Out",),
        attrs=_LOOKUP_ATTRS,
        infer_shape=_lookup_infer(_v2),
        grad=make_grad_op(inputs=("W", "Ids", "Out@GRAD"), outputs=("W@GRAD",)),
        kernel=_lookup(_v2),
    )
    register_op(
        _name + "_grad",
        inputs=("W", "Ids", "Out@GRAD"),
        outputs=("W@GRAD",),
        attrs=_LOOKUP_ATTRS,
        infer_shape=_lookup_grad_infer,
        kernel=_lookup_grad(_v2),
    )
