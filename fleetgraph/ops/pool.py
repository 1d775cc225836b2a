"""Pooling ops: pool2d (max or average; global, adaptive, ceil mode, exclusive, channel-last) and its
gradient; `register_pool` declares pool3d (ops/conv_nd.py) from the same kernels."""

from __future__ import annotations

import functools
import itertools

import numpy as np

from ..ir import InferContext, make_grad_op, register_op
from ..ir.errors import fmt_shape
from . import _xp
from ._window import (
    check_window_attrs,
    from_channel_first,
    layout_shape,
    out_size,
    pad,
    resolve_pads,
    spatial,
    to_channel_first,
    unpad,
    window_offsets,
)

# Paddle's max pooling starts each window at -FLT_MAX and never reads padding: padding with it gives
# the same maximum, -FLT_MAX for a window wholly outside the input (a ceil_mode overhang) included
_LOWEST = -float(np.finfo(np.float32).max)


def adaptive_bounds(i: int, size: int, out: int) -> tuple[int, int]:
    """Paddle's AdaptStartIndex/AdaptEndIndex: floor(i * size / out), ceil((i + 1) * size / out)."""
    return i * size // out, -(-(i + 1) * size // out)


class Pool:
    """One pooling's windows over its spatial axes, resolved from the input sizes and the attrs."""

    def __init__(self, sizes, *, ksize, strides, paddings, global_pooling, adaptive, ceil_mode, padding_algorithm, **_):
        nd = len(sizes)
        self.adaptive = adaptive and not global_pooling
        if global_pooling:
            ksize, strides, paddings, padding_algorithm = list(sizes), [1] * nd, [0] * nd, "EXPLICIT"
        elif self.adaptive:
            self.out = list(ksize)
            if all(n >= 0 and n % o == 0 for n, o in zip(sizes, ksize)):  # even windows: a plain pooling
                ksize = strides = [n // o for n, o in zip(sizes, ksize)]
                self.adaptive = False
            paddings, padding_algorithm, ceil_mode = [0] * nd, "EXPLICIT", False
        self.sizes, self.k, self.s = list(sizes), list(ksize), list(strides)
        self.pads = resolve_pads(padding_algorithm, paddings, sizes, ksize, strides)
        if global_pooling:
            self.out = [1] * nd
        elif not self.adaptive:
            self.out = [
                out_size(sizes[i], self.k[i], self.s[i], self.pads[2 * i], self.pads[2 * i + 1], ceil_mode)
                for i in range(nd)
            ]

    @property
    def axes(self) -> tuple[int, ...]:
        return tuple(range(2, 2 + len(self.sizes)))

    @property
    def whole(self) -> bool:
        """One window covering the whole input (global pooling, adaptive to 1x1)."""
        return self.k == self.sizes and not any(self.pads)

    def extra_pads(self) -> list[int]:
        """Pads that also cover windows a ceil_mode output runs past the padded input."""
        pads = list(self.pads)
        for i in range(len(self.sizes)):
            need = (self.out[i] - 1) * self.s[i] + self.k[i] - (self.sizes[i] + pads[2 * i])
            pads[2 * i + 1] = max(pads[2 * i + 1], need)
        return pads

    def divisor(self, exclusive: bool) -> np.ndarray:
        """Element counts avg pooling divides each output by (host-side index math)."""
        counts = []
        for i in range(len(self.sizes)):
            start = np.arange(self.out[i]) * self.s[i] - self.pads[2 * i]
            end = np.minimum(start + self.k[i], self.sizes[i] + self.pads[2 * i + 1])
            if exclusive:
                start, end = np.maximum(start, 0), np.minimum(end, self.sizes[i])
            counts.append(end - start)
        return functools.reduce(np.multiply.outer, counts)

    def cells(self):
        """Adaptive windows: (output index, input slices) per output cell, as Paddle's floor/ceil split."""
        per_axis = [[(a, slice(*adaptive_bounds(a, n, o))) for a in range(o)] for n, o in zip(self.sizes, self.out)]
        for combo in itertools.product(*per_axis):
            yield tuple(a for a, _ in combo), tuple(s for _, s in combo)


def _pool_infer(nd: int):
    def infer(ctx: InferContext) -> None:
        x = ctx.input_var("X")
        ctx.check_rank("X", (nd + 2,))
        check_window_attrs(ctx, ("ksize", "strides"), nd)
        if ctx.attr("pooling_type") not in ("max", "avg"):
            raise ctx.error(f"pooling_type {ctx.attr('pooling_type')!r}: expected 'max' or 'avg'")
        c, sizes = spatial(x.shape, ctx.attr("data_format"))
        pool = Pool(sizes, **{k: ctx.attr(k) for k in pool_attrs(nd, "")})
        if 0 in pool.out:
            raise ctx.error(
                f"ksize {ctx.attr('ksize')} with strides {ctx.attr('strides')} and paddings "
                f"{ctx.attr('paddings')} does not fit X '{x.name}' {fmt_shape(x.shape)}: "
                f"output size {fmt_shape(pool.out)}"
            )
        ctx.set_output("Out", layout_shape(x.shape[0], c, pool.out, ctx.attr("data_format")), x.dtype)

    return infer


def _pool(xp, x, *, pooling_type, exclusive, data_format, **attrs):
    x = to_channel_first(xp, x, data_format)
    pool = Pool(x.shape[2:], **attrs)
    return from_channel_first(xp, _pool_nc(xp, x, pool, pooling_type, exclusive), data_format)


def _pool_nc(xp, x, pool, pooling_type, exclusive):
    if pool.adaptive:
        return _adaptive_pool(xp, x, pool, pooling_type)
    is_max = pooling_type == "max"
    if pool.whole:
        return (xp.max if is_max else xp.mean)(x, axis=pool.axes, keepdims=True)
    xpad = pad(xp, x, pool.extra_pads(), _LOWEST if is_max else 0.0)
    out = None
    for _, sl in window_offsets(pool.out, pool.k, pool.s):
        win = xpad[(..., *sl)]
        out = win if out is None else xp.maximum(out, win) if is_max else out + win
    if is_max:
        return out
    return out / xp.asarray(pool.divisor(exclusive), dtype=x.dtype)


def _adaptive_pool(xp, x, pool, pooling_type):
    out = xp.empty(tuple(x.shape[:2]) + tuple(pool.out), dtype=x.dtype)
    reduce = xp.max if pooling_type == "max" else xp.mean
    for idx, sl in pool.cells():
        out[(..., *idx)] = reduce(x[(..., *sl)], axis=pool.axes)
    return out


def _pool_grad(xp, x, out, dout, *, pooling_type, exclusive, data_format, **attrs):
    x, out, dout = (to_channel_first(xp, v, data_format) for v in (x, out, dout))
    pool = Pool(x.shape[2:], **attrs)
    if pool.adaptive:
        dx = _adaptive_pool_grad(xp, x, dout, pool, pooling_type)
    else:
        dx = _window_pool_grad(xp, x, out, dout, pool, pooling_type, exclusive)
    return from_channel_first(xp, dx, data_format)


def _window_pool_grad(xp, x, out, dout, pool, pooling_type, exclusive):
    pads = pool.extra_pads()
    is_max = pooling_type == "max"
    if pool.whole and not is_max:
        count = _xp.scalar(xp, x, np.prod(x.shape[2:]))
        return dout / count * xp.ones_like(x)
    xpad = pad(xp, x, pads, _LOWEST) if is_max else None
    nd = len(pool.sizes)
    padded = [x.shape[2 + i] + pads[2 * i] + pads[2 * i + 1] for i in range(nd)]
    dxpad = xp.zeros(tuple(x.shape[:2]) + tuple(padded), dtype=x.dtype)
    g = dout if is_max else dout / xp.asarray(pool.divisor(exclusive), dtype=x.dtype)
    taken = xp.zeros(out.shape, dtype=xp.bool) if is_max else None
    for _, sl in window_offsets(pool.out, pool.k, pool.s):
        if is_max:  # the first maximum of a window (in scan order) takes the gradient, as in Paddle
            hit = (xpad[(..., *sl)] == out) & ~taken
            taken = taken | hit
            dxpad[(..., *sl)] += g * _xp.mask(xp, hit, g)
        else:
            dxpad[(..., *sl)] += g
    return unpad(dxpad, pads, x.shape[2:])


def _adaptive_pool_grad(xp, x, dout, pool, pooling_type):
    dx = xp.zeros_like(x)
    n, c = x.shape[:2]
    for idx, sl in pool.cells():
        g = xp.reshape(dout[(..., *idx)], (n, c, 1))
        win = xp.reshape(x[(..., *sl)], (n, c, -1))
        if pooling_type == "max":
            first = xp.argmax(win, axis=2, keepdims=True)
            g = g * _xp.mask(xp, xp.arange(win.shape[2]) == first, g)
        else:
            g = g / _xp.scalar(xp, x, win.shape[2]) * xp.ones_like(win)
        dx[(..., *sl)] += xp.reshape(g, x[(..., *sl)].shape)
    return dx


def pool_attrs(nd: int, data_format: str) -> dict:
    return {
        "pooling_type": "max",
        "ksize": [1] * nd,
        "strides": [1] * nd,
        "paddings": [0] * nd,
        "global_pooling": False,
        "exclusive": True,
        "adaptive": False,
        "ceil_mode": False,
        "data_format": data_format,
        "padding_algorithm": "EXPLICIT",
    }


def register_pool(op_type: str, nd: int, data_format: str) -> None:
    attrs = pool_attrs(nd, data_format)
    register_op(
        op_type,
        inputs=("X",),
        outputs=("Out",),
        attrs=attrs,
        infer_shape=_pool_infer(nd),
        grad=make_grad_op(inputs=("X", "Out", "Out@GRAD"), outputs=("X@GRAD",)),
        kernel=_pool,
    )
    register_op(op_type + "_grad", inputs=("X", "Out", "Out@GRAD"), outputs=("X@GRAD",), attrs=attrs, kernel=_pool_grad)


register_pool("pool2d", 2, "NCHW")
