"""`fluid.dygraph.layers`: the Layer base class, `paddle.nn.Layer` (Paddle 2.0 kept 1.8's)."""

from ...nn.layer.layers import Layer

__all__ = ["Layer"]
