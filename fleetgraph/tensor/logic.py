"""`paddle` tensor functions: logic (Paddle 2.0's python/paddle/tensor/logic.py): comparisons and logical
operators elementwise (bool tensors), and the whole-tensor checks equal_all, allclose and is_empty."""

from __future__ import annotations

from .. import layers
from ..dygraph.dispatch import bind
from ..dygraph.tensor import is_tensor  # noqa: F401  (paddle.is_tensor)
from ..layers.math import logical_and, logical_not, logical_or, logical_xor  # noqa: F401  (2.0's are Fluid's)
from ..tensor_api import full

__all__ = [
    "equal", "equal_all", "greater_equal", "greater_than", "is_empty", "less_equal", "less_than",
    "logical_and", "logical_not", "logical_or", "logical_xor", "not_equal", "allclose", "is_tensor",
]  # fmt: skip


def _comparison(fluid_layer):
    """Fluid's comparison layer with 2.0's signature (x, y, name): no force_cpu or cond."""

    def compare(x, y, name=None):
        return fluid_layer(x, y, name=name)

    compare.__name__, compare.__doc__ = fluid_layer.__name__, fluid_layer.__doc__
    return compare


equal, not_equal, greater_equal, greater_than, less_equal, less_than = (
    _comparison(getattr(layers, t))
    for t in ("equal", "not_equal", "greater_equal", "greater_than", "less_equal", "less_than")
)


def is_empty(x, name=None):
    """A bool [1]: whether x has no elements."""
    return bind("is_empty", {"X": [x]}, dtype="bool", name=name)


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
