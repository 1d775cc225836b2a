"""Paddle 1.8's 3-D, transposed and tree convolution layer classes (`fluid.dygraph.Conv3D`,
Conv2DTranspose, Conv3DTranspose, TreeConv) over the conv3d, conv2d_transpose, conv3d_transpose and
tree_conv ops, with 1.x's constructors and parameters (NCHW / NCDHW input, as 1.8's classes)."""

from __future__ import annotations

import math

from ...dygraph.dispatch import bind
from ...initializer import Normal
from ...ir.program import Variable
from ...layers.conv_nd import check_use_cudnn, ints
from ._helpers import activated, conv_filter_channels
from .layers import Layer

__all__ = ["Conv3D", "Conv2DTranspose", "Conv3DTranspose", "TreeConv"]


def _biased(out, bias):
    """out plus the per-channel bias (axis 1), when there is one."""
    return out if bias is None else bind("elementwise_add", {"X": [out], "Y": [bias]}, {"axis": 1})


class _ConvND(Layer):
    """What the convolution classes share: their attrs, filter, bias and forward."""

    _op = ""

    def _setup(self, layer, nd, stride, padding, dilation, groups, use_cudnn, act) -> None:
        check_use_cudnn(layer, use_cudnn)
        self._act, self._groups = act, groups or 1
        self._attrs = {
            "strides": ints(layer, "stride", stride, nd),
            "paddings": ints(layer, "padding", padding, nd),
            "dilations": ints(layer, "dilation", dilation, nd),
            "groups": self._groups,
        }

    def _parameters_of(self, filter_shape, param_attr, bias_attr, num_filters, init=None) -> None:
        if param_attr is False:
            raise ValueError(f"{type(self).__name__}: param_attr False; expected None or a ParamAttr (the filter)")
        self.weight = self.create_parameter(filter_shape, param_attr, default_initializer=init, dtype=self._dtype)
        self.bias = (
            None
            if bias_attr is False
            else self.create_parameter([num_filters], bias_attr, is_bias=True, dtype=self._dtype)
        )

    def _convolved(self, input):
        return bind(self._op, {"Input": [input], "Filter": [self.weight]}, self._attrs, out_slot="Output")

    def forward(self, input):
        return activated(_biased(self._convolved(input), self.bias), self._act)


class Conv3D(_ConvND):
    """A 3-D convolution over NCDHW input: filter [num_filters, num_channels / groups, kd, kh, kw],
    Normal(0, sqrt(2 / (kd * kh * kw * num_channels))); bias [num_filters]; then `act`."""

    _op = "conv3d"

    def __init__(self, num_channels, num_filters, filter_size, stride=1, padding=0, dilation=1, groups=None,
                 param_attr=None, bias_attr=None, use_cudnn=True, act=None, dtype="float32"):  # fmt: skip
        super().__init__(dtype=dtype)
        self._setup("Conv3D", 3, stride, padding, dilation, groups, use_cudnn, act)
        k = ints("Conv3D", "filter_size", filter_size, 3)
        channels = conv_filter_channels("Conv3D", num_channels, groups)
        init = Normal(0.0, (2.0 / (math.prod(k) * num_channels)) ** 0.5)
        self._parameters_of([num_filters, channels, *k], param_attr, bias_attr, num_filters, init)


class Conv2DTranspose(_ConvND):
    """The transposed 2-D convolution of NCHW input (the gradient of a conv2d with respect to its
    input): filter [num_channels, num_filters / groups, kh, kw] (Xavier), the output's size
    `output_size` where strides leave it open; bias [num_filters]; then `act`. Paddle's depthwise
    kernel (the same result) for groups == num_channels == num_filters without cuDNN."""

    def __init__(self, num_channels, num_filters, filter_size, output_size=None, padding=0, stride=1, dilation=1,
                 groups=None, param_attr=None, bias_attr=None, use_cudnn=True, act=None, dtype="float32"):  # fmt: skip
        super().__init__(dtype=dtype)
        self._setup("Conv2DTranspose", 2, stride, padding, dilation, groups, use_cudnn, act)
        self._attrs["output_size"] = (
            [] if output_size is None else ints("Conv2DTranspose", "output_size", output_size, 2)
        )
        depthwise = num_channels == groups == num_filters and not use_cudnn
        self._op = "depthwise_conv2d_transpose" if depthwise else "conv2d_transpose"
        k = ints("Conv2DTranspose", "filter_size", filter_size, 2)
        self._parameters_of([num_channels, num_filters // self._groups, *k], param_attr, bias_attr, num_filters)


class Conv3DTranspose(_ConvND):
    """The transposed 3-D convolution of NCDHW input: filter [num_channels, num_filters / groups,
    kd, kh, kw] (Xavier), then `act`. As Paddle 1.8's class, the bias [num_filters] is made unless
    bias_attr is False but added only when bias_attr is given (a ParamAttr or a name)."""

    _op = "conv3d_transpose"

    def __init__(self, num_channels, num_filters, filter_size, padding=0, stride=1, dilation=1, groups=None,
                 param_attr=None, bias_attr=None, use_cudnn=True, act=None, dtype="float32"):  # fmt: skip
        super().__init__(dtype=dtype)
        self._setup("Conv3DTranspose", 3, stride, padding, dilation, groups, use_cudnn, act)
        k = ints("Conv3DTranspose", "filter_size", filter_size, 3)
        self._parameters_of([num_channels, num_filters // self._groups, *k], param_attr, bias_attr, num_filters)
        self._adds_bias = bool(bias_attr)

    def forward(self, input):
        out = self._convolved(input)
        return activated(_biased(out, self.bias if self._adds_bias else None), self._act)


class TreeConv(Layer):
    """The tree-based convolution of each node's patch (its descendants less than max_depth levels
    down) of the trees `edge_set` describes over `nodes_vector`: weight [feature_size, 3,
    output_size, num_filters] (Xavier); then a bias [num_filters] only with a bias_attr, added along
    axis 1 as Paddle 1.8's class adds it; then `act` (tanh). `name` names the output."""

    def __init__(self, feature_size, output_size, num_filters=1, max_depth=2, act="tanh", param_attr=None,
                 bias_attr=None, name=None, dtype="float32"):  # fmt: skip
        super().__init__(dtype=dtype)
        self._max_depth, self._act, self._name = int(max_depth), act, name
        self.bias = (
            self.create_parameter([num_filters], bias_attr, is_bias=True, dtype=self._dtype) if bias_attr else None
        )
        self.weight = self.create_parameter([feature_size, 3, output_size, num_filters], param_attr, dtype=self._dtype)

    def forward(self, nodes_vector, edge_set):
        for arg, value in (("nodes_vector", nodes_vector), ("edge_set", edge_set)):
            if not isinstance(value, Variable):
                raise TypeError(f"TreeConv: {arg} expected a Variable, got {type(value).__name__}")
        inputs = {"NodesVector": [nodes_vector], "EdgeSet": [edge_set], "Filter": [self.weight]}
        out = bind("tree_conv", inputs, {"max_depth": self._max_depth}, name=self._name)
        return activated(_biased(out, self.bias), self._act)
