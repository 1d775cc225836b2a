"""`paddle` tensor functions: logic (Paddle 2.0's python/paddle/tensor/logic.py): comparisons and logical
operators elementwise (bool tensors), and the whole-tensor checks equal_all, allclose and is_empty."""

from __future__ import annotations

from .. import layers
from ..dygraph.tensor import is_tensor  # noqa: F401  (paddle.is_tensor)
from ..layers.math import (  # noqa: F401  (2.0's functions of these names are Fluid's, less `cond`/`out`)
    equal,
    greater_equal,
    greater_than,
    less_equal,
    less_than,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    not_equal,
)
from ..layers.pointwise import is_empty  # noqa: F401
from ..tensor_api import full

__all__ = [
    "equal", "equal_all", "greater_equal", "greater_than", "is_empty", "less_equal", "less_than",
    "logical_and", "logical_not", "logical_or", "logical_xor", "not_equal", "allclose", "is_tensor",
]  # fmt: skip


def equal_all(x, y, name=None):
    """A bool [1]: whether x and y have one shape and equal elements."""
    if list(x.shape) != list(y.shape):
        return full([1], False, "bool", name=name)
    return layers.reduce_all(layers.equal(x, y), name=name)


def allclose(x, y, rtol=1e-05, atol=1e-08, equal_nan=False, name=None):
    """A bool [1]: |x - y| <= atol + rtol * |y| everywhere (NaNs at the same places equal with equal_nan)."""
    return layers.allclose(x, y, float(rtol), float(atol), bool(equal_nan), name=name)


# as Paddle 2.0's monkey_patch_math_varbase: each function of the family is a Tensor method too
TENSOR_METHODS: dict = {name: globals()[name] for name in __all__ if name != "is_tensor"}
