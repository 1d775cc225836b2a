"""Conv2D."""

from __future__ import annotations

from ...initializer import Normal
from ...layers.indexing import pad2d
from ...layers.nn import _pair
from .. import functional as F
from .layers import Layer

# Paddle's padding_mode -> the pad2d mode that pads that way ('circular' has none: refused)
_PAD_MODES = {"zeros": "constant", "reflect": "reflect", "replicate": "edge", "circular": None}


class Conv2D(Layer):
    """A conv2d over weight [out_channels, in_channels / groups, kh, kw], initialized Normal(0,
    sqrt(2 / (in_channels * kh * kw))) as Paddle's; bias zero (none with bias_attr=False)."""

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups=1,
        padding_mode="zeros",
        weight_attr=None,
        bias_attr=None,
        data_format="NCHW",
    ) -> None:
        super().__init__()
        kh, kw = _pair(kernel_size, "Conv2D kernel_size")[:2]
        if padding_mode not in _PAD_MODES:
            raise ValueError(f"Conv2D: padding_mode {padding_mode!r}; expected one of {sorted(_PAD_MODES)}")
        if padding_mode == "circular":
            raise NotImplementedError("Conv2D: padding_mode 'circular' (wrap-around padding) is not supported")
        if padding_mode != "zeros" and (isinstance(padding, bool) or not isinstance(padding, int)):
            raise TypeError(f"Conv2D: padding_mode {padding_mode!r} takes an int padding, got {padding!r}")
        self._padding_mode = padding_mode
        self._stride, self._padding, self._dilation, self._groups = stride, padding, dilation, groups
        self._data_format = data_format
        std = (2.0 / (in_channels * kh * kw)) ** 0.5
        self.weight = self.create_parameter(
            [out_channels, in_channels // groups, kh, kw], weight_attr, default_initializer=Normal(0.0, std)
        )
        self.bias = None if bias_attr is False else self.create_parameter([out_channels], bias_attr, is_bias=True)

    def forward(self, x):
        padding = self._padding
        if self._padding_mode != "zeros":  # as Paddle's: pad by the mode first, then convolve unpadded
            x = pad2d(x, [padding] * 4, mode=_PAD_MODES[self._padding_mode], data_format=self._data_format)
            padding = 0
        return F.conv2d(
            x, self.weight, self.bias, self._stride, padding, self._dilation, self._groups, self._data_format
        )

__all__ = ["Conv2D"]
