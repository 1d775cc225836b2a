"""Layer functions over the ops of ops/projection.py, with Paddle 1.8's signatures, parameters and
dtype checks."""

from __future__ import annotations

from ..ir.dtypes import convert_dtype
from ..ir.program import Variable
from ..param_attr import ParamAttr
from .helper import LayerHelper
from .recurrent import _check_float

__all__ = ["add_position_encoding", "bilinear_tensor_product", "im2sequence", "row_conv"]


def _check_float32(layer: str, arg: str, value) -> None:
    """Paddle 1.8's check for the layers whose kernels it registers for float32 only."""
    if not isinstance(value, Variable) or convert_dtype(value.dtype) != "float32":
        got = convert_dtype(value.dtype) if isinstance(value, Variable) else type(value).__name__
        raise TypeError(f"{layer}: {arg} expected a float32 variable, got {got}")


def _pair(value) -> list[int]:
    return [int(value), int(value)] if isinstance(value, int) else [int(v) for v in value]


def bilinear_tensor_product(x, y, size, act=None, name=None, param_attr=None, bias_attr=None):
    """out[n, i] = x[n] W[i] y[n]^T + b[i]: W a [size, x width, y width] parameter, b a [1, size]
    one unless bias_attr is False."""
    _check_float("bilinear_tensor_product", "x", x)
    _check_float("bilinear_tensor_product", "y", y)
    helper = LayerHelper("bilinear_tensor_product", name, inputs=[x, y])
    w = helper.create_parameter(param_attr, [size, x.shape[1], y.shape[1]], x.dtype)
    inputs = {"X": [x], "Y": [y], "Weight": [w]}
    if ParamAttr._to_attr(bias_attr) is not False:
        inputs["Bias"] = [helper.create_parameter(bias_attr, [1, size], x.dtype, is_bias=True)]
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op("bilinear_tensor_product", inputs, {"Out": [out]})
    return helper.append_activation(out, act)


def row_conv(input, future_context_size, param_attr=None, act=None):
    """Lookahead convolution: each row plus the next future_context_size rows of its sequence,
    weighted per feature by a [future_context_size + 1, features] filter; input a float32 sequence
    (LoD) or a dense [batch, time, features] tensor."""
    _check_float32("row_conv", "input", input)
    helper = LayerHelper("row_conv", inputs=input)
    filter_param = helper.create_parameter(param_attr, [future_context_size + 1, input.shape[-1]], input.dtype)
    out = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op("row_conv", {"X": [input], "Filter": [filter_param]}, {"Out": [out]})
    return helper.append_activation(out, act)


def im2sequence(input, filter_size=1, stride=1, padding=0, input_image_size=None, out_stride=1, name=None):
    """Each image's filter_size patches (stride apart, after padding: one number, [height, width] or
    [up, left, down, right]) as one sequence of rows of channels x filter height x filter width.
    input_image_size [N, 2] holds the images' real sizes, each divided by out_stride (rounding up),
    for inference on a batch of several images."""
    _check_float32("im2sequence", "input", input)
    padding = _pair(padding)
    if len(padding) == 2:
        padding = padding + padding
    inputs = {"X": [input]}
    attrs = {"kernels": _pair(filter_size), "strides": _pair(stride), "paddings": padding}
    if input_image_size is not None:
        inputs["Y"] = [input_image_size]
        attrs["out_stride"] = _pair(out_stride)
    helper = LayerHelper("im2sequence", name, inputs=input)
    out = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op("im2sequence", inputs, {"Out": [out]}, attrs)
    return out


def add_position_encoding(input, alpha, beta, name=None):
    """alpha * input + beta * the sinusoidal encoding of each row's position in its sequence
    (sines in the first half of the features, cosines in the second); input a sequence (LoD) or a
    dense [batch, time, features] tensor with an even number of features."""
    _check_float("add_position_encoding", "input", input)
    helper = LayerHelper("add_position_encoding", name, inputs=input)
    out = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op(
        "add_position_encoding", {"X": [input]}, {"Out": [out]}, {"alpha": float(alpha), "beta": float(beta)}
    )
    return out
