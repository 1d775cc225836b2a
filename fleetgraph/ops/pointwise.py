"""Pointwise activations with parameters and unary math beyond the basic ones (Paddle 1.8's
activation_op.cc family, with gelu, erf, selu and mish): each forward and its `_grad` op, whose
gradient reads X or Out as Paddle's functor does (its FwdDeps)."""

from __future__ import annotations

import math

from . import pointwise_tensor  # noqa: F401  (registers prelu, maxout, pow, cumsum and the checks)
from ._xp import mask
from .activation import _unary


def _cos_of_asin(xp, x):
    """sqrt(1 - x^2), whose reciprocal is asin's derivative (and minus it acos')."""
    return xp.sqrt(1 - x * x)


def _round(xp, x):
    """Half away from zero, as Eigen's round (std::round); the array API's rounds half to even."""
    t = xp.trunc(x)
    return xp.where(xp.abs(x - t) >= 0.5, t + xp.sign(x), t)


def _zero_grad(xp, x, dout):
    return xp.zeros_like(dout)


_unary("acos", lambda xp, x: xp.acos(x), lambda xp, x, dout: -dout / _cos_of_asin(xp, x), grad_uses="X")
_unary("asin", lambda xp, x: xp.asin(x), lambda xp, x, dout: dout / _cos_of_asin(xp, x), grad_uses="X")
_unary("atan", lambda xp, x: xp.atan(x), lambda xp, x, dout: dout / (1 + x * x), grad_uses="X")
_unary("sin", lambda xp, x: xp.sin(x), lambda xp, x, dout: dout * xp.cos(x), grad_uses="X")
_unary("round", _round, _zero_grad, grad_uses="X")
_unary("reciprocal", lambda xp, x: 1 / x, lambda xp, out, dout: -dout * out * out)
_unary("rsqrt", lambda xp, x: 1 / xp.sqrt(x), lambda xp, out, dout: -0.5 * dout * out * out * out)
_unary("log1p", lambda xp, x: xp.log1p(x), lambda xp, x, dout: dout / (1 + x), grad_uses="X")
_unary("tanh_shrink", lambda xp, x: x - xp.tanh(x), lambda xp, x, dout: dout * xp.tanh(x) ** 2, grad_uses="X")
_unary("softsign", lambda xp, x: x / (1 + xp.abs(x)), lambda xp, x, dout: dout / (1 + xp.abs(x)) ** 2, grad_uses="X")


def _softplus(xp, x):
    """log(1 + e^x) as Paddle computes it: max(x, 0) + log(e^-m + e^(x - m)), finite for any x."""
    m = xp.maximum(x, 0)
    return m + xp.log(xp.exp(-m) + xp.exp(x - m))


def _softplus_grad(xp, x, dout):
    m = xp.maximum(x, 0)
    e = xp.exp(x - m)
    return dout * e / (xp.exp(-m) + e)


_unary("softplus", _softplus, _softplus_grad, grad_uses="X")
_unary("logsigmoid", lambda xp, x: -_softplus(xp, -x), lambda xp, x, dout: _softplus_grad(xp, -x, dout), grad_uses="X")


def _outside(xp, x, low, high, like):
    """1 where x < low or x > high, else 0, of like's dtype."""
    return mask(xp, (x < low) | (x > high), like)


def _inside(xp, v, low, high, like):
    """1 where low < v < high (open), else 0: the pass-through region of a clipped activation."""
    return mask(xp, (v > low) & (v < high), like)


def _softshrink(xp, x, *, lambda_):
    return mask(xp, x > lambda_, x) * (x - lambda_) + mask(xp, x < -lambda_, x) * (x + lambda_)


