"""Layer functions over the ops of ops/pointwise.py and ops/pointwise_tensor.py in Paddle 1.8's
fluid.layers spelling: the activations with and without parameters, prelu with its slope parameter,
pow, maxout, cumsum, clip, clamp and clip_by_norm, logsumexp, sum, and the checks isfinite, has_inf,
has_nan, allclose, elementwise_equal, size, rank and is_empty.

Where Paddle 1.8's layer function leaves an attr unset when its argument is None (softshrink,
hard_shrink, thresholded_relu, cumsum, selu), the op's default applies here too."""

from __future__ import annotations

import math

import numpy as np

from ..dygraph.dispatch import bind, bind_function
from ..initializer import Constant
from ..ir.program import Variable
from .helper import LayerHelper
from .math import (  # noqa: F401  (abs ... tanh: fluid.layers.ops, which is this module, names them too)
    abs,  # noqa: A004
    ceil,
    cos,
    exp,
    floor,
    log,
    reduce_sum,
    sigmoid,
    sqrt,
    square,
    tanh,
)
from .tensor import assign

_FLOATS = ("float16", "bfloat16", "float32", "float64")  # bfloat16: later Paddle's "uint16"


def _check(layer: str, what: str, var, dtypes: tuple[str, ...] = _FLOATS) -> None:
    """Paddle's check_variable_and_dtype: a TypeError for a value that is no variable or of another dtype."""
    if not isinstance(var, Variable):
        raise TypeError(f"{layer}: {what} expected a Variable, got {type(var).__name__}")
    if var.dtype not in dtypes:
        raise TypeError(f"{layer}: {what} '{var.name}' is {var.dtype}; expected {' or '.join(dtypes)}")


def _set(**attrs) -> dict:
    """The attrs given (not None): the rest keep the op's defaults, as Paddle's generated layers."""
    return {k: v for k, v in attrs.items() if v is not None}


def _unattributed(op_type: str):
    """`f(x, name=None)`: Paddle 1.8's generate_activation_fn layer (ops.py __activations_noattr__),
    which takes float variables only; on a Tensor the op's eager function runs straight away."""
    run = bind_function(op_type)

    def layer(x, name=None):
        _check(op_type, "x", x)
        return run(x, name)

    layer.__name__ = op_type
    layer.__doc__ = f"`{op_type}` of x, elementwise (Paddle 1.8's fluid.layers.{op_type})."
    return layer


acos, asin, atan, sin, round, reciprocal, rsqrt, logsigmoid, tanh_shrink, softplus, softsign = (  # noqa: A001
    _unattributed(t)
    for t in "acos asin atan sin round reciprocal rsqrt logsigmoid tanh_shrink softplus softsign".split()
)


def _activation(op_type: str, x, attrs: dict, name=None, dtypes=_FLOATS):
    _check(op_type, "x", x, dtypes)
    return bind(op_type, {"X": [x]}, attrs, name=name)


def _into(op_type: str, x, out, attrs=None):
    """Op `op_type` of x written into the existing variable `out` (Paddle's `out=` arguments)."""
    LayerHelper(op_type, inputs=x).append_op(op_type, {"X": [x]}, {"Out": [out]}, attrs)
    return out


def log1p(x, out=None, name=None):
    """ln(1 + x), exact for small x; written into `out` when given."""
    if out is None:
        return _activation("log1p", x, {}, name, ("float32", "float64"))
    _check("log1p", "x", x, ("float32", "float64"))
    return _into("log1p", x, out)


def erf(x):
    """The error function 2/sqrt(pi) * integral from 0 to x of e^(-t^2) dt."""
    return _activation("erf", x, {}, dtypes=("float32", "float64"))


def gelu(x, approximate=False):
    """0.5 x (1 + erf(x / sqrt 2)), or with `approximate` the tanh form of the GELU paper."""
    return _activation("gelu", x, {"approximate": bool(approximate)}, dtypes=("float32", "float64"))


