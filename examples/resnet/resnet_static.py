"""ResNet for static programs, with the interface of FleetX's examples/resnet/resnet_static.py that
seed 002 imports: `ResNet(layers).net(input, class_dim)`. 18 and 34 layers use basic blocks, 50, 101
and 152 bottleneck blocks (1x1, 3x3, 1x1 with 4x the width out), after a 7x7 stride-2 stem and a
3x3 max pool; global average pooling and an fc with a uniform init close it."""

import math

import fleetgraph as paddle

DEPTHS = {18: [2, 2, 2, 2], 34: [3, 4, 6, 3], 50: [3, 4, 6, 3], 101: [3, 4, 23, 3], 152: [3, 8, 36, 3]}
WIDTHS = [64, 128, 256, 512]


class ResNet:
    def __init__(self, layers=50):
        if layers not in DEPTHS:
            raise ValueError(f"ResNet: layers expected one of {sorted(DEPTHS)}, got {layers}")
        self.layers = layers

    def net(self, input, class_dim=1000):
        h = self.conv_bn(input, 64, 7, stride=2, act="relu")
        h = paddle.fluid.layers.pool2d(h, pool_size=3, pool_type="max", pool_stride=2, pool_padding=1)
        block = self.bottleneck_block if self.layers >= 50 else self.basic_block
        for stage, count in enumerate(DEPTHS[self.layers]):
            for i in range(count):
                h = block(h, WIDTHS[stage], stride=2 if i == 0 and stage > 0 else 1)
        h = paddle.flatten(paddle.nn.functional.adaptive_avg_pool2d(h, 1), start_axis=1)
        bound = 1.0 / math.sqrt(h.shape[1])
        init = paddle.nn.initializer.Uniform(-bound, bound)
        return paddle.static.nn.fc(h, size=class_dim, weight_attr=paddle.ParamAttr(initializer=init))

    def conv_bn(self, x, filters, size, stride=1, act=None):
        conv = paddle.static.nn.conv2d(x, filters, size, stride=stride, padding=(size - 1) // 2, bias_attr=False)
        return paddle.static.nn.batch_norm(conv, act=act)

    def shortcut(self, x, filters, stride):
        if x.shape[1] == filters and stride == 1:
            return x
        return self.conv_bn(x, filters, 1, stride)

    def bottleneck_block(self, x, filters, stride):
        h = self.conv_bn(x, filters, 1, act="relu")
        h = self.conv_bn(h, filters, 3, stride, act="relu")
        h = self.conv_bn(h, filters * 4, 1)
        return paddle.nn.functional.relu(paddle.add(self.shortcut(x, filters * 4, stride), h))

    def basic_block(self, x, filters, stride):
        h = self.conv_bn(x, filters, 3, stride, act="relu")
        h = self.conv_bn(h, filters, 3)
        return paddle.nn.functional.relu(paddle.add(self.shortcut(x, filters, stride), h))