# `lambda` is Paddle's attr name and a Python keyword: the kernels take it from **attrs
_unary(
    "softshrink",
    lambda xp, x, **a: _softshrink(xp, x, lambda_=a["lambda"]),
    lambda xp, x, dout, **a: dout * _outside(xp, x, -a["lambda"], a["lambda"], dout),
    grad_uses="X",
    attrs={"lambda": 0.5},
)
_unary(
    "hard_shrink",
    lambda xp, x, *, threshold: x * _outside(xp, x, -threshold, threshold, x),
    lambda xp, x, dout, *, threshold: dout * _outside(xp, x, -threshold, threshold, dout),
    grad_uses="X",
    attrs={"threshold": 0.5},
)
_unary(
    "brelu",
    lambda xp, x, *, t_min, t_max: xp.clip(x, t_min, t_max),
    lambda xp, x, dout, *, t_min, t_max: dout * _inside(xp, x, t_min, t_max, dout),
    grad_uses="X",
    attrs={"t_min": 0.0, "t_max": 24.0},
)
_unary(
    "relu6",
    lambda xp, x, *, threshold: xp.clip(x, 0.0, threshold),
    lambda xp, out, dout, *, threshold: dout * _inside(xp, out, 0.0, threshold, dout),
    attrs={"threshold": 6.0},
)
# soft_relu_grad tests Out, not X, against the threshold and leaky_relu_grad takes slope 1 where
# Out > 0: Paddle's functors, the derivative only inside the threshold and for alpha <= 1
_unary(
    "soft_relu",
    lambda xp, x, *, threshold: xp.log(1 + xp.exp(xp.clip(x, -threshold, threshold))),
    lambda xp, out, dout, *, threshold: dout * (1 - xp.exp(-out)) * _inside(xp, out, -threshold, threshold, dout),
    attrs={"threshold": 40.0},
)
_unary(
    "thresholded_relu",
    lambda xp, x, *, threshold: x * mask(xp, x > threshold, x),
    lambda xp, x, dout, *, threshold: dout * mask(xp, x > threshold, dout),
    grad_uses="X",
    attrs={"threshold": 1.0},
)


def _elu(xp, x, *, alpha):
    return xp.maximum(x, 0) + xp.minimum(alpha * (xp.exp(x) - 1), 0)


def _elu_grad(xp, x, dout, *, alpha):
    return dout * mask(xp, x > 0, dout) + dout * alpha * xp.exp(x) * mask(xp, x <= 0, dout)


_unary("elu", _elu, _elu_grad, grad_uses="X", attrs={"alpha": 1.0})
_unary(
    "leaky_relu",
    lambda xp, x, *, alpha: xp.maximum(x, alpha * x),
    lambda xp, out, dout, *, alpha: dout * (alpha * mask(xp, out <= 0, dout) + mask(xp, out > 0, dout)),
    attrs={"alpha": 0.02},
)
_unary(
    "stanh",
    lambda xp, x, *, scale_a, scale_b: scale_b * xp.tanh(scale_a * x),
    lambda xp, x, dout, *, scale_a, scale_b: dout * scale_a * scale_b * (1 - xp.tanh(scale_a * x) ** 2),
    grad_uses="X",
    attrs={"scale_a": 0.67, "scale_b": 1.7159},
)
_unary(
    "hard_sigmoid",
    lambda xp, x, *, slope, offset: xp.clip(x * slope + offset, 0.0, 1.0),
    lambda xp, out, dout, *, slope, offset: dout * _inside(xp, out, 0.0, 1.0, dout) * slope,
    attrs={"slope": 0.2, "offset": 0.5},
)


def _swish(xp, x, *, beta):
    return x / (1 + xp.exp(-beta * x))


def _swish_grad(xp, x, dout, *, beta):
    s = 1 / (1 + xp.exp(-beta * x))
    out = x * s
    return dout * (beta * out + s * (1 - beta * out))


_unary("swish", _swish, _swish_grad, grad_uses="X", attrs={"beta": 1.0})


def _hard_swish(xp, x, *, threshold, scale, offset):
    return xp.clip(x + offset, 0.0, threshold) * x / scale


