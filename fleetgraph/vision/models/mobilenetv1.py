"""MobileNetV1 as Paddle 2.0's paddle.vision.models.mobilenetv1: sublayers conv1, conv2_1 ... conv6, fc."""

from __future__ import annotations

from ... import nn
from ...nn.functional import flatten
from ._weights import refuse_pretrained

__all__ = ["MobileNetV1", "mobilenet_v1"]


class ConvBNLayer(nn.Layer):
    """Conv (no bias), BatchNorm2D, ReLU: the unit every MobileNetV1 stage is made of."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, num_groups=1):
        super().__init__()
        self._conv = nn.Conv2D(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding, groups=num_groups, bias_attr=False
        )
        self._norm_layer = nn.BatchNorm2D(out_channels)
        self._act = nn.ReLU()

    def forward(self, x):
        return self._act(self._norm_layer(self._conv(x)))


class DepthwiseSeparable(nn.Layer):
    """A grouped 3x3 conv then a pointwise 1x1 conv, widths scaled by `scale`."""

    def __init__(self, in_channels, out_channels1, out_channels2, num_groups, stride, scale):
        super().__init__()
        self._depthwise_conv = ConvBNLayer(
            in_channels, int(out_channels1 * scale), 3, stride, 1, num_groups=int(num_groups * scale)
        )
        self._pointwise_conv = ConvBNLayer(int(out_channels1 * scale), int(out_channels2 * scale), 1, 1, 0)

    def forward(self, x):
        return self._pointwise_conv(self._depthwise_conv(x))


# (sublayer name, in channels, out channels 1, out channels 2 = next in, stride), as Paddle 2.0 names them
_STAGES = (
    [("conv2_1", 32, 64, 1), ("conv2_2", 64, 128, 2), ("conv3_1", 128, 128, 1), ("conv3_2", 128, 256, 2)]
    + [("conv4_1", 256, 256, 1), ("conv4_2", 256, 512, 2)]
    + [(f"conv5_{i}", 512, 512, 1) for i in range(1, 6)]
    + [("conv5_6", 512, 1024, 2), ("conv6", 1024, 1024, 1)]
)


class MobileNetV1(nn.Layer):
    """Howard et al. 2017; scale multiplies every width, num_classes <= 0 drops fc, with_pool the average pool."""

    def __init__(self, scale=1.0, num_classes=1000, with_pool=True):
        super().__init__()
        self.scale = scale
        self.num_classes = num_classes
        self.with_pool = with_pool
        self.conv1 = ConvBNLayer(3, int(32 * scale), kernel_size=3, stride=2, padding=1)
        self.dwsl = [
            self.add_sublayer(name, DepthwiseSeparable(int(cin * scale), cin, cout, cin, stride, scale))
            for name, cin, cout, stride in _STAGES
        ]
        if with_pool:
            self.pool2d_avg = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            self.fc = nn.Linear(int(1024 * scale), num_classes)

    def forward(self, x):
        x = self.conv1(x)
        for dws in self.dwsl:
            x = dws(x)
        if self.with_pool:
            x = self.pool2d_avg(x)
        if self.num_classes > 0:
            x = self.fc(flatten(x, 1))
        return x


def mobilenet_v1(pretrained=False, scale=1.0, **kwargs):
    """MobileNetV1 with channel scale `scale`."""
    refuse_pretrained(f"mobilenetv1_{scale}", pretrained)
    return MobileNetV1(scale=scale, **kwargs)
