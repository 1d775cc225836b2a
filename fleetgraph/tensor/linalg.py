"""`paddle` tensor functions: linalg (Paddle 2.0's python/paddle/tensor/linalg.py): products, norms
(composed of abs, pow and the reductions as Paddle 2.0's p_norm and frobenius_norm compute them),
distances and the histogram."""

from __future__ import annotations

import math

from .. import layers
from ..dygraph.dispatch import bind
from ..layers.products import bmm, dist, dot, t  # noqa: F401  (2.0's functions of these names are Fluid's)
from ..layers.tensor_shape import fill_like
from ..ops.products import DEFAULT_DIM
from ..tensor_api import matmul, transpose  # noqa: F401  (their first home)
from .math import pow, sqrt

__all__ = ["matmul", "dot", "norm", "transpose", "dist", "t", "cross", "bmm", "histogram", "mv", "cholesky"]


def _vector_norm(x, p: float, axis, keepdim: bool):
    """The p-norm of x over `axis` (an int, or None for all elements): inf / -inf take the largest /
    smallest |x|, 0 counts the nonzero elements."""
    dim = None if axis is None else [axis]
    if p == math.inf:
        return layers.reduce_max(layers.abs(x), dim, keepdim)
    if p == -math.inf:
        return layers.reduce_min(layers.abs(x), dim, keepdim)
    if p == 0:
        nonzero = layers.cast(layers.not_equal(x, fill_like(x, 0.0)), x.dtype)
        return layers.reduce_sum(nonzero, dim, keepdim)
    return pow(layers.reduce_sum(pow(layers.abs(x), p), dim, keepdim), 1.0 / p)


def _frobenius_norm(x, axis, keepdim: bool):
    return sqrt(layers.reduce_sum(layers.elementwise_mul(x, x), axis, keepdim))


def norm(x, p="fro", axis=None, keepdim=False, name=None):
    """The norm of x as Paddle 2.0's: 'fro' or a number p; over all elements (axis None), one axis
    (a vector norm) or two (a matrix norm: the entrywise p-norm of those planes)."""
    if isinstance(p, str) and p != "fro":
        raise ValueError(f"norm: p {p!r}; expected 'fro' or a number")
    if not isinstance(p, (str, int, float)):
        raise ValueError(f"norm: p {p!r}; expected 'fro' or a number")
    if axis is None:
        return _frobenius_norm(x, None, keepdim) if p == "fro" else _vector_norm(x, float(p), None, keepdim)
    axes = list(axis) if isinstance(axis, (list, tuple)) else [axis]
    if len(axes) == 1:
        return _vector_norm(x, 2.0 if p == "fro" else float(p), axes[0], keepdim)
    if len(axes) != 2:
        raise ValueError(f"norm: axis {axis}; expected None, an int or a list of one or two ints")
    if p == "fro":
        return _frobenius_norm(x, axes, keepdim)
    if p == 0:
        raise ValueError(f"norm: p 0 takes axis None or one int; got {axis}")
    return pow(layers.reduce_sum(pow(layers.abs(x), float(p)), axes, keepdim), 1.0 / float(p))


def cross(x, y, axis=None, name=None):
    """The cross product of 3-vectors along `axis` (None: the first axis of size 3)."""
    attrs = {"dim": DEFAULT_DIM if axis is None else int(axis)}
    return bind("cross", {"X": [x], "Y": [y]}, attrs, name=name)


def cholesky(x, upper=False, name=None):
    """The Cholesky factor of each symmetric positive-definite matrix of x [*, M, M]: L with
    x = L L^T, or U with x = U^T U when `upper`."""
    if not isinstance(upper, bool):
        raise TypeError(f"cholesky: upper expected a bool, got {type(upper).__name__}")
    return bind("cholesky", {"X": [x]}, {"upper": upper}, name=name)


def mv(x, vec, name=None):
    """The product of the matrix x [M, N] and the vector vec [N]: a vector [M]."""
    if len(x.shape) != 2 or len(vec.shape) != 1:
        raise ValueError(f"mv: x {list(x.shape)} and vec {list(vec.shape)}; expected a matrix and a vector")
    return layers.reshape(layers.matmul(x, layers.reshape(vec, [-1, 1])), [-1], name=name)


def histogram(input, bins=100, min=0, max=0):  # noqa: A002
    """int64 counts of input's elements in `bins` equal bins over [min, max] (both 0: input's own
    range); elements outside the range are not counted, the last bin includes max."""
    if max < min:
        raise ValueError(f"histogram: max {max} is less than min {min}; expected max >= min")
    x = layers.cast(layers.reshape(input, [-1]), "float64")
    if min == max:
        low, high = layers.reduce_min(x), layers.reduce_max(x)
    else:
        low, high = fill_like(x, float(min)), fill_like(x, float(max))
    width = layers.elementwise_sub(high, low)
    # a constant input has no width: Paddle then counts over [min - 1, max + 1]
    flat = layers.cast(layers.equal(width, fill_like(width, 0.0)), "float64")
    low, width = layers.elementwise_sub(low, flat), layers.elementwise_add(width, layers.scale(flat, 2.0))
    offset = layers.elementwise_sub(x, low)
    inside = layers.logical_and(
        layers.greater_equal(offset, fill_like(offset, 0.0)), layers.less_equal(offset, layers.expand_as(width, offset))
    )
    position = layers.elementwise_div(layers.scale(offset, float(bins)), width)
    index = layers.cast(layers.clip(layers.floor(position), 0.0, bins - 1.0), "int64")
    counted = layers.elementwise_mul(
        layers.one_hot_v2(index, bins), layers.reshape(layers.cast(inside, "float32"), [-1, 1])
    )
    return layers.cast(layers.reduce_sum(counted, 0), "int64")


# as Paddle 2.0's monkey_patch_math_varbase: each function of the family is a Tensor method too
TENSOR_METHODS: dict = {name: globals()[name] for name in __all__}