def _hard_swish_grad(xp, x, dout, *, threshold, scale, offset):
    below = mask(xp, x + offset < threshold, dout)
    return dout * (mask(xp, x + offset > 0, dout) * (2 * x + offset) / scale * below + (1 - below))


_unary(
    "hard_swish", _hard_swish, _hard_swish_grad, grad_uses="X", attrs={"threshold": 6.0, "scale": 6.0, "offset": 3.0}
)

_SELU = {"scale": 1.0507009873554804934193349852946, "alpha": 1.6732632423543772848170429916717}


def _selu(xp, x, *, scale, alpha):
    return scale * xp.where(x > 0, x, alpha * (xp.exp(x) - 1))


def _selu_grad(xp, out, dout, *, scale, alpha):
    """From Out, as Paddle's: scale where out > 0, else out + alpha * scale (= scale * alpha * e^x)."""
    return dout * (scale * mask(xp, out > 0, dout) + (out + alpha * scale) * mask(xp, out <= 0, dout))


_unary("selu", _selu, _selu_grad, attrs=_SELU)

# -- erf and what is built on it -------------------------------------------------------------------

_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


def erf(xp, x):
    """The error function from array-API operations alone (the standard has no erf): below |x| = 3
    the series 2/sqrt(pi) e^(-x^2) sum 2^n x^(2n+1) / (2n+1)!!, whose terms are all positive, above it
    1 - erfc(x) by erfc's continued fraction; both within 2e-15 of math.erf in float64."""
    a = xp.abs(x)
    s = xp.minimum(a, 3.0)
    term, total, s2 = s, s, 2 * s * s
    for n in range(1, 60):
        term = term * s2 / (2 * n + 1)
        total = total + term
    series = _TWO_OVER_SQRT_PI * xp.exp(-s * s) * total
    b = xp.maximum(a, 3.0)
    frac = b
    for k in range(60, 0, -1):
        frac = b + (k / 2) / frac
    tail = 1 - xp.exp(-b * b) / (math.sqrt(math.pi) * frac)
    return xp.sign(x) * xp.where(a < 3.0, series, tail)


_unary("erf", erf, lambda xp, x, dout: dout * _TWO_OVER_SQRT_PI * xp.exp(-x * x), grad_uses="X")

_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)


def _gelu(xp, x, *, approximate):
    if approximate:
        return 0.5 * x * (1 + xp.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x**3)))
    return 0.5 * x * (1 + erf(xp, x / math.sqrt(2)))


def _gelu_grad(xp, x, dout, *, approximate):
    if approximate:
        t = xp.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x**3))
        inner = _SQRT_2_OVER_PI * (1 + 3 * 0.044715 * x * x)
        return dout * 0.5 * (1 + t + x * (1 - t * t) * inner)
    pdf = xp.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
    return dout * (0.5 * (1 + erf(xp, x / math.sqrt(2))) + x * pdf)


_unary("gelu", _gelu, _gelu_grad, grad_uses="X", attrs={"approximate": False})


def _mish_softplus(xp, x, threshold):
    """Paddle's softplus inside mish: x above threshold, e^x below -threshold, log1p(e^x) between."""
    if threshold <= 0:
        return xp.log1p(xp.exp(x))
    middle = xp.log1p(xp.exp(xp.clip(x, -threshold, threshold)))
    return xp.where(x > threshold, x, xp.where(x < -threshold, xp.exp(x), middle))


def _mish(xp, x, *, threshold):
    return x * xp.tanh(_mish_softplus(xp, x, threshold))


def _mish_grad(xp, x, dout, *, threshold):
    sp = _mish_softplus(xp, x, threshold)
    tsp = xp.tanh(sp)
    return dout * (x * (1 - tsp * tsp) * -xp.expm1(-sp) + tsp)


_unary("mish", _mish, _mish_grad, grad_uses="X", attrs={"threshold": 20.0})
