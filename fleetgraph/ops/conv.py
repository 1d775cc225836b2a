"""Convolution ops: conv2d and its gradient, as a matrix product over im2col patches; the geometry
class and the registration serve conv3d and the transposed convolutions (ops/conv_nd.py) too."""

from __future__ import annotations

import math

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


def conv_geometry(sizes, k, strides, paddings, dilations, padding_algorithm):
    """(pads, dilations) of a convolution over inputs of spatial `sizes` (SAME drops the dilation, as
    Paddle's UpdatePaddingAndDilation)."""
    pads = resolve_pads(padding_algorithm, paddings, sizes, k, strides)
    dils = [1] * len(k) if padding_algorithm == "SAME" else [int(d) for d in dilations]
    return pads, dils


def conv_out_sizes(sizes, k, strides, pads, dils) -> list[int]:
    return [
        out_size(sizes[i], dils[i] * (k[i] - 1) + 1, strides[i], pads[2 * i], pads[2 * i + 1]) for i in range(len(k))
    ]


class Conv:
    """One convolution, channel-first: input [N, C, *sizes], filter [M, C/groups, *k], output
    [N, M, *out]. A transposed convolution is this convolution run backwards (ops/conv_nd.py)."""

    def __init__(self, n, c, sizes, w_shape, out, pads, dils, strides, groups):
        self.n, self.c, self.sizes = n, c, list(sizes)
        self.m, self.k = w_shape[0], list(w_shape[2:])
        self.out, self.pads, self.dils, self.strides, self.groups = list(out), pads, dils, list(strides), groups

    @classmethod
    def forward(cls, x_shape, w_shape, strides, paddings, dilations, groups, padding_algorithm) -> Conv:
        k = list(w_shape[2:])
        pads, dils = conv_geometry(x_shape[2:], k, strides, paddings, dilations, padding_algorithm)
        out = conv_out_sizes(x_shape[2:], k, strides, pads, dils)
        return cls(x_shape[0], x_shape[1], x_shape[2:], w_shape, out, pads, dils, strides, groups)

    def cols(self, xp, x):
        """im2col: [groups, C/groups * prod(k), N * prod(out)], one copy per kernel offset."""
        nd = len(self.k)
        xt = xp.permute_dims(pad(xp, x, self.pads), (1, 0, *range(2, nd + 2)))
        cols = xp.empty((self.c, *self.k, self.n, *self.out), dtype=x.dtype)
        for idx, sl in window_offsets(self.out, self.k, self.strides, self.dils):
            cols[(slice(None), *idx, ...)] = xt[(slice(None), slice(None), *sl)]
        return _xp.reshape(xp, cols, (self.groups, -1, self.n * math.prod(self.out)))

    def col2im(self, xp, dcols):
        """The adjoint of `cols`: each patch entry added back to the input position it came from."""
        nd = len(self.k)
        dcols = _xp.reshape(xp, dcols, (self.c, *self.k, self.n, *self.out))
        padded = [self.sizes[i] + self.pads[2 * i] + self.pads[2 * i + 1] for i in range(nd)]
        dxt = xp.zeros((self.c, self.n, *padded), dtype=dcols.dtype)
        for idx, sl in window_offsets(self.out, self.k, self.strides, self.dils):
            dxt[(slice(None), slice(None), *sl)] += dcols[(slice(None), *idx, ...)]
        return xp.permute_dims(unpad(dxt, self.pads, self.sizes), (1, 0, *range(2, nd + 2)))

    def rows(self, xp, y):
        """An output-shaped [N, M, *out] array as [groups, M/groups, N * prod(out)]."""
        yt = xp.permute_dims(y, (1, 0, *range(2, y.ndim)))
        return _xp.reshape(xp, yt, (self.groups, self.m // self.groups, -1))

    def unrows(self, xp, r):
        r = _xp.reshape(xp, r, (self.m, self.n, *self.out))
        return xp.permute_dims(r, (1, 0, *range(2, r.ndim)))

    def filter_matrix(self, xp, w):
        return _xp.reshape(xp, w, (self.groups, self.m // self.groups, -1))

    def apply(self, xp, x, w):
        """The convolution of input x: [N, M, *out]."""
        return self.unrows(xp, xp.matmul(self.filter_matrix(xp, w), self.cols(xp, x)))

    def apply_adjoint(self, xp, y, w):
        """The input gradient of an output gradient y: [N, C, *sizes]."""
        return self.col2im(xp, xp.matmul(xp.matrix_transpose(self.filter_matrix(xp, w)), self.rows(xp, y)))

    def filter_grad(self, xp, x, y, w_shape):
        """The filter gradient of input x and output gradient y."""
        return _xp.reshape(xp, xp.matmul(self.rows(xp, y), xp.matrix_transpose(self.cols(xp, x))), w_shape)


def check_filter(ctx: InferContext, in_channels: int, filter_in: int, groups: int, out_channels: int) -> None:
    """A filter [out_channels, filter_in, *k] fits an input of in_channels under groups."""
    x, w = ctx.input_var("Input"), ctx.input_var("Filter")
    if groups < 1 or out_channels % groups:
        raise ctx.error(
            f"Filter '{w.name}' {fmt_shape(w.shape)} has {out_channels} output channels, not divisible by "
            f"groups {groups}"
        )
    if in_channels >= 0 and in_channels != filter_in:
        raise ctx.error(
            f"Filter '{w.name}' {fmt_shape(w.shape)} expects {filter_in} input channels (groups {groups}), "
            f"got Input '{x.name}' {fmt_shape(x.shape)}"
        )
    if x.dtype != w.dtype:
        raise ctx.error(f"Input '{x.name}' is {x.dtype} but Filter '{w.name}' is {w.dtype}; expected the same dtype")


def check_out(ctx: InferContext, out) -> None:
    if 0 in out:
        x, w = ctx.input_var("Input"), ctx.input_var("Filter")
        raise ctx.error(
            f"Filter '{w.name}' {fmt_shape(w.shape)} with strides {ctx.attr('strides')}, paddings "
            f"{ctx.attr('paddings')} and dilations {ctx.attr('dilations')} does not fit Input "
            f"'{x.name}' {fmt_shape(x.shape)}: output size {fmt_shape(out)}"
        )


def _conv_infer(nd: int):
    def infer(ctx: InferContext) -> None:
        x, w = ctx.input_var("Input"), ctx.input_var("Filter")
        ctx.check_rank("Input", (nd + 2,))
        ctx.check_rank("Filter", (nd + 2,))
        check_window_attrs(ctx, ("strides", "dilations"), nd)
        fmt, groups = ctx.attr("data_format"), ctx.attr("groups")
        c, sizes = spatial(x.shape, fmt)
        check_filter(ctx, c, w.shape[1] * groups, groups, w.shape[0])
        k = w.shape[2:]
        pads, dils = conv_geometry(
            sizes, k, ctx.attr("strides"), ctx.attr("paddings"), ctx.attr("dilations"), ctx.attr("padding_algorithm")
        )
        out = conv_out_sizes(sizes, k, ctx.attr("strides"), pads, dils)
        check_out(ctx, out)
        ctx.set_output("Output", layout_shape(x.shape[0], w.shape[0], out, fmt), x.dtype)

    return infer


def _conv(xp, x, w, *, strides, paddings, dilations, groups, data_format, padding_algorithm):
    x = to_channel_first(xp, x, data_format)
    conv = Conv.forward(x.shape, w.shape, strides, paddings, dilations, groups, padding_algorithm)
    return from_channel_first(xp, conv.apply(xp, x, w), data_format)


def _conv_grad(xp, x, w, dout, *, strides, paddings, dilations, groups, data_format, padding_algorithm, need):
    x, dout = to_channel_first(xp, x, data_format), to_channel_first(xp, dout, data_format)
    conv = Conv.forward(x.shape, w.shape, strides, paddings, dilations, groups, padding_algorithm)
    dx = dw = None
    if "Filter@GRAD" in need:
        dw = conv.filter_grad(xp, x, dout, w.shape)
    if "Input@GRAD" in need:
        dx = from_channel_first(xp, conv.apply_adjoint(xp, dout, w), data_format)
    return dx, dw


def conv_attrs(nd: int, data_format: str) -> dict:
    return {
        "strides": [1] * nd,
        "paddings": [0] * nd,
        "dilations": [1] * nd,
        "groups": 1,
        "data_format": data_format,
        "padding_algorithm": "EXPLICIT",
    }


def register_conv_pair(op_type: str, attrs: dict, infer_shape, kernel, grad_kernel) -> None:
    """A convolution-like op (Input, Filter -> Output) and its `_grad` op (Input and Filter gradients)."""
    register_op(
        op_type,
        inputs=("Input", "Filter"),
        outputs=("Output",),
        attrs=attrs,
        infer_shape=infer_shape,
        grad=make_grad_op(inputs=("Input", "Filter", "Output@GRAD"), outputs=("Input@GRAD", "Filter@GRAD")),
        kernel=kernel,
    )
    register_op(
        op_type + "_grad",
        inputs=("Input", "Filter", "Output@GRAD"),
        outputs=("Input@GRAD", "Filter@GRAD"),
        attrs=attrs,
        kernel=grad_kernel,
        wants_outputs=True,
    )


def register_conv(op_type: str, nd: int, data_format: str) -> None:
    register_conv_pair(op_type, conv_attrs(nd, data_format), _conv_infer(nd), _conv, _conv_grad)


register_conv("conv2d", 2, "NCHW")
