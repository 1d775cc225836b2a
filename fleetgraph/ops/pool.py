"""Pooling ops: pool2d (max or average; global, adaptive, ceil mode) and its gradient."""

from __future__ import annotations

import numpy as np

from ..ir import InferContext, make_grad_op, register_op
from ..ir.errors import fmt_shape
from ._window import check_window_attrs, out_size, pad, resolve_pads, windows


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
        self.pads = resolve_pads(padding_algorithm, paddings, hw, ksize, strides)
        if global_pooling:
            self.out = [1, 1]
        elif not self.adaptive:
            self.out = [
                out_size(hw[i], self.k[i], self.s[i], self.pads[2 * i], self.pads[2 * i + 1], ceil_mode)
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
    check_window_attrs(ctx, ("ksize", "strides"))
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
    xpad = pad(xp, x, pool.extra_pads(), -np.inf if is_max else 0.0)
    out = None
    for rs in windows(pool.out[0], pool.k[0], pool.s[0]):
        for cs in windows(pool.out[1], pool.k[1], pool.s[1]):
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
    xpad = pad(xp, x, pads, -np.inf) if is_max else None
    dxpad = xp.zeros(x.shape[:2] + (x.shape[2] + pads[0] + pads[1], x.shape[3] + pads[2] + pads[3]), dtype=x.dtype)
    g = dout if is_max else dout / xp.asarray(pool.divisor(exclusive), dtype=x.dtype)
    taken = xp.zeros(out.shape, dtype=bool) if is_max else None
    for rs in windows(pool.out[0], pool.k[0], pool.s[0]):
        for cs in windows(pool.out[1], pool.k[1], pool.s[1]):
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
