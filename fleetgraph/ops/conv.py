"""Convolution ops: conv2d and its gradient, as a matrix product over im2col patches."""

from __future__ import annotations

from ..ir import InferContext, make_grad_op, register_op
from ..ir.errors import fmt_shape
from ._window import check_window_attrs, out_size, pad, resolve_pads, windows


def _conv_geometry(x_shape, w_shape, strides, paddings, dilations, padding_algorithm):
    """(pads, dilations, output [h, w]) of a convolution; -1 where the input size is unknown."""
    k_hw = w_shape[2:]
    pads = resolve_pads(padding_algorithm, paddings, x_shape[2:], k_hw, strides)
    dils = [1, 1] if padding_algorithm == "SAME" else list(dilations)
    out = [
        out_size(x_shape[2 + i], dils[i] * (k_hw[i] - 1) + 1, strides[i], pads[2 * i], pads[2 * i + 1])
        for i in range(2)
    ]
    return pads, dils, out


def _conv2d_infer(ctx: InferContext) -> None:
    x, w = ctx.input_var("Input"), ctx.input_var("Filter")
    ctx.check_rank("Input", (4,))
    ctx.check_rank("Filter", (4,))
    check_window_attrs(ctx, ("strides", "dilations"))
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
        self.rows = windows(self.oh, self.kh, strides[0], self.dils[0])
        self.cols = windows(self.ow, self.kw, strides[1], self.dils[1])

    def im2col(self, xp, x):
        """[groups, C/groups * kh * kw, N * OH * OW] patches, built with one copy per kernel offset."""
        xt = pad(xp, x, self.pads).transpose(1, 0, 2, 3)
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
