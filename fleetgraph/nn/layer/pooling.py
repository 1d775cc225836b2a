"""MaxPool2D, AvgPool2D and AdaptiveAvgPool2D."""

from __future__ import annotations

from .. import functional as F
from .layers import Layer


class MaxPool2D(Layer):
    def __init__(self, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False, data_format="NCHW"):
        super().__init__()
        self._args = (kernel_size, stride, padding, return_mask, ceil_mode, data_format)

    def forward(self, x):
        return F.max_pool2d(x, *self._args)


class AvgPool2D(Layer):
    def __init__(
        self, kernel_size, stride=None, padding=0, ceil_mode=False, exclusive=True, divisor_override=None,
        data_format="NCHW", name=None,
    ):  # fmt: skip
        super().__init__()
        self._args = (kernel_size, stride, padding, ceil_mode, exclusive, divisor_override, data_format)

    def forward(self, x):
        return F.avg_pool2d(x, *self._args)


class AdaptiveAvgPool2D(Layer):
    def __init__(self, output_size, data_format="NCHW", name=None):
        super().__init__()
        self._output_size, self._data_format = output_size, data_format

    def forward(self, x):
        return F.adaptive_avg_pool2d(x, self._output_size, self._data_format)

__all__ = ["MaxPool2D", "AvgPool2D", "AdaptiveAvgPool2D"]
