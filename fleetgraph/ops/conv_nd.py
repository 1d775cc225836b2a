"""Transposed and 3-D convolutions and 3-D/adaptive pooling: conv3d, depthwise_conv2d, conv2d_transpose
(and its depthwise spelling), conv3d_transpose, pool3d, and max_pool{2,3}d_with_index with their gradients.

A transposed convolution is the input gradient of the convolution whose output is its input: its
forward is that convolution's col2im, its input gradient that convolution's forward (ops/conv.py)."""

from __future__ import annotations

import itertools

import numpy as np

from ..ir import InferContext, make_grad_op, register_op
from ..ir.errors import fmt_shape
from . import _xp
from ._window import check_window_attrs, from_channel_first, layout_shape, spatial, to_channel_first
from .conv import Conv, check_filter, conv_attrs, conv_geometry, register_conv, register_conv_pair
from .pool import adaptive_bounds, register_pool

register_conv("conv3d", 3, "NCDHW")
register_conv("depthwise_conv2d", 2, "NCHW")  # Paddle's conv2d layer picks it for groups == channels
register_pool("pool3d", 3, "NCDHW")


# -- transposed convolutions ---------------------------------------------------------------------


def _transpose_sizes(sizes, k, strides, pads, dils, output_size) -> list[int]:
    """Paddle's (in - 1) * stride - pads + dilated kernel per axis, or output_size where given."""
    out = []
    for i, n in enumerate(sizes):
        least = (n - 1) * strides[i] - pads[2 * i] - pads[2 * i + 1] + dils[i] * (k[i] - 1) + 1 if n >= 0 else -1
        out.append(int(output_size[i]) if output_size else least)
    return out


def _transposed(x_shape, w_shape, output_size, strides, paddings, dilations, groups, padding_algorithm) -> Conv:
    """The convolution of an input shaped like the output into x's shape; pads from x's sizes, as Paddle's."""
    k, sizes = list(w_shape[2:]), x_shape[2:]
    pads, dils = conv_geometry(sizes, k, strides, paddings, dilations, padding_algorithm)
    out = _transpose_sizes(sizes, k, strides, pads, dils, output_size)
    return Conv(x_shape[0], w_shape[1] * groups, out, w_shape, sizes, pads, dils, strides, groups)


def _conv_transpose_infer(nd: int):
    def infer(ctx: InferContext) -> None:
        x, w = ctx.input_var("Input"), ctx.input_var("Filter")
        ctx.check_rank("Input", (nd + 2,))
        ctx.check_rank("Filter", (nd + 2,))
        check_window_attrs(ctx, ("strides", "dilations"), nd)
        fmt, groups, output_size = ctx.attr("data_format"), ctx.attr("groups"), ctx.attr("output_size")
        if output_size and len(output_size) != nd:
            raise ctx.error(f"output_size {output_size}: expected {nd} values, as strides")
        c, sizes = spatial(x.shape, fmt)
        check_filter(ctx, c, w.shape[0], groups, w.shape[0])
        k, strides = w.shape[2:], ctx.attr("strides")
        pads, dils = conv_geometry(
            sizes, k, strides, ctx.attr("paddings"), ctx.attr("dilations"), ctx.attr("padding_algorithm")
        )
        least = _transpose_sizes(sizes, k, strides, pads, dils, [])
        for i, n in enumerate(output_size or []):
            if least[i] >= 0 and not least[i] <= n < least[i] + strides[i]:
                raise ctx.error(
                    f"output_size {list(output_size)} of Input '{x.name}' {fmt_shape(x.shape)}: expected axis {i} "
                    f"in [{least[i]}, {least[i] + strides[i]}), the sizes whose convolution gives the input"
                )
        out = _transpose_sizes(sizes, k, strides, pads, dils, output_size)
        if any(d == 0 or d < -1 for d in out):
            raise ctx.error(
                f"Filter '{w.name}' {fmt_shape(w.shape)} with strides {strides} and paddings "
                f"{ctx.attr('paddings')} leaves no output for Input '{x.name}' {fmt_shape(x.shape)}: {fmt_shape(out)}"
            )
        ctx.set_output("Output", layout_shape(x.shape[0], w.shape[1] * groups, out, fmt), x.dtype)

    return infer


def _conv_transpose(xp, x, w, *, data_format, **attrs):
    x = to_channel_first(xp, x, data_format)
    conv = _transposed(x.shape, w.shape, **attrs)
    return from_channel_first(xp, conv.apply_adjoint(xp, x, w), data_format)


def _conv_transpose_grad(xp, x, w, dout, *, data_format, need, **attrs):
    x, dout = to_channel_first(xp, x, data_format), to_channel_first(xp, dout, data_format)
    conv = _transposed(x.shape, w.shape, **attrs)
    dx = dw = None
    if "Filter@GRAD" in need:
        dw = conv.filter_grad(xp, dout, x, w.shape)
    if "Input@GRAD" in need:
        dx = from_channel_first(xp, conv.apply(xp, dout, w), data_format)
    return dx, dw


for _type, _nd, _fmt in (
    ("conv2d_transpose", 2, "NCHW"),
    ("depthwise_conv2d_transpose", 2, "NCHW"),
    ("conv3d_transpose", 3, "NCDHW"),
):
    register_conv_pair(
        _type,
        {"output_size": [], **conv_attrs(_nd, _fmt)},
        _conv_transpose_infer(_nd),
        _conv_transpose,
        _conv_transpose_grad,
    )


