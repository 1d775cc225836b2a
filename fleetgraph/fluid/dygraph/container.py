"""`fluid.dygraph.container`: Sequential, ParameterList and LayerList, paddle.nn's containers as
fluid.dygraph Layers (Fluid 1.x's mode rule)."""

from ...nn.layer import container
from .layers import Layer

__all__ = ["Sequential", "ParameterList", "LayerList"]


class Sequential(Layer, container.Sequential):
    """Sublayers called in order: `Sequential(l1, l2)` or `Sequential(('name', l1), ...)`."""


class ParameterList(Layer, container.ParameterList):
    """Parameters held in a list, each a parameter of this layer."""


class LayerList(Layer, container.LayerList):
    """Sublayers held in a list (no forward: iterate and call them)."""
