"""`paddle.nn.functional.activation` (Paddle 2.0's python/paddle/nn/functional/activation.py): the
2.0 spellings of the activation ops of ops/pointwise.py, each one op (softplus with beta and threshold
is composed, as 2.0's op computes it), eager on Tensors and appended to the program on Variables.

The in-place `*_` forms write into x in dynamic mode; in static mode they return a new variable, as
Paddle 2.0's inplace_apis_in_dygraph_only does (with its warning)."""

from __future__ import annotations

import warnings

from ...dygraph.dispatch import bind
from ...dygraph.tensor import Tensor
from ...layers import math as _math
from ...layers import tensor as _tensor
from ...layers.pointwise import _check

_SELU_SCALE = 1.0507009873554804934193349852946
_SELU_ALPHA = 1.6732632423543772848170429916717


def _act(op_type: str, x, attrs: dict | None = None, name=None, where: str | None = None):
    _check(where or op_type, "x", x)
    return bind(op_type, {"X": [x]}, attrs, name=name)


def _in_place(function, op_type: str, x, attrs: dict | None = None):
    """op_type of x written back into the Tensor x (dynamic mode); `function(x)`, a new variable, in
    static mode."""
    if not isinstance(x, Tensor):
        name = function.__name__
        warnings.warn(f"In static mode, {name}_() is the same as {name}() and does not work in place.", stacklevel=3)
        return function(x)
    _check(f"{function.__name__}_", "x", x)
    bind(op_type, {"X": [x]}, attrs, outputs={"Out": [x]})
    return x


def brelu(x, t_min=0.0, t_max=24.0, name=None):
    """x clipped to [t_min, t_max]."""
    return _act("brelu", x, {"t_min": float(t_min), "t_max": float(t_max)}, name)


def elu(x, alpha=1.0, name=None):
    """x where x > 0, alpha (e^x - 1) elsewhere."""
    return _act("elu", x, {"alpha": float(alpha)}, name)


def elu_(x, alpha=1.0, name=None):
    return _in_place(elu, "elu", x, {"alpha": float(alpha)})


def gelu(x, approximate=False, name=None):
    """x Phi(x) (Phi the standard normal CDF), or its tanh approximation."""
    return _act("gelu", x, {"approximate": bool(approximate)}, name)


def hardshrink(x, threshold=0.5, name=None):
    """x where |x| > threshold, else 0."""
    return _act("hard_shrink", x, {"threshold": float(threshold)}, name, "hardshrink")


def hardtanh(x, min=-1.0, max=1.0, name=None):  # noqa: A002
    """x clipped to [min, max] (the brelu op, as Paddle 2.0's)."""
    return _act("brelu", x, {"t_min": float(min), "t_max": float(max)}, name, "hardtanh")


def hardsigmoid(x, slope=0.1666667, offset=0.5, name=None):
    """slope x + offset, clipped to [0, 1]."""
    return _act("hard_sigmoid", x, {"slope": float(slope), "offset": float(offset)}, name, "hardsigmoid")


def hardswish(x, name=None):
    """x min(max(x + 3, 0), 6) / 6."""
    return _act("hard_swish", x, None, name, "hardswish")


def leaky_relu(x, negative_slope=0.01, name=None):
    """x where x > 0, negative_slope x elsewhere."""
    return _act("leaky_relu", x, {"alpha": float(negative_slope)}, name)


def prelu(x, weight, name=None):
    """leaky_relu with a learned slope `weight` [1] (shared) or [C] (one per channel of NC... x)."""
    _check("prelu", "x", x, ("float32", "float64"))
    if len(weight.shape) != 1:
        raise ValueError(f"prelu: weight expected a 1-D Tensor, got shape {list(weight.shape)}")
    mode = "all"
    if weight.shape[0] > 1:
        if len(x.shape) < 2 or x.shape[1] != weight.shape[0]:
            raise ValueError(
                f"prelu: weight of {weight.shape[0]} slopes expected x of shape [N, {weight.shape[0]}, ...],"
                f" got {list(x.shape)}"
            )
        mode = "channel"
    return bind("prelu", {"X": [x], "Alpha": [weight]}, {"mode": mode}, name=name)


def relu(x, name=None):
    return _act("relu", x, None, name)


def relu_(x, name=None):
    return _in_place(relu, "relu", x)


def relu6(x, name=None):
    """x clipped to [0, 6]."""
    return _act("relu6", x, {"threshold": 6.0}, name)


