"""The pooling layers of Paddle 2.0's python/paddle/nn/layer/pooling.py: each holds its arguments and
applies the paddle.nn.functional function of its name."""

from __future__ import annotations

from .. import functional as F
from .layers import Layer

__all__ = [
    "AdaptiveAvgPool1D",
    "AdaptiveAvgPool2D",
    "AdaptiveAvgPool3D",
    "AdaptiveMaxPool1D",
    "AdaptiveMaxPool2D",
    "AdaptiveMaxPool3D",
    "AvgPool1D",
    "AvgPool2D",
    "AvgPool3D",
    "MaxPool1D",
    "MaxPool2D",
    "MaxPool3D",
]


class _Pool(Layer):
    """function(x, **arguments): the arguments are the subclass's own, as its __init__ received them."""

    def __init__(self, function, arguments: dict) -> None:
        super().__init__()
        self._function = function
        self._arguments = {k: v for k, v in arguments.items() if k not in ("self", "__class__")}

    def forward(self, x):
        return self._function(x, **self._arguments)


class MaxPool1D(_Pool):
    def __init__(self, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False, name=None):
        super().__init__(F.max_pool1d, locals())


class MaxPool2D(_Pool):
    def __init__(
        self, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False, data_format="NCHW", name=None
    ):
        super().__init__(F.max_pool2d, locals())


class MaxPool3D(_Pool):
    def __init__(
        self, kernel_size, stride, padding, return_mask=False, ceil_mode=False, data_format="NCDHW", name=None
    ):
        super().__init__(F.max_pool3d, locals())


class AvgPool1D(_Pool):
    def __init__(self, kernel_size, stride=None, padding=0, exclusive=True, ceil_mode=False, name=None):
        super().__init__(F.avg_pool1d, locals())


class AvgPool2D(_Pool):
    def __init__(
        self, kernel_size, stride=None, padding=0, ceil_mode=False, exclusive=True, divisor_override=None,
        data_format="NCHW", name=None,
    ):  # fmt: skip
        super().__init__(F.avg_pool2d, locals())


class AvgPool3D(_Pool):
    def __init__(
        self, kernel_size, stride, padding=0, ceil_mode=False, exclusive=True, divisor_override=None,
        data_format="NCDHW", name=None,
    ):  # fmt: skip
        super().__init__(F.avg_pool3d, locals())


class AdaptiveAvgPool1D(_Pool):
    def __init__(self, output_size, name=None):
        super().__init__(F.adaptive_avg_pool1d, locals())


class AdaptiveAvgPool2D(_Pool):
    def __init__(self, output_size, data_format="NCHW", name=None):
        super().__init__(F.adaptive_avg_pool2d, locals())


class AdaptiveAvgPool3D(_Pool):
    def __init__(self, output_size, data_format="NCDHW", name=None):
        super().__init__(F.adaptive_avg_pool3d, locals())


class AdaptiveMaxPool1D(_Pool):
    def __init__(self, output_size, return_mask=False, name=None):
        super().__init__(F.adaptive_max_pool1d, locals())


class AdaptiveMaxPool2D(_Pool):
    def __init__(self, output_size, return_mask=False, name=None):
        super().__init__(F.adaptive_max_pool2d, locals())


class AdaptiveMaxPool3D(_Pool):
    def __init__(self, output_size, return_mask=False, name=None):
        super().__init__(F.adaptive_max_pool3d, locals())