def softshrink(x, alpha=None):
    """x - alpha above alpha, x + alpha below -alpha, else 0 (op attr `lambda`, 0.5 unset)."""
    return _activation("softshrink", x, _set(**{"lambda": alpha}))


def hard_shrink(x, threshold=None):
    """x where |x| > threshold (0.5 unset), else 0."""
    return _activation("hard_shrink", x, _set(threshold=threshold))


def thresholded_relu(x, threshold=None):
    """x where x > threshold (1.0 unset), else 0."""
    return _activation("thresholded_relu", x, _set(threshold=threshold))


def elu(x, alpha=1.0, name=None):
    """max(0, x) + min(0, alpha (e^x - 1))."""
    return _activation("elu", x, {"alpha": float(alpha)}, name)


def relu6(x, threshold=6.0, name=None):
    """min(max(0, x), threshold)."""
    return _activation("relu6", x, {"threshold": float(threshold)}, name)


def leaky_relu(x, alpha=0.02, name=None):
    """max(x, alpha x)."""
    return _activation("leaky_relu", x, {"alpha": float(alpha)}, name)


def brelu(x, t_min=0.0, t_max=24.0, name=None):
    """x clipped to [t_min, t_max]."""
    return _activation("brelu", x, {"t_min": float(t_min), "t_max": float(t_max)}, name)


def soft_relu(x, threshold=40.0, name=None):
    """ln(1 + e^clip(x, -threshold, threshold))."""
    return _activation("soft_relu", x, {"threshold": float(threshold)}, name)


def stanh(x, scale_a=0.67, scale_b=1.7159, name=None):
    """scale_b tanh(scale_a x)."""
    return _activation("stanh", x, {"scale_a": float(scale_a), "scale_b": float(scale_b)}, name)


def hard_sigmoid(x, slope=0.2, offset=0.5, name=None):
    """clip(slope x + offset, 0, 1)."""
    return _activation("hard_sigmoid", x, {"slope": float(slope), "offset": float(offset)}, name)


def swish(x, beta=1.0, name=None):
    """x sigmoid(beta x). Paddle 1.8's layer hands beta to an attr the op does not have (`slope`),
    so there beta is always 1; here it is the op's `beta`, as documented."""
    return _activation("swish", x, {"beta": float(beta)}, name)


def hard_swish(x, threshold=6.0, scale=6.0, offset=3.0, name=None):
    """x clip(x + offset, 0, threshold) / scale (MobileNetV3)."""
    attrs = {"threshold": float(threshold), "scale": float(scale), "offset": float(offset)}
    return _activation("hard_swish", x, attrs, name)


def selu(x, scale=None, alpha=None, name=None):
    """scale x above 0, scale alpha (e^x - 1) below (the self-normalizing constants unset)."""
    return _activation("selu", x, _set(scale=scale, alpha=alpha), name, ("float32", "float64"))


def mish(x, threshold=20, name=None):
    """x tanh(softplus(x)), softplus taken as x above threshold and e^x below -threshold."""
    _check("mish", "x", x, ("float32", "float64"))
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
        raise TypeError(f"mish: threshold expected an int or a float, got {type(threshold).__name__}")
    if threshold <= 0:
        raise ValueError(f"mish: threshold expected > 0, got {threshold}")
    return bind("mish", {"X": [x]}, {"threshold": float(threshold)}, name=name)


def pow(x, factor=1.0, name=None):  # noqa: A001
    """x ** factor; `factor` a number or a float32 Variable of one element (not differentiated)."""
    _check("pow", "x", x, ("int32", "int64", "float32", "float64"))
    if isinstance(factor, Variable):
        _check("pow", "factor", factor, ("float32",))
        factor.stop_gradient = True
        return bind("pow", {"X": [x], "FactorTensor": [factor]}, name=name)
    return bind("pow", {"X": [x]}, {"factor": float(factor)}, name=name)


