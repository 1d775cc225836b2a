"""Seed 001's linear regression, shared by the demo and the Fleet training script."""

import fleetgraph as paddle


def build(seed: int = 90):
    """x [-1, 13] -> fc(1) -> mean squared error, in the default programs; returns (x, y, loss)."""
    paddle.seed(seed)
    x = paddle.static.data(name="x", shape=[None, 13], dtype="float32")
    y = paddle.static.data(name="y", shape=[None, 1], dtype="float32")
    pred = paddle.static.nn.fc(x, size=1)
    loss = paddle.mean(paddle.nn.functional.square_error_cost(pred, y))
    return x, y, loss
