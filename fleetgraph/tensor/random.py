"""`paddle` tensor functions: random (Paddle 2.0's python/paddle/tensor/random.py): rand, randn,
standard_normal, normal, uniform, randint, randperm over the random ops of ops/creation_random.py,
and bernoulli and multinomial composed from a uniform draw (Paddle has ops of their own; the draws
here follow the same distributions). Seed 0 draws from the global stream that paddle.seed sets."""

from __future__ import annotations

import contextlib

from ..dygraph.dispatch import bind
from ..dygraph.mode import eager_guard
from ..dygraph.tensor import Tensor
from ..ir import FleetgraphTypeError, get_default_dtype
from ..ir.dtypes import convert_dtype
from ..ir.program import Variable
from ..layers import tensor as fluid_tensor
from ..layers import tensor_shape
from ..layers.nn import topk_v2
from .creation import created

__all__ = ["bernoulli", "multinomial", "standard_normal", "normal", "uniform", "randn", "rand", "randint", "randperm"]

_FLOATS = ("float32", "float64")


def _shape(where: str, shape) -> list[int]:
    if isinstance(shape, Variable) or any(isinstance(d, Variable) for d in shape):
        raise NotImplementedError(f"{where}: shape given as a tensor is not supported; pass ints")
    return [int(d) for d in shape]


def _float_dtype(where: str, dtype) -> str:
    """dtype, else the default dtype (`set_default_dtype`), which Paddle's draws take only when it is
    float32 or float64 (a float16 default is refused, in Paddle's words)."""
    if dtype is None:
        dtype = get_default_dtype()
        if dtype not in _FLOATS:
            family = "uniform/rand" if where == "uniform" else "gaussian/standard_normal/randn/normal"
            raise FleetgraphTypeError(f"{family} only supports [float32, float64], but the default dtype is {dtype}")
    dtype = convert_dtype(dtype)
    if dtype not in _FLOATS:
        raise TypeError(f"{where}: dtype {dtype}; expected float32 or float64")
    return dtype


def _draw(op_type: str, attrs: dict, dtype: str, name=None):
    """A random op's draw, eager unless enable_static() was called; it takes no gradient."""
    with created():
        out = bind(op_type, {}, {**attrs, "dtype": dtype}, dtype=dtype, name=name)
    out.stop_gradient = True
    return out


def _gaussian(where: str, shape, mean, std, dtype, name):
    attrs = {"shape": _shape(where, shape), "mean": float(mean), "std": float(std), "seed": 0}
    return _draw("gaussian_random", attrs, _float_dtype(where, dtype), name)


def standard_normal(shape, dtype=None, name=None):
    """Draws from N(0, 1) of shape (of the default dtype unless dtype says)."""
    return _gaussian("standard_normal", shape, 0.0, 1.0, dtype, name)


def randn(shape, dtype=None, name=None):
    """Draws from N(0, 1) of shape (standard_normal)."""
    return _gaussian("randn", shape, 0.0, 1.0, dtype, name)


def normal(mean=0.0, std=1.0, shape=None, name=None):
    """Draws from N(mean, std**2): of shape for number mean and std, else of the tensor's shape
    (mean and std broadcast elementwise)."""
    like = mean if isinstance(mean, Variable) else std if isinstance(std, Variable) else None
    if like is None:
        return _gaussian("normal", shape, mean, std, None, name)
    draw = _gaussian("normal", like.shape, 0.0, 1.0, like.dtype, name)
    if isinstance(draw, Tensor) != isinstance(like, Tensor):
        raise TypeError("normal: an eager mean or std in static mode (or a static one in dynamic mode)")
    std = fluid_tensor.cast(std, like.dtype) if isinstance(std, Variable) else std
    scaled = draw * std if isinstance(std, Variable) else bind("scale", {"X": [draw]}, {"scale": float(std)})
    return scaled + mean


def uniform(shape, dtype=None, min=-1.0, max=1.0, seed=0, name=None):
    """Draws uniform on [min, max) of shape; seed 0 draws from the global stream."""
    attrs = {"shape": _shape("uniform", shape), "min": float(min), "max": float(max), "seed": int(seed)}
    return _draw("uniform_random", attrs, _float_dtype("uniform", dtype), name)


def rand(shape, dtype=None, name=None):
    """Draws uniform on [0, 1) of shape."""
    return uniform(shape, dtype, 0.0, 1.0, name=name)


