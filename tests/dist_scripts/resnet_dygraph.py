"""A small stand-in for FleetX's resnet_dygraph (`ResNet(class_dim, layers)`, a paddle.nn.Layer),
cheap enough for seed 002's 224x224 flowers on the CPU in a test: a stride-4 stem, a max pool, then
one basic residual block of width 8 per stage (`layers` is accepted and ignored), global average
pooling, Linear. The same network as resnet_static.py here."""

import fleetgraph as paddle
import fleetgraph.nn as nn


class ConvBNLayer(nn.Layer):
    def __init__(self, num_channels, num_filters, filter_size, stride=1, act=None):
        super().__init__()
        pad = (filter_size - 1) // 2
        self._conv = nn.Conv2D(num_channels, num_filters, filter_size, stride, pad, bias_attr=False)
        self._batch_norm = nn.BatchNorm(num_filters, act=act)

    def forward(self, inputs):
        return self._batch_norm(self._conv(inputs))


class BasicBlock(nn.Layer):
    def __init__(self, num_channels, num_filters, stride):
        super().__init__()
        self.conv0 = ConvBNLayer(num_channels, num_filters, 3, stride, act="relu")
        self.conv1 = ConvBNLayer(num_filters, num_filters, 3)
        same = stride == 1 and num_channels == num_filters
        self.short = None if same else ConvBNLayer(num_channels, num_filters, 1, stride)

    def forward(self, inputs):
        y = self.conv1(self.conv0(inputs))
        short = inputs if self.short is None else self.short(inputs)
        return paddle.nn.functional.relu(paddle.add(short, y))


class ResNet(nn.Layer):
    def __init__(self, layers=50, class_dim=102, width=8):
        super().__init__()
        self.conv = ConvBNLayer(3, width, 3, stride=4, act="relu")
        self.pool2d_max = nn.MaxPool2D(kernel_size=3, stride=2, padding=1)
        blocks, channels = [], width
        for stage in range(4):
            blocks.append(BasicBlock(channels, width * 2**stage, 2 if stage > 0 else 1))
            channels = width * 2**stage
        self.blocks = nn.Sequential(*blocks)
        self.pool2d_avg = nn.AdaptiveAvgPool2D(1)
        self.out = nn.Linear(channels, class_dim)
        self._channels = channels

    def forward(self, inputs):
        y = self.blocks(self.pool2d_max(self.conv(inputs)))
        return self.out(paddle.reshape(self.pool2d_avg(y), [-1, self._channels]))
