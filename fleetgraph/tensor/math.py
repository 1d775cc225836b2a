"""`paddle` tensor functions: math (Paddle 2.0's python/paddle/tensor/math.py), thin functions of 2.0's
signatures over the Fluid layer functions and ops, the same in dynamic and static mode."""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import layers
from ..dygraph.dispatch import bind
from ..dygraph.tensor import Tensor
from ..ir.program import Variable
from ..layers.indexing import multiplex  # noqa: F401  (2.0's paddle.multiplex is Fluid's)
from ..layers.math import mul  # noqa: F401  (2.0's paddle.mul is Fluid's)
from ..layers.pointwise import (  # noqa: F401  (the 2.0 functions of these names are Fluid's layers)
    acos,
    asin,
    atan,
    ceil,
    cos,
    floor,
    reciprocal,
    round,  # noqa: A004
    rsqrt,
    sin,
    stanh,
)
from ..layers.tensor_shape import fill_like
from ..tensor_api import (  # noqa: F401  (their first home, which fleetgraph's namespace still names)
    abs,  # noqa: A004
    add,
    add_n,
    divide,
    exp,
    log,
    multiply,
    scale,
    sign,
    sqrt,
    square,
    subtract,
    sum,  # noqa: A004
    tanh,
)

__all__ = [
    "abs", "acos", "all", "any", "asin", "atan", "ceil", "cos", "cosh", "cumsum", "exp", "floor",
    "increment", "log", "log2", "log10", "logsumexp", "mul", "multiplex", "pow", "prod", "reciprocal",
    "round", "rsqrt", "scale", "sign", "sin", "sinh", "sqrt", "square", "stanh", "sum", "tanh", "tanh_",
    "add_n", "max", "maximum", "min", "minimum", "mm", "divide", "floor_divide", "remainder", "mod",
    "floor_mod", "multiply", "add", "subtract", "log1p", "erf", "addmm", "clip", "trace", "kron",
    "isfinite", "isinf", "isnan", "broadcast_shape", "conj", "inverse",
]  # fmt: skip


def pow(x, y, name=None):  # noqa: A001
    """x ** y elementwise: the pow op for a number y, elementwise_pow for a Tensor y."""
    if isinstance(y, (int, float)):
        return bind("pow", {"X": [x]}, {"factor": float(y)}, name=name)
    return layers.elementwise_pow(x, y, name=name)


def _scaled_log(base: float):
    def log_base(x, name=None):
        return layers.scale(log(x), 1.0 / math.log(base), name=name)

    log_base.__name__ = f"log{int(base)}"
    log_base.__doc__ = f"The base-{int(base)} logarithm of x elementwise: log(x) / ln({int(base)})."
    return log_base


log2, log10 = _scaled_log(2.0), _scaled_log(10.0)


def log1p(x, name=None):
    """log(1 + x) elementwise."""
    return layers.log1p(x, name=name)


def erf(x, name=None):
    """The error function of x elementwise."""
    return bind("erf", {"X": [x]}, name=name)


def cosh(x, name=None):
    """(e^x + e^-x) / 2 elementwise."""
    return layers.scale(add(exp(x), exp(layers.scale(x, -1.0))), 0.5, name=name)


def sinh(x, name=None):
    """(e^x - e^-x) / 2 elementwise."""
    return layers.scale(subtract(exp(x), exp(layers.scale(x, -1.0))), 0.5, name=name)


def tanh_(x, name=None):
    """tanh of x written into the Tensor x itself. In a static program it is tanh, out of place, with
    Paddle 2.0's warning. The tape cannot follow an in-place write, so a Tensor that needs its
    gradient is refused rather than given a wrong one."""
    if not isinstance(x, Tensor):
        warnings.warn(
            "In static mode, tanh_() is the same as tanh() and does not perform inplace operation.", stacklevel=2
        )
        return tanh(x, name)
    if not x.stop_gradient:
        raise NotImplementedError(f"tanh_: x {x.name!r} needs its gradient; an in-place tanh_ is not on the tape")
    bind("tanh", {"X": [x]}, outputs={"Out": [x]})
    return x


def _axes(axis) -> list[int] | None:
    """2.0's axis argument (None, an int, a list or tuple) as the reduce layers' dim (None: all)."""
    if axis is None:
        return None
    dims = [axis] if isinstance(axis, int) else list(axis)
    return dims or None


def _reducer(layer, doc: str):
    def reduce(x, axis=None, keepdim=False, name=None):
        return layer(x, dim=_axes(axis), keep_dim=keepdim, name=name)

    reduce.__doc__ = doc
    return reduce


max = _reducer(layers.reduce_max, "The largest element of x over axis (all when None).")  # noqa: A001
min = _reducer(layers.reduce_min, "The smallest element of x over axis (all when None).")  # noqa: A001
all = _reducer(layers.reduce_all, "Whether every element of the bool x is True over axis.")  # noqa: A001
any = _reducer(layers.reduce_any, "Whether some element of the bool x is True over axis.")  # noqa: A001
max.__name__, min.__name__, all.__name__, any.__name__ = "max", "min", "all", "any"


