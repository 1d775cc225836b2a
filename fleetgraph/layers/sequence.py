"""Sequence layer functions over LoD variables: pooling, concatenation, reshaping, expansion,
softmax, reversal, length masks, padding to a batch and back, and windows of ids."""

from __future__ import annotations

from ..ir.dtypes import convert_dtype
from ..ir.errors import FleetgraphError
from ..ir.program import Variable
from .helper import LayerHelper


def sequence_pool(input: Variable, pool_type: str, is_test: bool = False, pad_value: float = 0.0) -> Variable:
    """Pools each sequence of `input`'s last LoD level into one row: 'average', 'sum', 'sqrt',
    'first', 'last' or 'max' (any case); an empty sequence gives `pad_value`."""
    if not isinstance(pool_type, str):
        raise FleetgraphError(f"sequence_pool: pool_type expected a string such as 'sum', got {pool_type!r}")
    helper = LayerHelper("sequence_pool", inputs=input)
    out = helper.create_variable_for_type_inference(input.dtype)
    max_index = helper.create_variable_for_type_inference("int32", stop_gradient=True)
    helper.append_op(
        "sequence_pool",
        {"X": [input]},
        {"Out": [out], "MaxIndex": [max_index]},
        {"pooltype": pool_type.upper(), "is_test": is_test, "pad_value": float(pad_value)},
    )
    return out


def sequence_first_step(input: Variable) -> Variable:
    """The first row of each sequence."""
    return sequence_pool(input, "first")


def sequence_last_step(input: Variable) -> Variable:
    """The last row of each sequence."""
    return sequence_pool(input, "last")


def sequence_concat(input: list[Variable], name: str | None = None) -> Variable:
    """Sequence i of the result is sequence i of input[0], then of input[1], ..."""
    if not isinstance(input, (list, tuple)) or not input:
        raise FleetgraphError(f"sequence_concat: input expected a list of variables, got {input!r}")
    helper = LayerHelper("sequence_concat", name, inputs=input)
    out = helper.create_variable_for_type_inference(input[0].dtype)
    helper.append_op("sequence_concat", {"X": list(input)}, {"Out": [out]})
    return out


def sequence_reshape(input: Variable, new_dim: int) -> Variable:
    """Each sequence's values re-cut into rows of width `new_dim`."""
    helper = LayerHelper("sequence_reshape", inputs=input)
    out = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op("sequence_reshape", {"X": [input]}, {"Out": [out]}, {"new_dim": int(new_dim)})
    return out


def sequence_expand(x: Variable, y: Variable, ref_level: int = -1, name: str | None = None) -> Variable:
    """Sequence i of `x` (row i, when `x` has no LoD) repeated as many times as sequence i of `y`'s
    LoD level `ref_level` (-1: the last) is long."""
    helper = LayerHelper("sequence_expand", name, inputs=[x, y])
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op("sequence_expand", {"X": [x], "Y": [y]}, {"Out": [out]}, {"ref_level": int(ref_level)})
    return out


def sequence_softmax(input: Variable, use_cudnn: bool = False, name: str | None = None) -> Variable:
    """The softmax of each sequence of `input` (one value a row: shape [N, 1] or [N])."""
    helper = LayerHelper("sequence_softmax", name, inputs=input)
    out = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op("sequence_softmax", {"X": [input]}, {"Out": [out]}, {"use_cudnn": bool(use_cudnn)})
    return out


def sequence_reverse(x: Variable, name: str | None = None) -> Variable:
    """The rows of each sequence of `x` in reverse order, under the same LoD."""
    helper = LayerHelper("sequence_reverse", name, inputs=x)
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op("sequence_reverse", {"X": [x]}, {"Y": [out]})
    return out


def sequence_mask(
    x: Variable, maxlen: int | Variable | None = None, dtype: str = "int64", name: str | None = None
) -> Variable:
    """Y[..., j] = (j < x[...]): the lengths `x` as a mask of `maxlen` columns (a Variable feeds
    MaxLenTensor; None: the longest length). The mask carries no gradient."""
    helper = LayerHelper("sequence_mask", name, inputs=x)
    out = helper.create_variable_for_type_inference(convert_dtype(dtype), stop_gradient=True)
    inputs = {"X": [x]}
    attrs = {"out_dtype": out.dtype}
    if isinstance(maxlen, Variable):
        inputs["MaxLenTensor"] = [maxlen]
    elif maxlen is not None:
        attrs["maxlen"] = int(maxlen)
    helper.append_op("sequence_mask", inputs, {"Y": [out]}, attrs)
    return out


