"""`paddle` tensor functions: search (Paddle 2.0's python/paddle/tensor/search.py): argmax, argmin,
argsort, sort, index_select, index_sample, nonzero, where and masked_select, over the ops of
ops/manipulation.py and ops/indexing.py (topk is tensor_api's)."""

from __future__ import annotations

from .. import tensor_api
from ..dygraph.dispatch import bind
from ..ir.dtypes import convert_dtype
from ..layers import indexing
from ..layers import manipulation as fluid_manipulation
from ..layers import math as fluid_math
from ..layers import tensor as fluid_tensor

__all__ = ["argmax", "argmin", "argsort", "sort", "index_select", "index_sample", "nonzero", "where", "masked_select"]


_VAR_TYPES = {"int32": 2, "int64": 3}  # Paddle's VarType codes, arg_max's dtype attr


def _arg(op_type: str, x, axis, keepdim, dtype, name):
    dtype = convert_dtype(dtype)
    if dtype not in ("int32", "int64"):
        raise TypeError(f"{op_type}: dtype {dtype}; expected int32 or int64")
    if axis is not None and (not isinstance(axis, int) or isinstance(axis, bool)):
        raise TypeError(f"{op_type}: axis {axis!r}; expected an int or None")
    attrs = {"axis": 0 if axis is None else axis, "keepdims": bool(keepdim), "flatten": axis is None}
    attrs["dtype"] = _VAR_TYPES[dtype]
    out = bind(op_type, {"X": [x]}, attrs, dtype=dtype, name=name)
    out.stop_gradient = True
    return out


def argmax(x, axis=None, keepdim=False, dtype="int64", name=None):
    """The index of x's largest entry along axis (of x flattened when axis is None), of dtype."""
    return _arg("arg_max", x, axis, keepdim, dtype, name)


def argmin(x, axis=None, keepdim=False, dtype="int64", name=None):
    """The index of x's smallest entry along axis (of x flattened when axis is None), of dtype."""
    return _arg("arg_min", x, axis, keepdim, dtype, name)


def argsort(x, axis=-1, descending=False, name=None):
    """The int64 indices that sort x along axis (stable: equal values keep their order)."""
    return fluid_manipulation.argsort(x, axis, descending, name)[1]


def sort(x, axis=-1, descending=False, name=None):
    """x sorted along axis (ascending unless descending)."""
    return fluid_manipulation.argsort(x, axis, descending, name)[0]


def index_select(x, index, axis=0, name=None):
    """x's slices at the 1-D `index` along axis."""
    return bind("index_select", {"X": [x], "Index": [index]}, {"dim": int(axis)}, name=name)


def index_sample(x, index):
    """out[i, j] = x[i, index[i, j]] for a 2-D x and index."""
    return indexing.index_sample(x, index)


def nonzero(x, as_tuple=False):
    """The int64 coordinates [N, rank] of x's nonzero entries; as_tuple: one [N, 1] column per axis
    (Paddle 2.0.0 slices the column along axis rank - 1, which fails past rank 2; here axis 1)."""
    coords = bind("where_index", {"Condition": [x]}, dtype="int64")
    if not as_tuple:
        return coords
    return tuple(indexing.slice(coords, [1], [i], [i + 1]) for i in range(len(x.shape)))


def where(condition, x, y, name=None):
    """x where condition holds, else y; shapes that differ broadcast (as 2.0's multiply-and-add)."""
    if list(x.shape) == list(y.shape):
        return fluid_math.where(condition, x, y, name=name)
    keep = fluid_tensor.cast(condition, x.dtype)
    drop = fluid_tensor.cast(fluid_math.logical_not(condition), x.dtype)
    return fluid_math.elementwise_add(fluid_math.elementwise_mul(x, keep), fluid_math.elementwise_mul(y, drop))


def masked_select(x, mask, name=None):
    """The 1-D tensor of x's entries where the bool mask (x's shape) holds, in row-major order."""
    if convert_dtype(mask.dtype) != "bool":
        raise TypeError(f"masked_select: mask of dtype {convert_dtype(mask.dtype)}; expected bool")
    coords = bind("where_index", {"Condition": [mask]}, dtype="int64")
    return bind("gather_nd", {"X": [x], "Index": [coords]}, name=name)


TENSOR_METHODS: dict = {
    f.__name__: f
    for f in (argmax, argmin, argsort, sort, index_select, index_sample, nonzero, where, masked_select, tensor_api.topk)
}
