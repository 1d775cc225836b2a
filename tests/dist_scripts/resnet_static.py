"""A small stand-in for FleetX's resnet_static (`ResNet(layers).net(input, class_dim)`), cheap enough
for seed 002's 224x224 flowers on the CPU in a test: a stride-4 stem, a max pool, then basic residual
blocks of width 8 (one per stage; `layers` is accepted and ignored), global average pooling, fc."""

import fleetgraph as paddle


class ResNet:
    def __init__(self, layers=50, width=8):
        self.layers, self.width = layers, width

    def net(self, input, class_dim=10):
        h = self.conv_bn(input, self.width, 3, stride=4, act="relu")
        h = paddle.fluid.layers.pool2d(h, pool_size=3, pool_type="max", pool_stride=2, pool_padding=1)
        for stage in range(4):
            h = self.basic_block(h, self.width * 2**stage, stride=2 if stage > 0 else 1)
        h = paddle.nn.functional.adaptive_avg_pool2d(h, 1)
        return paddle.static.nn.fc(paddle.flatten(h, start_axis=1), size=class_dim)

    def conv_bn(self, x, filters, size, stride=1, act=None):
        conv = paddle.static.nn.conv2d(x, filters, size, stride=stride, padding=(size - 1) // 2, bias_attr=False)
        return paddle.static.nn.batch_norm(conv, act=act)

    def basic_block(self, x, filters, stride):
        h = self.conv_bn(x, filters, 3, stride, act="relu")
        h = self.conv_bn(h, filters, 3)
        short = x if stride == 1 and x.shape[1] == filters else self.conv_bn(x, filters, 1, stride)
        return paddle.nn.functional.relu(paddle.add(short, h))
