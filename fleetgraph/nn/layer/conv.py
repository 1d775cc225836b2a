"""Conv1D, Conv2D, Conv3D and their transposes (Paddle 2.0's python/paddle/nn/layer/conv.py)."""

from __future__ import annotations

import math

from ...initializer import Normal
from ...layers.conv_nd import ints
from ...layers.indexing import pad2d
from .. import functional as F
from .layers import Layer

__all__ = ["Conv1D", "Conv1DTranspose", "Conv2D", "Conv2DTranspose", "Conv3D", "Conv3DTranspose"]

# Paddle's padding_mode -> the pad2d mode that pads that way ('circular' has none: refused)
_PAD_MODES = {"zeros": "constant", "reflect": "reflect", "replicate": "edge", "circular": None}


class _ConvNd(Layer):
    """A convolution's weight — [out_channels, in_channels / groups, *k], initialized Normal(0,
    sqrt(2 / (in_channels * prod(k)))) as Paddle's; transposed [in_channels, out_channels / groups, *k],
    Xavier — and bias (zero; none with bias_attr=False), applied by `function`. `arguments` are the
    subclass's own, as its __init__ received them."""

    def __init__(self, function, nd: int, transposed: bool, arguments: dict) -> None:
        super().__init__()
        a = {key: v for key, v in arguments.items() if key not in ("self", "__class__")}
        layer, padding_mode, padding = type(self).__name__, a.get("padding_mode", "zeros"), a["padding"]
        k = ints(layer, "kernel_size", a["kernel_size"], nd)
        if padding_mode not in _PAD_MODES:
            raise ValueError(f"{layer}: padding_mode {padding_mode!r}; expected one of {sorted(_PAD_MODES)}")
        if padding_mode == "circular" or (padding_mode != "zeros" and nd != 2):
            raise NotImplementedError(f"{layer}: padding_mode {padding_mode!r} is not supported")
        if padding_mode != "zeros" and (isinstance(padding, bool) or not isinstance(padding, int)):
            raise TypeError(f"{layer}: padding_mode {padding_mode!r} takes an int padding, got {padding!r}")
        self._function, self._padding_mode = function, padding_mode
        names = ("stride", "padding", "dilation", "groups", "data_format") + (("output_padding",) if transposed else ())
        self._call = {name: a[name] for name in names}
        c_in, c_out, groups = a["in_channels"], a["out_channels"], a["groups"]
        if transposed:
            shape, init = [c_in, c_out // groups, *k], None
        else:
            shape, init = [c_out, c_in // groups, *k], Normal(0.0, math.sqrt(2.0 / (c_in * math.prod(k))))
        self.weight = self.create_parameter(shape, a["weight_attr"], default_initializer=init)
        bias_attr = a["bias_attr"]
        self.bias = None if bias_attr is False else self.create_parameter([c_out], bias_attr, is_bias=True)

    def _apply(self, x, **extra):
        call = dict(self._call, **extra)
        if self._padding_mode != "zeros":  # as Paddle's: pad by the mode first, then convolve unpadded
            fmt = call["data_format"]
            x = pad2d(x, [call["padding"]] * 4, mode=_PAD_MODES[self._padding_mode], data_format=fmt)
            call["padding"] = 0
        return self._function(x, self.weight, self.bias, **call)


class _Conv(_ConvNd):
    def forward(self, x):
        return self._apply(x)


class _ConvTranspose(_ConvNd):
    def forward(self, x, output_size=None):
        return self._apply(x, output_size=output_size)


class Conv1D(_Conv):
    """A conv1d of x [N, C, L] (or NLC)."""

    def __init__(
        self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
        padding_mode="zeros", weight_attr=None, bias_attr=None, data_format="NCL",
    ):  # fmt: skip
        super().__init__(F.conv1d, 1, False, locals())


class Conv2D(_Conv):
    """A conv2d of x [N, C, H, W] (or NHWC); padding_mode 'reflect' or 'replicate' pads x first."""

    def __init__(
        self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
        padding_mode="zeros", weight_attr=None, bias_attr=None, data_format="NCHW",
    ):  # fmt: skip
        super().__init__(F.conv2d, 2, False, locals())


class Conv3D(_Conv):
    """A conv3d of x [N, C, D, H, W] (or NDHWC)."""

    def __init__(
        self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
        padding_mode="zeros", weight_attr=None, bias_attr=None, data_format="NCDHW",
    ):  # fmt: skip
        super().__init__(F.conv3d, 3, False, locals())


class Conv1DTranspose(_ConvTranspose):
    """conv1d_transpose of x [N, C, L] (or NLC); forward(x, output_size=None)."""

    def __init__(
        self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
        dilation=1, weight_attr=None, bias_attr=None, data_format="NCL",
    ):  # fmt: skip
        super().__init__(F.conv1d_transpose, 1, True, locals())


class Conv2DTranspose(_ConvTranspose):
    """conv2d_transpose of x [N, C, H, W] (or NHWC); forward(x, output_size=None)."""

    def __init__(
        self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, dilation=1,
        groups=1, weight_attr=None, bias_attr=None, data_format="NCHW",
    ):  # fmt: skip
        super().__init__(F.conv2d_transpose, 2, True, locals())


class Conv3DTranspose(_ConvTranspose):
    """conv3d_transpose of x [N, C, D, H, W] (or NDHWC); forward(x, output_size=None)."""

    def __init__(
        self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, dilation=1,
        groups=1, weight_attr=None, bias_attr=None, data_format="NCDHW",
    ):  # fmt: skip
        super().__init__(F.conv3d_transpose, 3, True, locals())
