"""`paddle` tensor functions: stat (Paddle 2.0's python/paddle/tensor/stat.py): mean, var and std over
axes, numel, and median (composed of topk and slice, as Paddle 2.0 computes it); with rank and shape."""

from __future__ import annotations

import contextlib

from .. import layers
from ..dygraph.dispatch import bind
from ..dygraph.mode import eager_guard
from ..dygraph.tensor import Tensor
from ..layers.tensor_shape import shape  # noqa: F401  (Paddle 2.0's tensor/attribute.py: Fluid's shape)
from ..tensor_api import mean, topk  # noqa: F401  (paddle.mean's first home)
from .math import clip, sqrt

# rank and shape are Paddle 2.0's tensor/attribute.py, which has no module of its own here
__all__ = ["mean", "std", "var", "numel", "median", "rank", "shape"]


def numel(x, name=None):
    """An int64 [1]: the number of elements of x."""
    return bind("size", {"Input": [x]}, dtype="int64", name=name)


def rank(input):  # noqa: A002
    """An int32 tensor holding input's number of dims: Fluid's rank (a constant), eager for an eager
    input as Paddle 2.0's."""
    with eager_guard() if isinstance(input, Tensor) else contextlib.nullcontext():
        return layers.rank(input)


def var(x, axis=None, unbiased=True, keepdim=False, name=None):
    """The variance of x over axis (all when None), divided by n - 1 when unbiased (n where n is 1)."""
    dims = None if axis is None else ([axis] if isinstance(axis, int) else list(axis))
    centred = layers.elementwise_sub(x, layers.reduce_mean(x, dims, keep_dim=True))
    total = layers.reduce_sum(layers.elementwise_mul(centred, centred), dims, keep_dim=keepdim)
    n = layers.elementwise_div(layers.cast(numel(x), x.dtype), layers.cast(numel(total), x.dtype))
    if unbiased:
        n = clip(layers.scale(n, 1.0, -1.0), min=1.0)
    return layers.elementwise_div(total, n, name=name)


def std(x, axis=None, unbiased=True, keepdim=False, name=None):
    """The standard deviation of x over axis: the square root of var."""
    return sqrt(var(x, axis, unbiased, keepdim), name=name)


def median(x, axis=None, keepdim=False, name=None):
    """The median of x along axis (of the flattened x when None): the mean of the two middle values
    for an even count; float64 for float64 x, else float32."""
    flat, dims = axis is None, len(x.shape)
    if flat:
        x, axis = layers.reshape(x, [-1]), 0
    rank = len(x.shape)
    axis = axis + rank if axis < 0 else axis
    size = x.shape[axis]
    if size < 0:
        raise ValueError(f"median: axis {axis} of x {list(x.shape)} has no static size; expected a known one")
    dtype = "float64" if x.dtype == "float64" else "float32"
    kth = size >> 1
    smallest, _ = topk(x, kth + 1, axis=axis, largest=False)
    middle = layers.cast(layers.slice(smallest, [axis], [kth], [kth + 1]), dtype)
    if size % 2 == 0:
        below = layers.cast(layers.slice(smallest, [axis], [kth - 1], [kth]), dtype)
        middle = layers.scale(layers.elementwise_add(below, middle), 0.5)
    if flat:
        shape = [1] * dims if keepdim else [1]
    else:
        shape = list(middle.shape) if keepdim else list(x.shape[:axis]) + list(x.shape[axis + 1 :])
    return layers.reshape(middle, shape, name=name)


# as Paddle 2.0's monkey_patch_math_varbase: each function of the family is a Tensor method too
TENSOR_METHODS: dict = {name: globals()[name] for name in __all__}
