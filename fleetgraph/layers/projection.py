"""Layer functions over the ops of ops/projection.py, and Paddle 1.8's cuDNN-style multi-layer
`lstm` over the fused rnn op (ops/rnn.py), with Paddle 1.8's signatures, parameters and dtype checks."""

from __future__ import annotations

import numpy as np

from ..ir.dtypes import convert_dtype
from ..ir.program import Variable
from ..param_attr import ParamAttr
from .helper import LayerHelper
from .recurrent import _check_float
from .tensor import reshape, split

__all__ = ["add_position_encoding", "bilinear_tensor_product", "im2sequence", "lstm", "row_conv"]


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


def _lstm_shapes(input_size: int, hidden_size: int, num_layers: int, directions: int) -> list[list[tuple]]:
    """Per layer and direction, the shapes of [weight_ih, weight_hh, bias_ih, bias_hh]: a layer
    above the first reads the previous layer's directions' outputs side by side."""
    gates = 4 * hidden_size
    return [
        [(gates, input_size if layer == 0 else directions * hidden_size), (gates, hidden_size), (gates,), (gates,)]
        for layer in range(num_layers)
        for _ in range(directions)
    ]


def lstm(
    input,
    init_h,
    init_c,
    max_len,
    hidden_size,
    num_layers,
    dropout_prob=0.0,
    is_bidirec=False,
    is_test=False,
    name=None,
    default_initializer=None,
    seed=-1,
):
    """A num_layers LSTM (gates i, f, g, o; no peepholes) over a time-major [seq_len, batch,
    input_size] input from init_h / init_c [num_layers * directions, batch, hidden_size]; returns
    (out [seq_len, batch, directions * hidden_size], last_h, last_c). As Paddle 1.8's, every weight
    and bias lives in one flat parameter, in the cuDNN layout 1.8's kernel handed to cuDNN: per layer
    and direction, weight_ih [4H, in], weight_hh [4H, H], bias_ih [4H], bias_hh [4H]. Dropout (not in
    test mode) applies between layers. The flat parameter is cut into the fused rnn op's WeightList."""
    for arg, value in (("input", input), ("init_h", init_h), ("init_c", init_c)):
        _check_float("lstm", arg, value)
    for arg, value in (("max_len", max_len), ("hidden_size", hidden_size), ("num_layers", num_layers)):
        if not isinstance(value, int):
            raise TypeError(f"lstm: {arg} expected int, got {type(value).__name__}")
    if input.shape[0] > max_len:
        raise ValueError(f"lstm: input has {input.shape[0]} steps; expected at most max_len {max_len}")
    if seed != -1 and dropout_prob > 0 and not is_test:
        raise NotImplementedError(
            "lstm: seed (a fixed dropout seed) is not supported; dropout draws from the program's random streams"
        )
    directions = 2 if is_bidirec else 1
    shapes = _lstm_shapes(input.shape[-1], hidden_size, num_layers, directions)
    sizes = [int(np.prod(shape)) for cell in shapes for shape in cell]
    helper = LayerHelper("cudnn_lstm", name, inputs=[input, init_h, init_c])
    weight = helper.create_parameter(None, [sum(sizes)], input.dtype, default_initializer=default_initializer)
    flat = iter(split(weight, sizes, dim=0))
    cells = [[reshape(next(flat), list(shape)) for shape in cell] for cell in shapes]
    weight_list = [w for cell in cells for w in cell[:2]] + [b for cell in cells for b in cell[2:]]
    out = helper.create_variable_for_type_inference(input.dtype)
    last_h, last_c = (helper.create_variable_for_type_inference(input.dtype) for _ in range(2))
    reserve = helper.create_variable_for_type_inference(input.dtype, stop_gradient=True)
    dropout_state = helper.create_variable_for_type_inference("uint8", stop_gradient=True)
    helper.append_op(
        "rnn",
        {"Input": [input], "PreState": [init_h, init_c], "WeightList": weight_list},
        {"Out": [out], "State": [last_h, last_c], "Reserve": [reserve], "DropoutState": [dropout_state]},
        {
            "mode": "LSTM",
            "hidden_size": hidden_size,
            "num_layers": num_layers,
            "is_bidirec": bool(is_bidirec),
            "input_size": int(input.shape[-1]),
            "dropout_prob": float(dropout_prob),
            "is_test": bool(is_test),
        },
    )
    return out, last_h, last_c