def sequence_pad(
    x: Variable, pad_value: Variable, maxlen: int | None = None, name: str | None = None
) -> tuple[Variable, Variable]:
    """(Out, Length): the sequences of `x` as a batch [sequences, maxlen, ...] padded with
    `pad_value` (maxlen None: the longest sequence), and each sequence's length (int64)."""
    helper = LayerHelper("sequence_pad", name, inputs=x)
    out = helper.create_variable_for_type_inference(x.dtype)
    length = helper.create_variable_for_type_inference("int64", stop_gradient=True)
    padded_length = -1 if maxlen is None else int(maxlen)
    helper.append_op(
        "sequence_pad",
        {"X": [x], "PadValue": [pad_value]},
        {"Out": [out], "Length": [length]},
        {"padded_length": padded_length},
    )
    return out, length


def sequence_unpad(x: Variable, length: Variable, name: str | None = None) -> Variable:
    """The first length[i] steps of each x[i] as sequence i of a LoD variable: sequence_pad undone."""
    helper = LayerHelper("sequence_unpad", name, inputs=x)
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op("sequence_unpad", {"X": [x], "Length": [length]}, {"Out": [out]})
    return out


def sequence_expand_as(x: Variable, y: Variable, name: str | None = None) -> Variable:
    """Row i of `x` repeated as many times as sequence i of `y` is long, under `y`'s LoD."""
    helper = LayerHelper("sequence_expand_as", name, inputs=x)
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op("sequence_expand_as", {"X": [x], "Y": [y]}, {"Out": [out]})
    return out


def sequence_enumerate(input: Variable, win_size: int, pad_value: int = 0, name: str | None = None) -> Variable:
    """Row r holds the `win_size` ids of `input` from row r on within its sequence, `pad_value`
    past the sequence's end: the n-grams of each sequence, under its LoD. No gradient."""
    helper = LayerHelper("sequence_enumerate", name, inputs=input)
    out = helper.create_variable_for_type_inference(input.dtype, stop_gradient=True)
    attrs = {"win_size": int(win_size), "pad_value": int(pad_value)}
    helper.append_op("sequence_enumerate", {"X": [input]}, {"Out": [out]}, attrs)
    return out


def sequence_conv(
    input,
    num_filters,
    filter_size=3,
    filter_stride=1,
    padding=True,
    padding_start=None,
    bias_attr=None,
    param_attr=None,
    act=None,
    name=None,
):
    """A 1-D convolution along each sequence: row t sees rows t + padding_start ... of its own
    sequence (padding_start defaults to -(filter_size // 2), a centred window), zeros past either
    end. Paddle 1.8 always pads with zeros and documents `padding` as unused; here padding=False,
    which would suggest otherwise, is refused."""
    if padding is not True:
        raise FleetgraphError(
            "sequence_conv: padding=False is not supported; as in Paddle 1.8 every window reads zeros past "
            "its sequence's ends (set padding_start to move the window)"
        )
    if filter_stride != 1:
        raise FleetgraphError(f"sequence_conv: filter_stride {filter_stride}; only 1 is supported, as in Paddle")
    helper = LayerHelper("sequence_conv", name, inputs=input)
    width = input.shape[1]
    weight = helper.create_parameter(param_attr, [filter_size * width, num_filters], input.dtype)
    start = -int(filter_size // 2) if padding_start is None else int(padding_start)
    out = helper.create_variable_for_type_inference(input.dtype)
    attrs = {"contextStride": 1, "contextStart": start, "contextLength": int(filter_size)}
    helper.append_op("sequence_conv", {"X": [input], "Filter": [weight]}, {"Out": [out]}, attrs)
    return helper.append_activation(helper.append_bias_op(out, bias_attr), act)
