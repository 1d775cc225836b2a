"""`fluid.dygraph.container`: Sequential, ParameterList and LayerList, paddle.nn's (Paddle 2.0
kept 1.8's)."""

from ...nn.layer.container import LayerList, ParameterList, Sequential

__all__ = ["Sequential", "ParameterList", "LayerList"]
