"""Tensor layer functions: constants, casts, reshapes, concat and split, parameters and globals."""

from __future__ import annotations

import numpy as np

from ..dygraph.dispatch import bind
from ..ir.dtypes import convert_dtype
from ..ir.program import Variable
from .helper import LayerHelper


def fill_constant(shape, dtype, value, force_cpu=False, out=None, name=None) -> Variable:
    dtype = convert_dtype(dtype)
    shape = [int(shape)] if isinstance(shape, int) else [int(d) for d in shape]
    attrs = {"shape": shape, "value": float(value), "dtype": dtype}
    if out is None:
        return bind("fill_constant", {}, attrs, dtype=dtype, name=name)
    LayerHelper("fill_constant").append_op("fill_constant", {}, {"Out": [out]}, attrs)
    return out


def zeros(shape, dtype="float32", name=None):
    return fill_constant(shape, dtype, 0.0, name=name)


def ones(shape, dtype="float32", name=None):
    return fill_constant(shape, dtype, 1.0, name=name)


def assign(input, output=None):
    """output = input: a Variable copied by an assign op, or a NumPy array, list or number held by an
    assign_value op (Paddle's)."""
    if not isinstance(input, Variable):
        return _assign_value(input, output)
    if output is None:
        return bind("assign", {"X": [input]})
    LayerHelper("assign").append_op("assign", {"X": [input]}, {"Out": [output]})
    return output


def _assign_value(value, output):
    from ..ops.tensor import VALUE_ATTRS

    array = np.asarray(value)
    if array.dtype == np.float64 and not isinstance(value, np.ndarray):
        array = array.astype(np.float32)  # a Python float or list becomes float32, as Paddle's
    if array.dtype.name not in VALUE_ATTRS:
        raise TypeError(f"assign: a {array.dtype.name} array cannot be held; expected one of {sorted(VALUE_ATTRS)}")
    attrs = {"shape": list(array.shape) or [1], "dtype": array.dtype.name}
    attrs[VALUE_ATTRS[array.dtype.name]] = array.reshape(-1).tolist()
    if output is None:
        return bind("assign_value", {}, attrs, dtype=array.dtype.name)
    LayerHelper("assign_value").append_op("assign_value", {}, {"Out": [output]}, attrs)
    return output


def fill_constant_batch_size_like(
    input, shape, dtype, value, input_dim_idx=0, output_dim_idx=0, force_cpu=False, name=None
) -> Variable:
    """A constant of `shape` whose output_dim_idx takes input's input_dim_idx (its batch size)."""
    dtype = convert_dtype(dtype)
    attrs = {"shape": [int(d) for d in shape], "value": float(value), "dtype": dtype}
    attrs.update(input_dim_idx=input_dim_idx, output_dim_idx=output_dim_idx, force_cpu=force_cpu)
    return bind("fill_constant_batch_size_like", {"Input": [input]}, attrs, dtype=dtype, name=name)


def cast(x, dtype):
    dtype = convert_dtype(dtype)
    return bind("cast", {"X": [x]}, {"in_dtype": x.dtype, "out_dtype": dtype}, dtype=dtype)


def reshape(x, shape, actual_shape=None, act=None, inplace=False, name=None):
    out = bind("reshape2", {"X": [x]}, {"shape": [int(d) for d in shape]}, name=name, extra_outputs=("XShape",))
    return out if act is None else bind(act, {"X": [out]})


def transpose(x, perm, name=None):
    return bind("transpose2", {"X": [x]}, {"axis": [int(a) for a in perm]}, name=name, extra_outputs=("XShape",))


def flatten(x, axis=1, name=None):
    return reshape(x, [0] * axis + [-1] if axis else [1, -1], name=name)


def concat(input, axis=0, name=None):
    return bind("concat", {"X": list(input)}, {"axis": int(axis)}, name=name)


def split(input, num_or_sections, dim=-1, name=None):
    helper = LayerHelper("split", name, inputs=input)
    if isinstance(num_or_sections, int):
        n, attrs = num_or_sections, {"num": num_or_sections, "sections": [], "axis": dim}
    else:
        n, attrs = len(num_or_sections), {"num": 0, "sections": list(num_or_sections), "axis": dim}
    outs = [helper.create_variable_for_type_inference(input.dtype) for _ in range(n)]
    helper.append_op("split", {"X": [input]}, {"Out": outs}, attrs)
    return outs


def create_parameter(shape, dtype, name=None, attr=None, is_bias=False, default_initializer=None):
    from ..param_attr import ParamAttr

    attr = attr or ParamAttr(name=name)
    return LayerHelper("create_parameter").create_parameter(attr, shape, dtype, is_bias, default_initializer)


def increment(x, value=1.0, in_place=True) -> Variable:
    """`x + value` (a step counter): into x itself by default, as Paddle's."""
    helper = LayerHelper("increment", inputs=x)
    out = x if in_place else helper.create_variable_for_type_inference(x.dtype)
    helper.append_op("increment", {"X": [x]}, {"Out": [out]}, {"step": float(value)})
    return out


def create_global_var(shape, value, dtype, persistable=False, force_cpu=False, name=None):
    from ..initializer import Constant

    helper = LayerHelper("global_var")
    var = helper.create_global_variable(shape, dtype, persistable, name)
    helper.set_variable_initializer(var, Constant(value))
    return var