def randint(low=0, high=None, shape=(1,), dtype=None, name=None):
    """Integers uniform on [low, high) ([0, low) when high is None) of shape, int64 by default."""
    if high is None:
        if low <= 0:
            raise ValueError(f"randint: low {low} with no high; expected low > 0 (the draws are on [0, low))")
        low, high = 0, low
    if low >= high:
        raise ValueError(f"randint: low {low}, high {high}; expected low < high")
    dtype = "int64" if dtype is None else convert_dtype(dtype)
    if dtype not in ("int32", "int64"):
        raise TypeError(f"randint: dtype {dtype}; expected int32 or int64")
    attrs = {"shape": _shape("randint", shape), "low": int(low), "high": int(high), "seed": 0}
    return _draw("randint", attrs, dtype, name)


def randperm(n, dtype="int64", name=None):
    """A random permutation of 0 .. n-1."""
    if n < 1:
        raise ValueError(f"randperm: n {n}; expected n > 0")
    dtype = convert_dtype(dtype)
    if dtype not in ("int32", "int64", "float32", "float64"):
        raise TypeError(f"randperm: dtype {dtype}; expected int32, int64, float32 or float64")
    return _draw("randperm", {"n": int(n), "seed": 0}, dtype, name)


def _uniform_like(where: str, like, shape):
    """Draws on [0, 1) of shape, of like's dtype and kind (eager beside an eager tensor)."""
    with eager_guard() if isinstance(like, Tensor) else contextlib.nullcontext():
        attrs = {"shape": _shape(where, shape), "min": 0.0, "max": 1.0, "seed": 0, "dtype": like.dtype}
        return bind("uniform_random", {}, attrs, dtype=convert_dtype(like.dtype))


def _static_dims(where: str, x) -> list[int]:
    if any(d < 0 for d in x.shape):
        raise NotImplementedError(f"{where}: x of shape {list(x.shape)} with unknown dims; expected static dims")
    return list(x.shape)


def bernoulli(x, name=None):
    """1 with probability x[i] else 0, per entry, of x's dtype: a uniform draw below x."""
    if convert_dtype(x.dtype) not in _FLOATS:
        raise TypeError(f"bernoulli: x of dtype {convert_dtype(x.dtype)}; expected float32 or float64")
    draw = _uniform_like("bernoulli", x, _static_dims("bernoulli", x))
    out = fluid_tensor.cast(bind("less_than", {"X": [draw], "Y": [x]}, dtype="bool"), x.dtype)
    out.stop_gradient = True
    return out


def multinomial(x, num_samples=1, replacement=False, name=None):
    """num_samples int64 category ids per row of x (1-D, or 2-D rows) drawn with probability
    proportional to the row's (non-negative) weights. With replacement: each draw is where a
    uniform number falls in the row's cumulative distribution; without: the num_samples largest
    of weight / Exp(1) noise, which rank as log(weight) plus Gumbel noise (the same law as drawing
    one by one, never twice)."""
    if convert_dtype(x.dtype) not in _FLOATS:
        raise TypeError(f"multinomial: x of dtype {convert_dtype(x.dtype)}; expected float32 or float64")
    if len(x.shape) not in (1, 2):
        raise ValueError(f"multinomial: x of rank {len(x.shape)}; expected 1 or 2")
    rows = x if len(x.shape) == 2 else tensor_shape.unsqueeze(x, [0])
    batch, categories = _static_dims("multinomial", rows)
    if not replacement and num_samples > categories:
        raise ValueError(f"multinomial: num_samples {num_samples} > {categories} categories without replacement")
    if replacement:
        total = bind("reduce_sum", {"X": [rows]}, {"dim": [-1], "keep_dim": True, "reduce_all": False})
        cdf = bind("cumsum", {"X": [rows / total]}, {"axis": -1})
        draws = _uniform_like("multinomial", rows, [batch, num_samples, 1])
        below = bind("less_equal", {"X": [tensor_shape.unsqueeze(cdf, [1])], "Y": [draws]}, dtype="bool")
        counts = bind("reduce_sum", {"X": [fluid_tensor.cast(below, "int64")]}, {"dim": [-1], "reduce_all": False})
        ids = bind("clip", {"X": [counts]}, {"min": 0.0, "max": float(categories - 1)})
    else:
        noise = _uniform_like("multinomial", rows, [batch, categories])
        keys = rows / -bind("log", {"X": [noise]})  # weight / Exp(1): ranks as log(weight) + Gumbel
        ids = topk_v2(keys, num_samples)[1]
    ids = ids if len(x.shape) == 2 else tensor_shape.squeeze(ids, [0])
    ids.stop_gradient = True
    return ids


TENSOR_METHODS: dict = {}  # Paddle 2.0's Tensor has no random methods
