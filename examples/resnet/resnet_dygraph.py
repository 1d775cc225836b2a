"""ResNet as a paddle.nn.Layer, with the interface of FleetX's examples/resnet/resnet_dygraph.py that
seed 002's train_fleet_dygraph.py imports: `ResNet(layers=50, class_dim=102)`, called on a batch of
NCHW pictures. 18 and 34 layers use basic blocks, 50, 101 and 152 bottleneck blocks (1x1, 3x3, 1x1
with 4x the width out), after a 7x7 stride-2 stem and a 3x3 max pool; global average pooling and a
Linear with a uniform init close it, as in resnet_static.py."""

import math

import fleetgraph as paddle
import fleetgraph.nn as nn

DEPTHS = {18: [2, 2, 2, 2], 34: [3, 4, 6, 3], 50: [3, 4, 6, 3], 101: [3, 4, 23, 3], 152: [3, 8, 36, 3]}
WIDTHS = [64, 128, 256, 512]


class ConvBNLayer(nn.Layer):
    def __init__(self, num_channels, num_filters, filter_size, stride=1, groups=1, act=None):
        super().__init__()
        self._conv = nn.Conv2D(
            num_channels, num_filters, filter_size, stride, (filter_size - 1) // 2, groups=groups, bias_attr=False
        )
        self._batch_norm = nn.BatchNorm(num_filters, act=act)

    def forward(self, inputs):
        return self._batch_norm(self._conv(inputs))


class BottleneckBlock(nn.Layer):
    expansion = 4

    def __init__(self, num_channels, num_filters, stride, shortcut=True):
        super().__init__()
        self.conv0 = ConvBNLayer(num_channels, num_filters, 1, act="relu")
        self.conv1 = ConvBNLayer(num_filters, num_filters, 3, stride=stride, act="relu")
        self.conv2 = ConvBNLayer(num_filters, num_filters * 4, 1)
        self.short = None if shortcut else ConvBNLayer(num_channels, num_filters * 4, 1, stride=stride)

    def forward(self, inputs):
        y = self.conv2(self.conv1(self.conv0(inputs)))
        short = inputs if self.short is None else self.short(inputs)
        return paddle.nn.functional.relu(paddle.add(short, y))


class BasicBlock(nn.Layer):
    expansion = 1

    def __init__(self, num_channels, num_filters, stride, shortcut=True):
        super().__init__()
        self.conv0 = ConvBNLayer(num_channels, num_filters, 3, stride=stride, act="relu")
        self.conv1 = ConvBNLayer(num_filters, num_filters, 3)
        self.short = None if shortcut else ConvBNLayer(num_channels, num_filters, 1, stride=stride)

    def forward(self, inputs):
        y = self.conv1(self.conv0(inputs))
        short = inputs if self.short is None else self.short(inputs)
        return paddle.nn.functional.relu(paddle.add(short, y))


class ResNet(nn.Layer):
    def __init__(self, layers=50, class_dim=102):
        super().__init__()
        if layers not in DEPTHS:
            raise ValueError(f"ResNet: layers expected one of {sorted(DEPTHS)}, got {layers}")
        block = BottleneckBlock if layers >= 50 else BasicBlock
        self.conv = ConvBNLayer(3, 64, 7, stride=2, act="relu")
        self.pool2d_max = nn.MaxPool2D(kernel_size=3, stride=2, padding=1)
        self.blocks = nn.LayerList()
        channels = 64
        for stage, count in enumerate(DEPTHS[layers]):
            for i in range(count):
                stride = 2 if i == 0 and stage > 0 else 1
                out = WIDTHS[stage] * block.expansion
                self.blocks.append(block(channels, WIDTHS[stage], stride, shortcut=channels == out and stride == 1))
                channels = out
        self.pool2d_avg = nn.AdaptiveAvgPool2D(1)
        self.pool2d_avg_output = channels
        bound = 1.0 / math.sqrt(channels)
        self.out = nn.Linear(
            channels, class_dim, weight_attr=paddle.ParamAttr(initializer=paddle.nn.initializer.Uniform(-bound, bound))
        )

    def forward(self, inputs):
        y = self.pool2d_max(self.conv(inputs))
        for block in self.blocks:
            y = block(y)
        y = paddle.reshape(self.pool2d_avg(y), shape=[-1, self.pool2d_avg_output])
        return self.out(y)
