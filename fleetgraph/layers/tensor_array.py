"""Tensor array and rank table layer functions (`fluid.layers.create_array`, `array_write`, ...,
`lod_rank_table`, `shrink_memory`): static Variables of type LOD_TENSOR_ARRAY and LOD_RANK_TABLE
in a program; in eager mode, as Paddle 2.0's dygraph, an array is a Python list of Tensors."""

from __future__ import annotations

import numpy as np

from ..dygraph.tensor import Tensor
from ..ir import unique_name
from ..ir.dtypes import convert_dtype
from ..ir.errors import FleetgraphError
from ..ir.program import Variable, VarType
from .helper import LayerHelper


def _array_var(helper: LayerHelper, dtype, name: str | None = None) -> Variable:
    return helper.block.create_var(
        name or f"{helper.name}.out", dtype=convert_dtype(dtype), type=VarType.LOD_TENSOR_ARRAY
    )


def _subscript(i, where: str) -> int | None:
    """An eager subscript as a Python int; None for a static Variable. Paddle takes int64 [1]."""
    if isinstance(i, Tensor):
        if tuple(i.shape) != (1,):
            raise FleetgraphError(f"{where}: the index i has shape {list(i.shape)}; expected [1]")
        return int(np.asarray(i.numpy()).reshape(-1)[0])
    if not isinstance(i, Variable) or i.dtype != "int64":
        found = i.dtype if isinstance(i, Variable) else type(i).__name__
        raise TypeError(f"{where}: the index i must be an int64 Variable of shape [1], got {found}")
    return None


def _static_array(array, where: str) -> None:
    if not isinstance(array, Variable) or array.type != VarType.LOD_TENSOR_ARRAY:
        found = array.type if isinstance(array, Variable) else type(array).__name__
        raise TypeError(f"{where}: array must be a tensor array (fluid.layers.create_array), got {found}")


def create_array(dtype):
    """An empty tensor array of `dtype` elements: a LOD_TENSOR_ARRAY variable, or [] in eager mode."""
    helper = LayerHelper("array")
    if helper.eager:
        return []
    return _array_var(helper, dtype)


def array_write(x, i, array=None):
    """array[i] = x, returning the array (a new one when `array` is None). Eagerly, as Paddle's
    dygraph: i may be at most len(array), and writing at len(array) appends."""
    helper = LayerHelper("array_write", inputs=x)
    at = _subscript(i, "array_write")
    if at is not None:
        array = [] if array is None else array
        if not isinstance(array, list):
            raise TypeError(f"array_write: in eager mode array must be a list, got {type(array).__name__}")
        if at > len(array):
            raise FleetgraphError(f"array_write: index {at} is past the array's end ({len(array)} elements)")
        if at < len(array):
            array[at] = x
        else:
            array.append(x)
        return array
    if array is None:
        array = _array_var(helper, x.dtype)
    _static_array(array, "array_write")
    helper.append_op("write_to_array", {"X": [x], "I": [i]}, {"Out": [array]})
    return array


def array_read(array, i):
    """array[i]: a variable of the array's element type (the element itself in eager mode)."""
    at = _subscript(i, "array_read")
    if at is not None:
        if not isinstance(array, list):
            raise TypeError(f"array_read: in eager mode array must be a list, got {type(array).__name__}")
        return array[at]
    _static_array(array, "array_read")
    helper = LayerHelper("array_read", inputs=i)
    out = helper.create_variable_for_type_inference(array.dtype)
    helper.append_op("read_from_array", {"X": [array], "I": [i]}, {"Out": [out]})
    return out


def array_length(array):
    """The number of elements of `array`: an int64 [1] variable (a Python int in eager mode)."""
    if isinstance(array, list):
        return len(array)
    _static_array(array, "array_length")
    helper = LayerHelper("array_length", inputs=array)
    out = helper.create_variable_for_type_inference("int64", stop_gradient=True)
    helper.append_op("lod_array_length", {"X": [array]}, {"Out": [out]})
    return out


def tensor_array_to_tensor(input, axis=1, name=None, use_stack=False):
    """The array's elements concatenated (or stacked) along `axis`, and each one's size along it
    (int32); Paddle 1.8.5's signature, which returns both."""
    _static_array(input, "tensor_array_to_tensor")
    helper = LayerHelper("tensor_array_to_tensor", name, inputs=input)
    out = helper.create_variable_for_type_inference(input.dtype)
    index = helper.create_variable_for_type_inference("int32", stop_gradient=True)
    attrs = {"axis": int(axis), "use_stack": bool(use_stack)}
    helper.append_op("tensor_array_to_tensor", {"X": [input]}, {"Out": [out], "OutIndex": [index]}, attrs)
    return out, index


def lod_rank_table(x, level=0):
    """The sequences of `x`'s LoD level `level` ranked by length, longest first (a LOD_RANK_TABLE
    variable, which lod_tensor_to_array, shrink_memory and the reorder read)."""
    helper = LayerHelper("lod_rank_table", inputs=x)
    table = helper.block.create_var(unique_name.generate("lod_rank_table"), type=VarType.LOD_RANK_TABLE)
    helper.append_op("lod_rank_table", {"X": [x]}, {"Out": [table]}, {"level": int(level)})
    return table


def max_sequence_len(rank_table):
    """The longest sequence's length in `rank_table`: an int64 [1] variable."""
    helper = LayerHelper("max_seqence_len", inputs=rank_table)  # sic: Paddle's helper name
    out = helper.create_variable_for_type_inference("int64", stop_gradient=True)
    helper.append_op("max_sequence_len", {"RankTable": [rank_table]}, {"Out": [out]})
    return out


def lod_tensor_to_array(x, table):
    """A tensor array whose element t holds step t of every sequence of `x` longer than t, in the
    table's rank order (DynamicRNN's step inputs)."""
    helper = LayerHelper("lod_tensor_to_array", inputs=x)
    array = _array_var(helper, x.dtype, unique_name.generate("lod_tensor_to_array"))
    helper.append_op("lod_tensor_to_array", {"X": [x], "RankTable": [table]}, {"Out": [array]})
    return array


def array_to_lod_tensor(x, table):
    """The inverse of lod_tensor_to_array: the steps in the array gathered back into sequences,
    in the batch's order, as one LoD tensor."""
    helper = LayerHelper("array_to_lod_tensor", inputs=x)
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op("array_to_lod_tensor", {"X": [x], "RankTable": [table]}, {"Out": [out]})
    return out


def shrink_memory(x, i, table):
    """The rows of the memory `x` that belong to the sequences still running at step `i`."""
    helper = LayerHelper("shrink_memory", inputs=x)
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op("shrink_rnn_memory", {"X": [x], "I": [i], "RankTable": [table]}, {"Out": [out]})
    return out


def reorder_lod_tensor_by_rank(x, rank_table):
    """`x`'s sequences (its rows, without LoD) in the order of `rank_table`."""
    helper = LayerHelper("reorder_lod_tensor_by_rank", inputs=x)
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op("reorder_lod_tensor_by_rank", {"X": [x], "RankTable": [rank_table]}, {"Out": [out]})
    return out