# -- max pooling with the index of each maximum --------------------------------------------------


def _index_cells(sizes, ksize, global_pooling, strides, paddings, adaptive):
    """(output sizes, [(output index, input slices)]) of Paddle's MaxPoolWithIndex: windows clipped
    to the input (padding never holds a maximum), or the adaptive floor/ceil split."""
    if global_pooling:
        ksize, paddings = list(sizes), [0] * len(sizes)
    if adaptive:
        per_axis = [[(a, adaptive_bounds(a, n, o)) for a in range(o)] for n, o in zip(sizes, ksize)]
    else:
        per_axis = []
        for n, k, s, p in zip(sizes, ksize, strides, paddings):
            starts = [a * s - p for a in range((n - k + 2 * p) // s + 1)]
            per_axis.append([(a, (max(b, 0), min(b + k, n))) for a, b in enumerate(starts)])
    out = [len(axis) for axis in per_axis]
    cells = [
        (tuple(a for a, _ in combo), tuple(slice(*bounds) for _, bounds in combo))
        for combo in itertools.product(*per_axis)
    ]
    return out, cells


def _flat_positions(sizes, sl) -> np.ndarray:
    """The row-major index within the spatial plane of every element of window `sl`."""
    grids = np.meshgrid(*(np.arange(s.start, s.stop) for s in sl), indexing="ij")
    return np.ravel_multi_index(tuple(grids), tuple(sizes))


def _with_index_infer(nd: int):
    def infer(ctx: InferContext) -> None:
        x = ctx.input_var("X")
        ctx.check_rank("X", (nd + 2,))
        for name in ("ksize", "strides", "paddings"):
            if len(ctx.attr(name)) != nd:
                raise ctx.error(f"{name} {ctx.attr(name)}: expected {nd} values")
        sizes, s = x.shape[2:], ctx.attr("strides")
        k, p = ctx.attr("ksize"), ctx.attr("paddings")
        if ctx.attr("global_pooling"):  # as Paddle's: the window is the input, even for adaptive
            k, p = list(sizes), [0] * nd
        if ctx.attr("adaptive"):
            out = list(k)
        else:
            out = [(n - k[i] + 2 * p[i]) // s[i] + 1 if n >= 0 else -1 for i, n in enumerate(sizes)]
        if 0 in out:
            raise ctx.error(f"ksize {ctx.attr('ksize')} does not fit X '{x.name}' {fmt_shape(x.shape)}: {out}")
        shape = (x.shape[0], x.shape[1], *out)
        ctx.set_output("Out", shape, x.dtype)
        ctx.set_output("Mask", shape, "int32")

    return infer


def _max_pool_with_index(xp, x, **attrs):
    n, c, sizes = x.shape[0], x.shape[1], x.shape[2:]
    out_sizes, cells = _index_cells(sizes, **attrs)
    out = xp.empty((n, c, *out_sizes), dtype=x.dtype)
    mask = xp.empty((n, c, *out_sizes), dtype=xp.int32)
    for idx, sl in cells:
        win = xp.reshape(x[(..., *sl)], (n, c, -1))
        out[(..., *idx)] = xp.max(win, axis=2)
        where = xp.asarray(_flat_positions(sizes, sl).reshape(-1).astype(np.int32))
        mask[(..., *idx)] = _take_flat(xp, where, xp.argmax(win, axis=2))
    return out, mask


def _take_flat(xp, table, index):
    """table[index] for an index array of any shape."""
    return xp.reshape(xp.take(table, xp.reshape(index, (-1,)), axis=0), index.shape)


def _max_pool_with_index_grad(xp, x, mask, dout, **attrs):
    sizes = x.shape[2:]
    _, cells = _index_cells(sizes, **attrs)
    dx = xp.zeros_like(x)
    nd = len(sizes)
    for idx, sl in cells:
        where = xp.asarray(_flat_positions(sizes, sl).astype(np.int32))
        picked = xp.reshape(mask[(..., *idx)], mask.shape[:2] + (1,) * nd)
        g = xp.reshape(dout[(..., *idx)], dout.shape[:2] + (1,) * nd)
        dx[(..., *sl)] += g * _xp.mask(xp, where == picked, g)
    return dx


for _nd in (2, 3):
    _attrs = {
        "ksize": [1] * _nd,
        "global_pooling": False,
        "strides": [1] * _nd,
        "paddings": [0] * _nd,
        "adaptive": False,
    }
    register_op(
        f"max_pool{_nd}d_with_index",
        inputs=("X",),
        outputs=("Out", "Mask"),
        attrs=_attrs,
        infer_shape=_with_index_infer(_nd),
        grad=make_grad_op(inputs=("X", "Mask", "Out@GRAD"), outputs=("X@GRAD",)),
        kernel=_max_pool_with_index,
    )
    register_op(
        f"max_pool{_nd}d_with_index_grad",
        inputs=("X", "Mask", "Out@GRAD"),
        outputs=("X@GRAD",),
        attrs=_attrs,
        kernel=_max_pool_with_index_grad,
    )
