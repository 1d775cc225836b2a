"""Paddle 1.8's tree convolution layer class (`fluid.dygraph.TreeConv`) over the tree_conv op, with
1.x's constructor and parameters."""

from __future__ import annotations

from ...dygraph.dispatch import bind
from ...ir.program import Variable
from ...nn.layer.layers import Layer
from ...ops import tree_conv as _tree_conv  # noqa: F401  (registers the op)
from ._helpers import Fluid1Mode, activated

__all__ = ["TreeConv"]


class TreeConv(Fluid1Mode, Layer):
    """The tree-based convolution of each node's patch (its descendants less than max_depth levels
    down) of the trees `edge_set` describes over `nodes_vector`: weight [feature_size, 3,
    output_size, num_filters] (Xavier); then a bias [num_filters] only with a bias_attr, added along
    axis 1 as Paddle 1.8's class adds it; then `act` (tanh). `name` names the output."""

    def __init__(self, feature_size, output_size, num_filters=1, max_depth=2, act="tanh", param_attr=None,
                 bias_attr=None, name=None, dtype="float32"):  # fmt: skip
        super().__init__(dtype=dtype)
        self._max_depth, self._act, self._name = int(max_depth), act, name
        self.bias = self.create_parameter([num_filters], bias_attr, is_bias=True) if bias_attr else None
        self.weight = self.create_parameter([feature_size, 3, output_size, num_filters], param_attr)

    def forward(self, nodes_vector, edge_set):
        for arg, value in (("nodes_vector", nodes_vector), ("edge_set", edge_set)):
            if not isinstance(value, Variable):
                raise TypeError(f"TreeConv: {arg} expected a Variable, got {type(value).__name__}")
        inputs = {"NodesVector": [nodes_vector], "EdgeSet": [edge_set], "Filter": [self.weight]}
        out = bind("tree_conv", inputs, {"max_depth": self._max_depth}, name=self._name)
        if self.bias is not None:
            out = bind("elementwise_add", {"X": [out], "Y": [self.bias]}, {"axis": 1})
        return activated(out, self._act)