def prelu(x, mode, param_attr=None, name=None):
    """max(0, x) + alpha min(0, x) with a learned alpha (initially 0.25): one for all ('all'), one per
    channel of an NC... input ('channel', shape [1, C, 1, 1]) or one per element of a sample
    ('element', shape [1] + x.shape[1:]). Alpha takes x's dtype (Paddle's is always float32)."""
    _check("prelu", "x", x, ("float32", "float64"))
    if mode not in ("all", "channel", "element"):
        raise ValueError(f"prelu: mode expected 'all', 'channel' or 'element', got {mode!r}")
    shape = [1]
    if mode == "channel":
        if len(x.shape) < 2:
            raise ValueError(f"prelu: mode 'channel' expected x of rank 2 or more, got shape {list(x.shape)}")
        shape = [1, x.shape[1], 1, 1]
    elif mode == "element":
        shape = [1, *x.shape[1:]]
    helper = LayerHelper("prelu", name, inputs=x)
    alpha = helper.create_parameter(param_attr, shape, x.dtype, default_initializer=Constant(0.25))
    return bind("prelu", {"X": [x], "Alpha": [alpha]}, {"mode": mode}, name=name)


def maxout(x, groups, name=None, axis=1):
    """The largest of each `groups` neighbouring channels of an NCHW (axis 1) or NHWC (axis 3 or -1)
    input: C / groups channels out."""
    _check("maxout", "x", x, ("float32", "float64"))
    if axis not in (1, -1, 3):
        raise ValueError(f"maxout: axis expected 1 (NCHW), -1 or 3 (NHWC), got {axis}")
    return bind("maxout", {"X": [x]}, {"groups": int(groups), "axis": 3 if axis == -1 else axis}, name=name)


def cumsum(x, axis=None, exclusive=None, reverse=None):
    """The running sum along axis (-1 unset); `exclusive` starts it at 0, `reverse` runs it backwards."""
    if not isinstance(x, Variable):
        raise TypeError(f"cumsum: x expected a Variable, got {type(x).__name__}")
    return bind("cumsum", {"X": [x]}, _set(axis=axis, exclusive=exclusive, reverse=reverse))


def clip(x, min, max, name=None):  # noqa: A002
    """x clipped to [min, max] (a SelectedRows x's rows merged first)."""
    _check("clip", "x", x)
    return bind("clip", {"X": [x]}, {"min": float(min), "max": float(max)}, name=name)


def clip_by_norm(x, max_norm, name=None):
    """x scaled to L2 norm max_norm where its norm is larger."""
    _check("clip_by_norm", "x", x, ("float32",))
    if not isinstance(max_norm, float):
        raise TypeError(f"clip_by_norm: max_norm expected a float, got {type(max_norm).__name__}")
    return bind("clip_by_norm", {"X": [x]}, {"max_norm": max_norm}, name=name)


# sys.float_info.min and .max, which Paddle 1.8's clamp sets, as a float32 attr: 0.0 and inf
_UNSET_MIN, _UNSET_MAX = 0.0, math.inf


def clamp(input, min=None, max=None, output=None, name=None):  # noqa: A002
    """input clipped to [min, max] with the clip op (written into `output` when given). An unset bound is Paddle 1.8's
    sys.float_info.min / max as its float attr holds them, 0.0 and inf: clamp(x, max=m) of a
    negative x gives 0, as Paddle 1.8's does."""
    _check("clamp", "input", input, ("float32", "float64"))
    if min is None and max is None:
        raise ValueError("clamp: expected min or max, got neither")
    for what, bound in (("min", min), ("max", max)):
        if isinstance(bound, Variable):
            raise NotImplementedError(f"clamp: {what} as a Variable is not supported (the clip op here takes numbers)")
        if bound is not None and not isinstance(bound, float):
            raise TypeError(f"clamp: {what} expected a float or a Variable, got {type(bound).__name__}")
    attrs = {"min": _UNSET_MIN if min is None else min, "max": _UNSET_MAX if max is None else max}
    if output is not None:
        return _into("clip", input, output, attrs)
    return bind("clip", {"X": [input]}, attrs, name=name)


