"""A small ResNet for seed 002 on the CPU, with the interface of FleetX's resnet_static
(`ResNet(layers).net(input, class_dim)`): a 3x3 stem, basic residual blocks, global average pooling."""

import fleetgraph as paddle

DEPTHS = {10: [1, 1, 1, 1], 18: [2, 2, 2, 2]}


class ResNet:
    def __init__(self, layers=10, width=8):
        if layers not in DEPTHS:
            raise ValueError(f"ResNet: layers expected one of {sorted(DEPTHS)}, got {layers}")
        self.layers, self.width = layers, width

    def net(self, input, class_dim=10):
        h = self.conv_bn(input, self.width, 3, act="relu")
        for stage, blocks in enumerate(DEPTHS[self.layers]):
            for block in range(blocks):
                h = self.basic_block(h, self.width * 2**stage, stride=2 if block == 0 and stage > 0 else 1)
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
