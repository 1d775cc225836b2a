"""Conv2D."""

from __future__ import annotations

from ...initializer import Normal
from ...layers.nn import _pair
from .. import functional as F
from .layers import Layer


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
        self._stride, self._padding, self._dilation, self._groups = stride, padding, dilation, groups
        self._data_format = data_format
        std = (2.0 / (in_channels * kh * kw)) ** 0.5
        self.weight = self.create_parameter(
            [out_channels, in_channels // groups, kh, kw], weight_attr, default_initializer=Normal(0.0, std)
        )
        self.bias = None if bias_attr is False else self.create_parameter([out_channels], bias_attr, is_bias=True)

    def forward(self, x):
        return F.conv2d(
            x, self.weight, self.bias, self._stride, self._padding, self._dilation, self._groups, self._data_format
        )
