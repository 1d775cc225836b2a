"""The 2.x tensor functions of the top-level namespace (`paddle.mean`, `paddle.matmul`, ...)."""

from __future__ import annotations

import contextlib

import numpy as np

from . import layers
from .dygraph import opfunc
from .dygraph.dispatch import bind_function
from .dygraph.mode import eager_guard, in_dynamic_mode
from .dygraph.tensor import Tensor
from .ir.dtypes import convert_dtype
from .layers.math import abs, exp, log, sign, sqrt, square, tanh  # noqa: F401  (the 2.x names are the same)
from .layers.tensor import fill_constant

# the common calls with their attrs resolved once (the layer functions' dicts cost more than the op)
_ALL = {"dim": [0], "keep_dim": False, "reduce_all": True}
_mean_all, _sum_all = bind_function("reduce_mean", _ALL), bind_function("reduce_sum", _ALL)
_matmul = bind_function("matmul", {"transpose_X": False, "transpose_Y": False, "alpha": 1.0})


def mean(x, axis=None, keepdim=False, name=None):
    if axis is None and not keepdim:
        return _mean_all(x, name)
    return layers.reduce_mean(x, dim=axis, keep_dim=keepdim, name=name)


def sum(x, axis=None, dtype=None, keepdim=False, name=None):
    """The sum of x's elements over axis (all when None); x is cast to `dtype` first, as Paddle 2.0
    sums in the output dtype, which may not narrow x's (float64 to float32 or int32, int64 to int32)."""
    if dtype is not None:
        dtype = convert_dtype(dtype)
        if (x.dtype, dtype) in (("float64", "float32"), ("float64", "int32"), ("int64", "int32")):
            raise ValueError(f"sum: x is {x.dtype} but dtype is {dtype}; expected one that holds x's values")
        x = x if x.dtype == dtype else layers.cast(x, dtype)
    if axis is None and not keepdim:
        return _sum_all(x, name)
    return layers.reduce_sum(x, dim=axis, keep_dim=keepdim, name=name)


def add(x, y, name=None):
    return layers.elementwise_add(x, y, name=name)


def subtract(x, y, name=None):
    return layers.elementwise_sub(x, y, name=name)


def multiply(x, y, name=None):
    return layers.elementwise_mul(x, y, name=name)


_INTS = ("uint8", "int8", "int16", "int32", "int64")


def divide(x, y, name=None):
    """x / y elementwise; of integers the quotient truncated toward zero, as Paddle 2.0's integer
    DivFunctor (C++'s a / b), which the elementwise_floordiv op computes."""
    if x.dtype in _INTS:
        return layers.elementwise_floordiv(x, y, name=name)
    return layers.elementwise_div(x, y, name=name)


def add_n(inputs, name=None):
    return layers.sums(inputs if isinstance(inputs, (list, tuple)) else [inputs])


def matmul(x, y, transpose_x=False, transpose_y=False, name=None):
    if not (transpose_x or transpose_y):
        return _matmul(x, y, name)
    return layers.matmul(x, y, transpose_x, transpose_y, name=name)


def reshape(x, shape, name=None):
    return layers.reshape(x, shape, name=name)


def transpose(x, perm, name=None):
    return layers.transpose(x, perm, name=name)


def concat(x, axis=0, name=None):
    return layers.concat(x, axis, name=name)


def split(x, num_or_sections, axis=0, name=None):
    return layers.split(x, num_or_sections, axis, name=name)


def flatten(x, start_axis=0, stop_axis=-1, name=None):
    rank = len(x.shape)
    stop = stop_axis + rank if stop_axis < 0 else stop_axis
    # reshape2's 0 copies the dim at the same index; dims after the merged range are listed
    shape = [0] * start_axis + [-1] + list(x.shape[stop + 1 :])
    return layers.reshape(x, shape, name=name)


def cast(x, dtype):
    return layers.cast(x, dtype)


def scale(x, scale=1.0, bias=0.0, bias_after_scale=True, act=None, name=None):
    return layers.scale(x, scale, bias, bias_after_scale, act, name)


def _created():
    """Paddle 2.x creation functions have no input to go by: eager unless enable_static() was called."""
    return eager_guard() if in_dynamic_mode() else contextlib.nullcontext()


def full(shape, fill_value, dtype="float32", name=None):
    with _created():
        return fill_constant(shape, dtype, fill_value, name=name)


def zeros(shape, dtype="float32", name=None):
    return full(shape, 0.0, dtype, name)


def ones(shape, dtype="float32", name=None):
    return full(shape, 1.0, dtype, name)


def topk(x, k, axis=None, largest=True, sorted=True, name=None):
    return layers.nn.topk_v2(x, k, axis, largest, sorted, name=name)


