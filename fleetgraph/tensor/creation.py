"""`paddle` tensor functions: creation (Paddle 2.0's python/paddle/tensor/creation.py), in 2.0's
signatures over the Fluid layer functions of layers/creation.py and layers/tensor_shape.py.

A function that builds from numbers alone has no input to tell it the mode: it makes an eager
Tensor unless `paddle.enable_static()` was called (`created()`), as Paddle 2.0's do."""

from __future__ import annotations

import contextlib

import numpy as np

from ..dygraph.dispatch import bind
from ..dygraph.mode import eager_guard, in_dynamic_mode
from ..dygraph.tensor import Tensor
from ..ir import get_default_dtype
from ..layers import creation as fluid_creation
from ..layers import tensor as fluid_tensor
from ..layers import tensor_shape

__all__ = [
    "arange",
    "linspace",
    "eye",
    "full_like",
    "zeros_like",
    "ones_like",
    "empty",
    "empty_like",
    "diag",
    "meshgrid",
    "tril",
    "triu",
    "assign",
]


def created():
    """The mode for a tensor built from numbers: eager unless enable_static() was called."""
    return eager_guard() if in_dynamic_mode() else contextlib.nullcontext()


def constant(array, like):
    """A NumPy array as a tensor of `like`'s kind (an eager Tensor beside an eager Tensor)."""
    with eager_guard() if isinstance(like, Tensor) else contextlib.nullcontext():
        return fluid_tensor.assign(np.asarray(array))


def arange(start=0, end=None, step=1, dtype=None, name=None):
    """[start, end) by step ([0, start) when end is None), int64 unless dtype says otherwise (2.0's
    default, whatever the bounds' types)."""
    if end is None:
        start, end = 0, start
    with created():
        return fluid_creation.arange(start, end, step, "int64" if dtype is None else dtype, name)


def linspace(start, stop, num, dtype=None, name=None):
    """num values evenly spaced from start to stop, both included (float32 unless dtype says)."""
    with created():
        return fluid_creation.linspace(start, stop, num, "float32" if dtype is None else dtype)


def eye(num_rows, num_columns=None, dtype=None, name=None):
    """The [num_rows, num_columns] identity matrix (square when num_columns is None), float32 by default."""
    with created():
        return fluid_creation.eye(num_rows, num_columns, dtype="float32" if dtype is None else dtype)


def full_like(x, fill_value, dtype=None, name=None):
    """fill_value in x's shape, of dtype (else x's)."""
    return tensor_shape.fill_like(x, fill_value, dtype=dtype, name=name)


def zeros_like(x, dtype=None, name=None):
    """Zeros in x's shape, of dtype (else x's)."""
    return tensor_shape.fill_like(x, 0.0, dtype=dtype, name=name)


def ones_like(x, dtype=None, name=None):
    """Ones in x's shape, of dtype (else x's)."""
    return tensor_shape.fill_like(x, 1.0, dtype=dtype, name=name)


def empty(shape, dtype=None, name=None):
    """A tensor of shape whose values the caller must not rely on (Paddle leaves them uninitialized;
    here they are zeros), of the default dtype (`set_default_dtype`) unless dtype says."""
    with created():
        return fluid_tensor.fill_constant(list(shape), dtype or get_default_dtype(), 0.0, name=name)


def empty_like(x, dtype=None, name=None):
    """empty in x's shape, of dtype (else x's)."""
    return tensor_shape.fill_like(x, 0.0, dtype=dtype, name=name)


def _diagonal_of(x, offset: int):
    """The `offset` diagonal of the matrix x, a vector: gather_nd at its (row, column) pairs."""
    rows, cols = x.shape
    first_row, first_col = max(-offset, 0), max(offset, 0)
    count = max(min(rows - first_row, cols - first_col), 0)
    if rows < 0 or cols < 0:
        raise NotImplementedError(f"diag: a matrix of unknown shape {list(x.shape)}; expected static dims")
    index = np.stack([np.arange(count) + first_row, np.arange(count) + first_col], axis=1).astype("int64")
    return tensor_shape.gather_nd(x, constant(index, x))


def diag(x, offset=0, padding_value=0, name=None):
    """A vector x on the `offset` diagonal of a square matrix (padding_value elsewhere), or the
    `offset` diagonal of a matrix x as a vector (Paddle's diag_v2)."""
    if not isinstance(offset, int) or isinstance(offset, bool):
        raise TypeError(f"diag: offset {offset!r}; expected an int")
    if len(x.shape) == 2:
        out = _diagonal_of(x, offset)
    elif len(x.shape) == 1:
        out = bind("diag_embed", {"Input": [x]}, {"offset": offset, "dim1": 0, "dim2": 1})
        if padding_value != 0:
            band = bind("diag_embed", {"Input": [ones_like(x)]}, {"offset": offset, "dim1": 0, "dim2": 1})
            off_band = bind("scale", {"X": [band]}, {"scale": -float(padding_value), "bias": float(padding_value)})
            out = bind("elementwise_add", {"X": [out], "Y": [off_band]}, {"axis": -1})
    else:
        raise ValueError(f"diag: x of rank {len(x.shape)}; expected 1 or 2")
    out.stop_gradient = True
    return out


def meshgrid(*args, **kwargs):
    """N 1-D tensors (as arguments or one list) as N grids of shape [len_0, ..., len_N-1]."""
    unknown = set(kwargs) - {"name"}
    if unknown:
        raise TypeError(f"meshgrid: unexpected keyword arguments {sorted(unknown)}; expected name")
    tensors = list(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else list(args)
    return fluid_creation.meshgrid(tensors)


def tril(x, diagonal=0, name=None):
    """x with the elements above its `diagonal` (of the last two dims) zeroed."""
    return fluid_creation.tril(x, diagonal, name)


def triu(x, diagonal=0, name=None):
    """x with the elements below its `diagonal` (of the last two dims) zeroed."""
    return fluid_creation.triu(x, diagonal, name)


def assign(x, output=None):
    """A copy of x (a tensor, NumPy array, list or number) into a new tensor or `output`."""
    with created() if not hasattr(x, "shape") or isinstance(x, np.ndarray) else contextlib.nullcontext():
        return fluid_tensor.assign(x, output)


# Paddle 2.0's Tensor has no creation methods (its methods come from the other families)
TENSOR_METHODS: dict = {}