def prod(x, axis=None, keepdim=False, dtype=None, name=None):
    """The product of x's elements over axis; x is cast to `dtype` first when given."""
    if dtype is not None:
        x = layers.cast(x, dtype)
    return layers.reduce_prod(x, dim=_axes(axis), keep_dim=keepdim, name=name)


def logsumexp(x, axis=None, keepdim=False, name=None):
    """log(sum(exp(x))) over axis (all when None), computed as Paddle 2.0's kernel does, after
    subtracting the largest element, so that large x gives no overflow."""
    dims = _axes(axis)
    peak = layers.reduce_max(x, dims, keep_dim=True)
    total = layers.reduce_sum(exp(subtract(x, peak)), dims, keep_dim=keepdim)
    return add(log(total), layers.reduce_max(x, dims, keep_dim=keepdim), name=name)


def cumsum(x, axis=None, dtype=None, name=None):
    """The running sum along axis; over the flattened x when axis is None. x is cast to `dtype` first."""
    if dtype is not None:
        x = layers.cast(x, dtype)
    if axis is None:
        x, axis = layers.reshape(x, [-1]), 0
    return bind("cumsum", {"X": [x]}, {"axis": int(axis)}, name=name)


def maximum(x, y, name=None):
    """The larger of x and y elementwise (broadcast)."""
    return layers.elementwise_max(x, y, name=name)


def minimum(x, y, name=None):
    """The smaller of x and y elementwise (broadcast)."""
    return layers.elementwise_min(x, y, name=name)


def floor_divide(x, y, name=None):
    """x // y elementwise for integer tensors."""
    return bind("elementwise_floordiv", {"X": [x], "Y": [y]}, {"axis": -1}, name=name)


def remainder(x, y, name=None):
    """x mod y elementwise, with the sign of y as Python's %."""
    return bind("elementwise_mod", {"X": [x], "Y": [y]}, {"axis": -1}, name=name)


mod = floor_mod = remainder


def mm(input, mat2, name=None):  # noqa: A002
    """The matrix product of input and mat2 (batched over leading dims)."""
    return layers.matmul(input, mat2, name=name)


def addmm(input, x, y, beta=1.0, alpha=1.0, name=None):  # noqa: A002
    """beta * input + alpha * (x @ y)."""
    return layers.addmm(input, x, y, alpha=alpha, beta=beta, name=name)


def clip(x, min=None, max=None, name=None):  # noqa: A002
    """x clipped to [min, max]; an unset bound leaves that side open. A bound may be a one-element
    Tensor (then the clip is elementwise_max and elementwise_min)."""
    if isinstance(min, Variable) or isinstance(max, Variable):
        low = x if min is None else maximum(x, _bound(min, x))
        return low if max is None else minimum(low, _bound(max, x), name=name)
    low = -np.finfo(np.float32).max if min is None else float(min)
    high = np.finfo(np.float32).max if max is None else float(max)
    return bind("clip", {"X": [x]}, {"min": low, "max": high}, name=name)


def _bound(value, x):
    """A clip bound as a variable of x's kind: a number becomes a constant shaped as x."""
    return value if isinstance(value, Variable) else fill_like(x, float(value))


def trace(x, offset=0, axis1=0, axis2=1, name=None):
    """The sum of the diagonal `offset` of the planes axis1 x axis2."""
    return layers.trace(x, offset, axis1, axis2, name=name)


def kron(x, y, name=None):
    """The Kronecker product of x and y."""
    return layers.kron(x, y, name=name)


def isnan(x, name=None):
    """A bool tensor: where x is NaN (NaN is the one value unequal to itself)."""
    return layers.not_equal(x, x, name=name)


def isinf(x, name=None):
    """A bool tensor: where x is +inf or -inf."""
    if x.dtype not in ("float16", "float32", "float64"):
        return fill_like(x, 0.0, dtype="bool", name=name)
    return layers.equal(layers.abs(x), fill_like(x, math.inf), name=name)


def isfinite(x, name=None):
    """A bool tensor: where x is neither NaN nor infinite."""
    return layers.logical_not(layers.logical_or(isnan(x), isinf(x)), name=name)


def increment(x, value=1.0, name=None):
    """x + value for a one-element x: a new Tensor in dynamic mode (x unchanged, as Paddle 2.0's
    core.ops.increment), x itself updated in a static program (Paddle's step counter)."""
    if isinstance(x, Tensor):
        return bind("increment", {"X": [x]}, {"step": float(value)}, name=name)
    return layers.increment(x, value)


def broadcast_shape(x_shape, y_shape):
    """The shape x_shape and y_shape broadcast to, as a list."""
    return list(np.broadcast_shapes(tuple(x_shape), tuple(y_shape)))


def inverse(x, name=None):
    """The inverse of each square matrix of x [*, M, M] (float32 or float64)."""
    return bind("inverse", {"Input": [x]}, out_slot="Output", name=name)


def conj(x, name=None):
    """The complex conjugate of x: a copy for the real dtypes (fleetgraph has no complex ones)."""
    return bind("assign", {"X": [x]}, name=name)


# as Paddle 2.0's monkey_patch_math_varbase: each function of the family is a Tensor method too
TENSOR_METHODS: dict = {name: globals()[name] for name in __all__ if name != "broadcast_shape"}