def log_sigmoid(x, name=None):
    """log(1 / (1 + e^-x)), finite for any x."""
    return _act("logsigmoid", x, None, name, "log_sigmoid")


def maxout(x, groups, axis=1, name=None):
    """The largest of each `groups` neighbouring channels of NCHW (axis 1) or NHWC (axis 3 or -1) x."""
    _check("maxout", "x", x, ("float32", "float64"))
    if axis not in (1, -1, 3):
        raise ValueError(f"maxout: axis expected 1, -1 or 3, got {axis}")
    return bind("maxout", {"X": [x]}, {"groups": int(groups), "axis": 3 if axis == -1 else axis}, name=name)


def selu(x, scale=_SELU_SCALE, alpha=_SELU_ALPHA, name=None):
    """scale x where x > 0, scale alpha (e^x - 1) elsewhere."""
    if scale <= 1.0:
        raise ValueError(f"selu: scale expected greater than 1.0, got {scale}")
    if alpha < 0:
        raise ValueError(f"selu: alpha expected greater than or equal to 0, got {alpha}")
    return _act("selu", x, {"scale": float(scale), "alpha": float(alpha)}, name)


def sigmoid(x, name=None):
    return _act("sigmoid", x, None, name)


def tanh(x, name=None):
    return _act("tanh", x, None, name)


def tanh_(x, name=None):
    return _in_place(tanh, "tanh", x)


def softmax(x, axis=-1, dtype=None, name=None):
    """e^x / sum(e^x) along axis; with `dtype`, x is cast to it first, as Paddle's."""
    if dtype is not None:
        x = _tensor.cast(x, dtype)
    return _act("softmax", x, {"axis": int(axis)}, name)


def softmax_(x, axis=-1, dtype=None, name=None):
    if dtype is not None:
        raise NotImplementedError("softmax_: dtype changes x's dtype, which an in-place op cannot; expected None")
    return _in_place(softmax, "softmax", x, {"axis": int(axis)})


def log_softmax(x, axis=-1, dtype=None, name=None):
    """x - logsumexp(x) along axis (one op: stable for logits far apart)."""
    if dtype is not None:
        x = _tensor.cast(x, dtype)
    return _act("log_softmax", x, {"axis": int(axis)}, name)


def softplus(x, beta=1, threshold=20, name=None):
    """log(1 + e^(beta x)) / beta, and x itself where beta x > threshold (Paddle 2.0's softplus op),
    composed of scale, softplus, greater_than and a blend."""
    _check("softplus", "x", x)
    scaled = _math.scale(x, float(beta))
    soft = _math.scale(bind("softplus", {"X": [scaled]}), 1.0 / beta)
    limit = _math.scale(scaled, 0.0, float(threshold))
    linear = _tensor.cast(_math.greater_than(scaled, limit), x.dtype)
    blend = _math.elementwise_mul(_math.elementwise_sub(x, soft), linear)
    return _math.elementwise_add(soft, blend, name=name)


def softshrink(x, threshold=0.5, name=None):
    """x - threshold above it, x + threshold below -threshold, 0 between."""
    if threshold < 0:
        raise ValueError(f"softshrink: threshold expected >= 0, got {threshold}")
    return _act("softshrink", x, {"lambda": float(threshold)}, name)


def softsign(x, name=None):
    """x / (1 + |x|)."""
    return _act("softsign", x, None, name)


def swish(x, name=None):
    """x sigmoid(x)."""
    return _act("swish", x, {"beta": 1.0}, name)


def tanhshrink(x, name=None):
    """x - tanh(x)."""
    return _act("tanh_shrink", x, None, name, "tanhshrink")


def thresholded_relu(x, threshold=1.0, name=None):
    """x where x > threshold, else 0."""
    return _act("thresholded_relu", x, {"threshold": float(threshold)}, name)


__all__ = [
    "brelu",
    "elu",
    "elu_",
    "gelu",
    "hardshrink",
    "hardtanh",
    "hardsigmoid",
    "hardswish",
    "leaky_relu",
    "log_sigmoid",
    "maxout",
    "prelu",
    "relu",
    "relu_",
    "relu6",
    "selu",
    "softmax",
    "softmax_",
    "softplus",
    "softshrink",
    "softsign",
    "sigmoid",
    "swish",
    "tanh",
    "tanh_",
    "tanhshrink",
    "thresholded_relu",
    "log_softmax",
]