def logsumexp(x, dim=None, keepdim=False, out=None, name=None):
    """log(sum(exp(x))) over dim (all when None), as Paddle 1.8 builds it: exp, reduce_sum, log."""
    _check("logsumexp", "x", x, ("float32", "float64"))
    total = reduce_sum(exp(x), dim, keepdim)
    if out is None:
        return log(total, name)
    _check("logsumexp", "out", out, (x.dtype,))
    return _into("log", total, out)


def sum(x):  # noqa: A001
    """The elementwise sum of a list of variables (or one variable), the sum op (layers.sums without out)."""
    xs = list(x) if isinstance(x, (list, tuple)) else [x]
    for v in xs:
        _check("sum", "x", v, ("float32", "float64", "int32", "int64"))
    return bind("sum", {"X": xs})


def isfinite(x):
    """A bool [1]: whether every element of x is finite."""
    _check("isfinite", "x", x, ("float32", "float64", "int32", "int64"))
    return bind("isfinite", {"X": [x]}, dtype="bool")


def has_inf(x):
    """A bool [1]: whether x holds an infinity."""
    if not isinstance(x, Variable):
        raise TypeError(f"has_inf: x expected a Variable, got {type(x).__name__}")
    return bind("isinf", {"X": [x]}, dtype="bool")


def has_nan(x):
    """A bool [1]: whether x holds a NaN."""
    if not isinstance(x, Variable):
        raise TypeError(f"has_nan: x expected a Variable, got {type(x).__name__}")
    return bind("isnan", {"X": [x]}, dtype="bool")


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False, name=None):  # noqa: A002
    """A bool [1]: |input - other| <= atol + rtol |other| everywhere (NaNs at the same places count
    as equal with equal_nan)."""
    for what, value, kind in (("rtol", rtol, float), ("atol", atol, float), ("equal_nan", equal_nan, bool)):
        if not isinstance(value, kind):
            raise TypeError(f"allclose: {what} expected a {kind.__name__}, got {type(value).__name__}")
    attrs = {"rtol": rtol, "atol": atol, "equal_nan": equal_nan}
    return bind("allclose", {"Input": [input], "Other": [other]}, attrs, dtype="bool", name=name)


def elementwise_equal(x, y, name=None):
    """A bool variable: x == y elementwise (the equal op), never differentiated."""
    out = bind("equal", {"X": [x], "Y": [y]}, dtype="bool", name=name)
    out.stop_gradient = True
    return out


def size(input):  # noqa: A002
    """An int64 [1]: the number of elements of input."""
    return bind("size", {"Input": [input]}, dtype="int64")


def rank(input):  # noqa: A002
    """An int32 constant: the number of dims of input, as Paddle 1.8 builds it (assign of a value)."""
    return assign(np.array(len(input.shape), "int32"))


def is_empty(x, cond=None):
    """A bool [1]: whether x has no elements; written into `cond` when given."""
    _check("is_empty", "x", x, ("float32", "float64", "int32", "int64"))
    if cond is None:
        return bind("is_empty", {"X": [x]}, dtype="bool")
    _check("is_empty", "cond", cond, ("bool",))
    return _into("is_empty", x, cond)


__all__ = [
    "acos", "allclose", "asin", "atan", "brelu", "clamp", "clip", "clip_by_norm", "cumsum", "elementwise_equal",
    "elu", "erf", "gelu", "hard_shrink", "hard_sigmoid", "hard_swish", "has_inf", "has_nan", "is_empty",
    "isfinite", "leaky_relu", "log1p", "logsigmoid", "logsumexp", "maxout", "mish", "pow", "prelu", "rank",
    "reciprocal", "relu6", "round", "rsqrt", "selu", "sin", "size", "soft_relu", "softplus", "softshrink",
    "softsign", "stanh", "sum", "swish", "tanh_shrink", "thresholded_relu",
]  # fmt: skip