# -- the eager Tensor's operators and methods: this layer's functions, attached to the class here so
# -- that dygraph/ imports no layer function; operators on Tensors take the op functions (opfunc)

_OPERATORS = (
    "elementwise_add", "elementwise_sub", "elementwise_mul", "elementwise_div", "elementwise_pow",
    "elementwise_floordiv", "elementwise_mod",
)  # fmt: skip
_add, _sub, _mul, _div, _pow, _floordiv, _mod = (opfunc.op_function(t) for t in _OPERATORS)
_scale = opfunc.op_function("scale")


def _operand(other, like: Tensor) -> Tensor:
    """The other operand of an arithmetic operator as a Tensor of `like`'s dtype."""
    return other if isinstance(other, Tensor) else Tensor(np.asarray(other, dtype=like.value.dtype))


def _floated(self: Tensor) -> Tensor:
    """An integer Tensor as float32: Paddle 2.0's operators cast it so before a float operand, or
    any number it is divided by or divides."""
    return layers.cast(self, "float32") if self.value.dtype.name in _INTS else self


def _scaled(self: Tensor, scale: float, bias: float) -> Tensor:
    return _scale(self, attrs={"scale": scale, "bias": bias, "bias_after_scale": True})


def _add_(self, other):
    if isinstance(other, Tensor):
        return _add(self, other)
    if isinstance(other, (int, float)):
        return _scaled(_floated(self) if isinstance(other, float) else self, 1.0, float(other))
    return _add(self, _operand(other, self))


def _sub_(self, other):
    if isinstance(other, Tensor):
        return _sub(self, other)
    if isinstance(other, (int, float)):
        return _scaled(_floated(self) if isinstance(other, float) else self, 1.0, -float(other))
    return _sub(self, _operand(other, self))


def _rsub_(self, other):
    if isinstance(other, (int, float)):
        return _scaled(_floated(self) if isinstance(other, float) else self, -1.0, float(other))
    return _sub(_operand(other, self), self)


def _mul_(self, other):
    if isinstance(other, Tensor):
        return _mul(self, other)
    if isinstance(other, (int, float)):
        return _scaled(_floated(self) if isinstance(other, float) else self, float(other), 0.0)
    return _mul(self, _operand(other, self))


def _truediv_(self, other):
    if isinstance(other, Tensor):
        return divide(self, other)
    if isinstance(other, (int, float)):
        return _scaled(_floated(self), 1.0 / float(other), 0.0)
    return _div(self, _operand(other, self))


def _rtruediv_(self, other):
    if isinstance(other, (int, float)):
        self = _floated(self)
    return _div(_operand(other, self), self)


def _integral(run):
    """`//` or `%` of a Tensor and a number or Tensor (a float operand casts an integer Tensor to
    float32 first, as Paddle 2.0's operators)."""

    def operator(self, other):
        if isinstance(other, float):
            self = _floated(self)
        return run(self, _operand(other, self))

    return operator


def _compare(op_type: str):
    """An elementwise comparison, as Paddle's Tensor operators are (a bool Tensor)."""

    def operator(self, other):
        other = other.value if isinstance(other, Tensor) else other
        return Tensor(getattr(np, op_type)(self.numpy(), other))

    return operator


_TENSOR_METHODS = {
    "__add__": _add_,
    "__radd__": _add_,
    "__sub__": _sub_,
    "__rsub__": _rsub_,
    "__mul__": _mul_,
    "__rmul__": _mul_,
    "__truediv__": _truediv_,
    "__rtruediv__": _rtruediv_,
    "__pow__": lambda self, other: _pow(self, _operand(other, self)),
    "__rpow__": lambda self, other: _pow(_operand(other, self), self),
    "__neg__": lambda self: _scale(self, attrs={"scale": -1.0, "bias": 0.0, "bias_after_scale": True}),
    "__floordiv__": _integral(_floordiv),
    "__mod__": _integral(_mod),
    "__matmul__": lambda self, other: _matmul(self, _operand(other, self)),
    "__eq__": _compare("equal"),
    "__ne__": _compare("not_equal"),
    "__lt__": _compare("less"),
    "__le__": _compare("less_equal"),
    "__gt__": _compare("greater"),
    "__ge__": _compare("greater_equal"),
    "clone": lambda self: layers.assign(self),
    "astype": lambda self, dtype: layers.cast(self, dtype),
    # x.mean() is paddle.mean(x), as Paddle's Tensor methods are
    **{f.__name__: f for f in (abs, exp, flatten, log, matmul, mean, reshape, sqrt, square, sum, tanh, transpose)},
}


def monkey_patch_varbase() -> None:
    """Give the eager Tensor its operators and methods (done on import; again is harmless), as
    Paddle's `fluid.monkey_patch_varbase`."""
    for name, function in _TENSOR_METHODS.items():
        setattr(Tensor, name, function)


monkey_patch_varbase()
