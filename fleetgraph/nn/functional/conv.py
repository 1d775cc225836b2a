"""`paddle.nn.functional.conv` (Paddle 2.0's python/paddle/nn/functional/conv.py): convolutions over
1, 2 and 3 spatial axes and their transposes, of a caller's weight; the 1-D ones are the 2-D ops over
an inserted axis of size 1, as Paddle's."""

from __future__ import annotations

from ...dygraph.dispatch import bind
from ...ir.errors import FleetgraphError
from ...layers.conv_nd import check_layout, ints, padding_attrs
from ...layers.tensor_shape import squeeze, unsqueeze

__all__ = ["conv1d", "conv1d_transpose", "conv2d", "conv2d_transpose", "conv3d", "conv3d_transpose"]

_LAYOUT_1D = {"NCL": "NCHW", "NLC": "NHWC"}


def add_channel_bias(out, bias, channel_axis: int):
    """out plus the per-channel `bias` (none when bias is None)."""
    if bias is None:
        return out
    return bind("elementwise_add", {"X": [out], "Y": [bias]}, {"axis": channel_axis})


def as_2d(layer: str, stride, padding, dilation, data_format: str):
    """The 2-D arguments of a 1-D call (the inserted H axis of size 1 unpadded, stride and dilation 1)
    and the axis inserted into x: Paddle's padding forms 'same'/'valid', an int, [p] or [before, after]."""
    if data_format not in _LAYOUT_1D:
        raise FleetgraphError(f"{layer}: data_format expected 'NCL' or 'NLC', got {data_format!r}")
    if not isinstance(padding, str):
        pads = ints(layer, "padding", padding, 1) if not isinstance(padding, (list, tuple)) else list(padding)
        if len(pads) not in (1, 2):
            raise FleetgraphError(f"{layer}: padding expected an int, [p] or [before, after], got {padding!r}")
        padding = [0, *pads] if len(pads) == 1 else [0, 0, *pads]
    stride = [1, *ints(layer, "stride", stride, 1)]
    dilation = [1, *ints(layer, "dilation", dilation, 1)]
    return stride, padding, dilation, _LAYOUT_1D[data_format], 1 if data_format == "NLC" else 2


def _conv(op, nd, x, weight, bias, stride, padding, dilation, groups, data_format, name):
    last = check_layout(op, data_format, nd)
    algorithm, paddings = padding_attrs(op, padding, nd, data_format)
    attrs = {
        "strides": ints(op, "stride", stride, nd),
        "paddings": paddings,
        "padding_algorithm": algorithm,
        "dilations": ints(op, "dilation", dilation, nd),
        "groups": int(groups),
        "data_format": data_format,
    }
    out = bind(op, {"Input": [x], "Filter": [weight]}, attrs, out_slot="Output", name=name)
    return add_channel_bias(out, bias, nd + 1 if last else 1)


def _conv_transpose(
    op, nd, x, weight, bias, stride, padding, output_padding, dilation, groups, output_size, data_format, name
):
    """Paddle 2.0's output_padding, exclusive with output_size, becomes the output_size it gives:
    (in - 1) * stride - pads + dilation * (k - 1) + 1 + output_padding per axis."""
    fmt = data_format
    last = check_layout(op, fmt, nd)
    algorithm, paddings = padding_attrs(op, padding, nd, fmt)
    strides, dilations = ints(op, "stride", stride, nd), ints(op, "dilation", dilation, nd)
    extra = ints(op, "output_padding", output_padding, nd)
    if any(extra):
        if output_size is not None:
            raise ValueError(f"{op}: output_padding option is mutually exclusive with output_size")
        if algorithm != "EXPLICIT":
            raise NotImplementedError(f"{op}: output_padding with padding {padding!r}; expected numeric padding")
        sizes, k = (x.shape[1:-1] if last else x.shape[2:]), weight.shape[2:]
        pads = paddings if len(paddings) == 2 * nd else [p for v in paddings for p in (v, v)]
        output_size = [
            (sizes[i] - 1) * strides[i] - pads[2 * i] - pads[2 * i + 1] + dilations[i] * (k[i] - 1) + 1 + extra[i]
            for i in range(nd)
        ]
    attrs = {
        "output_size": [] if output_size is None else ints(op, "output_size", output_size, nd),
        "strides": strides,
        "paddings": paddings,
        "padding_algorithm": algorithm,
        "dilations": dilations,
        "groups": int(groups),
        # conv3d_transpose takes the 2-D spelling of its layout, as Paddle's
        "data_format": ("NHWC" if last else "NCHW") if nd == 3 else fmt,
    }
    out = bind(op, {"Input": [x], "Filter": [weight]}, attrs, out_slot="Output", name=name)
    return add_channel_bias(out, bias, nd + 1 if last else 1)


def conv1d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, data_format="NCL", name=None):
    """A 1-D convolution of x [N, C, L] (or NLC) by weight [out_c, C / groups, k], plus bias."""
    stride, padding, dilation, fmt, axis = as_2d("conv1d", stride, padding, dilation, data_format)
    out = conv2d(unsqueeze(x, [axis]), unsqueeze(weight, [2]), None, stride, padding, dilation, groups, fmt, name)
    return add_channel_bias(squeeze(out, [axis]), bias, 2 if axis == 1 else 1)


def conv2d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, data_format="NCHW", name=None):
    """A conv2d op over weight [out_c, in_c / groups, kh, kw], plus the bias per channel."""
    return _conv("conv2d", 2, x, weight, bias, stride, padding, dilation, groups, data_format, name)


def conv3d(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, data_format="NCDHW", name=None):
    """A conv3d op over weight [out_c, in_c / groups, kd, kh, kw], plus the bias per channel."""
    return _conv("conv3d", 3, x, weight, bias, stride, padding, dilation, groups, data_format, name)


def conv1d_transpose(
    x, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1, output_size=None,
    data_format="NCL", name=None,
):  # fmt: skip
    """The transpose of conv1d, weight [C, out_c / groups, k]."""
    stride, padding, dilation, fmt, axis = as_2d("conv1d_transpose", stride, padding, dilation, data_format)
    extra = [0, *ints("conv1d_transpose", "output_padding", output_padding, 1)]
    size = None if output_size is None else [1, *ints("conv1d_transpose", "output_size", output_size, 1)]
    out = conv2d_transpose(
        unsqueeze(x, [axis]), unsqueeze(weight, [2]), None, stride, padding, extra, dilation, groups, size, fmt, name
    )
    return add_channel_bias(squeeze(out, [axis]), bias, 2 if axis == 1 else 1)


def conv2d_transpose(
    x, weight, bias=None, stride=1, padding=0, output_padding=0, dilation=1, groups=1, output_size=None,
    data_format="NCHW", name=None,
):  # fmt: skip
    """The gradient of conv2d with respect to its input, weight [C, out_c / groups, kh, kw]."""
    return _conv_transpose("conv2d_transpose", 2, **locals())


def conv3d_transpose(
    x, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1, output_size=None,
    data_format="NCDHW", name=None,
):  # fmt: skip
    """conv2d_transpose over three spatial axes, weight [C, out_c / groups, kd, kh, kw]."""
    return _conv_transpose("conv3d_transpose", 3, **locals())
