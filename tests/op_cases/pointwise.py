"""Registry cases for the ops of ops/pointwise.py and ops/pointwise_tensor.py, with the NumPy
references of Paddle 1.8's test_activation_op.py, test_gelu_op.py, test_selu_op.py, test_mish_op.py,
test_prelu_op.py, test_maxout_op.py, test_cumsum_op.py, test_isfinite_op.py and test_allclose_op.py.
Inputs keep clear of each activation's kinks, where a finite difference straddles two slopes."""

import math

import numpy as np

from . import NOT_DIFFERENTIABLE, case, positive, rand


def _away_from(x, *points, gap=0.02):
    """x with entries within `gap` of a kink moved past it, as Paddle's tests do."""
    x = x.copy()
    for p in points:
        x[np.abs(x - p) < gap] = p + 2 * gap
    return x


def _erf(x):
    return np.vectorize(math.erf)(x)


def _gelu(x, approximate):
    if approximate:
        return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))
    return 0.5 * x * (1 + _erf(x / np.sqrt(2)))


def _softplus_mish(x, threshold):
    return np.where(x > threshold, x, np.where(x < -threshold, np.exp(x), np.log1p(np.exp(x))))


_SELU_SCALE, _SELU_ALPHA = 1.0507009873554804934193349852946, 1.6732632423543772848170429916717

# (op, input, attrs, reference of X and the attrs)
_UNARY = (
    ("acos", rand(3, 4) * 0.95, {}, lambda x: np.arccos(x)),
    ("asin", rand(3, 4) * 0.95, {}, lambda x: np.arcsin(x)),
    ("atan", rand(3, 4) * 3, {}, lambda x: np.arctan(x)),
    ("sin", rand(3, 4) * 3, {}, lambda x: np.sin(x)),
    ("reciprocal", positive(3, 4), {}, lambda x: 1 / x),
    ("rsqrt", positive(3, 4), {}, lambda x: 1 / np.sqrt(x)),
    ("log1p", positive(3, 4), {}, lambda x: np.log1p(x)),
    ("logsigmoid", rand(3, 4) * 5, {}, lambda x: np.log(1 / (1 + np.exp(-x)))),
    ("tanh_shrink", rand(3, 4) * 2, {}, lambda x: x - np.tanh(x)),
    ("softplus", rand(3, 4) * 5, {}, lambda x: np.log(1 + np.exp(x))),
    ("softsign", rand(3, 4) * 5, {}, lambda x: x / (1 + np.abs(x))),
    ("erf", rand(3, 4) * 4, {}, _erf),
    (
        "softshrink",
        _away_from(rand(3, 4) * 2, -0.8, 0.8),
        {"lambda": 0.8},
        lambda x, **a: np.where(x > 0.8, x - 0.8, np.where(x < -0.8, x + 0.8, 0.0)),
    ),
    ("hard_shrink", _away_from(rand(3, 4) * 2, -0.5, 0.5), {}, lambda x, threshold: x * (np.abs(x) > threshold)),
    (
        "brelu",
        _away_from(rand(3, 4) * 5, 1.0, 4.0),
        {"t_min": 1.0, "t_max": 4.0},
        lambda x, t_min, t_max: np.clip(x, t_min, t_max),
    ),
    ("relu6", _away_from(rand(3, 4) * 8, 0.0, 6.0), {}, lambda x, threshold: np.minimum(np.maximum(x, 0), threshold)),
    (
        "soft_relu",
        rand(3, 4) * 1.5,  # inside the threshold: Paddle's grad tests out, not x, against it (test_pointwise)
        {"threshold": 2.0},
        lambda x, threshold: np.log(np.exp(np.clip(x, -threshold, threshold)) + 1),
    ),
    ("thresholded_relu", _away_from(rand(3, 4), 0.25), {"threshold": 0.25}, lambda x, threshold: (x > threshold) * x),
    ("elu", rand(3, 4) * 3, {"alpha": 1.0}, lambda x, alpha: np.maximum(0, x) + np.minimum(0, alpha * (np.exp(x) - 1))),
    ("leaky_relu", _away_from(rand(3, 4), 0.0), {}, lambda x, alpha: np.maximum(x, alpha * x)),
    ("stanh", rand(3, 4), {}, lambda x, scale_a, scale_b: scale_b * np.tanh(x * scale_a)),
    (
        "hard_sigmoid",
        _away_from(rand(3, 4) * 5, -2.5, 2.5),
        {},
        lambda x, slope, offset: np.maximum(0.0, np.minimum(1.0, x * slope + offset)),
    ),
    ("swish", rand(3, 4) * 3, {"beta": 2.3}, lambda x, beta: x / (1 + np.exp(-beta * x))),
    (
        "hard_swish",
        _away_from(rand(3, 4) * 6, -3.0, 3.0),
        {},
        lambda x, threshold, scale, offset: x * np.minimum(np.maximum(x + offset, 0), threshold) / scale,
    ),
    (
        "selu",
        _away_from(rand(3, 4) * 3, 0.0),
        {},
        lambda x, scale, alpha: scale * np.where(x > 0, x, alpha * (np.exp(x) - 1)),
    ),
    ("gelu", rand(3, 4) * 3, {}, lambda x, approximate: _gelu(x, approximate)),
    ("mish", rand(3, 4) * 5, {}, lambda x, threshold: x * np.tanh(_softplus_mish(x, threshold))),
)
for _op, _x, _attrs, _ref in _UNARY:
    case(_op, {"X": _x}, attrs=_attrs, reference=lambda X, _ref=_ref, **a: {"Out": _ref(X, **a)})

case(
    "gelu",
    {"X": rand(3, 4) * 3},
    attrs={"approximate": True},
    name="approximate",
    reference=lambda X, approximate: {"Out": _gelu(X, True)},
)
case("round", {"X": rand(3, 4) * 5}, reference=lambda X: {"Out": np.round(X)})

# -- prelu, pow, maxout, cumsum -----------------------------------------------------------------------


def _prelu_ref(X, Alpha, mode):
    """Paddle's prelu kernel: the slope of an element is alpha[0], alpha[its channel] or alpha[its
    index within the sample]."""
    if mode == "channel":
        Alpha = Alpha.reshape(1, -1, *[1] * (X.ndim - 2))
    elif mode == "element":
        Alpha = Alpha.reshape(1, *X.shape[1:])
    return {"Out": np.where(X > 0, X, Alpha * X)}


_X4 = _away_from(rand(2, 3, 2, 2, seed=5), 0.0)
for _mode, _alpha in (
    ("all", np.array([0.25])),
    ("channel", rand(1, 3, 1, 1, seed=6)),
    ("element", rand(1, 3, 2, 2, seed=7)),
):
    case("prelu", {"X": _X4, "Alpha": _alpha}, attrs={"mode": _mode}, name=_mode, reference=_prelu_ref)
case("pow", {"X": positive(3, 4)}, attrs={"factor": 3.0}, reference=lambda X, factor: {"Out": X**3})
case(
    "pow",
    {"X": positive(3, 4), "FactorTensor": np.array([2.5], "float32")},
    no_grad=("FactorTensor",),
    name="factor_tensor",
    reference=lambda X, FactorTensor, factor: {"Out": X**2.5},
)


def _maxout_ref(X, groups, axis):
    """Paddle's test_maxout_op.maxout_forward_naive, channels last moved first for axis 3."""
    x = np.moveaxis(X, 3, 1) if axis == 3 else X
    n, c, h, w = x.shape
    out = x.reshape(n, c // groups, groups, h, w).max(axis=2)
    return {"Out": np.moveaxis(out, 1, 3) if axis == 3 else out}


case("maxout", {"X": rand(2, 6, 3, 2, seed=8)}, attrs={"groups": 2, "axis": 1}, reference=_maxout_ref)
case("maxout", {"X": rand(2, 3, 2, 6, seed=9)}, attrs={"groups": 3, "axis": 3}, name="nhwc", reference=_maxout_ref)


def _cumsum_ref(X, axis, exclusive, reverse):
    x = np.flip(X, axis) if reverse else X
    out = np.cumsum(x, axis=axis)
    if exclusive:
        out = np.concatenate([np.zeros_like(np.take(out, [0], axis)), np.delete(out, -1, axis)], axis)
    return {"Out": np.flip(out, axis) if reverse else out}


for _exclusive in (False, True):
    for _reverse in (False, True):
        case(
            "cumsum",
            {"X": rand(5, 6, 4, seed=10)},
            attrs={"axis": 1, "exclusive": _exclusive, "reverse": _reverse},
            name=f"exclusive_{_exclusive}_reverse_{_reverse}",
            reference=_cumsum_ref,
        )
case(
    "cumsum",
    {"X": rand(5, 6, seed=11)},
    attrs={"axis": -1, "exclusive": False, "reverse": False},
    name="last_axis",
    reference=_cumsum_ref,
)

# -- whole-tensor checks -------------------------------------------------------------------------------

_WITH_INF = rand(11, 17, low=0.1, high=1)
_WITH_INF[0] = np.inf
_WITH_NAN = rand(11, 17, low=0.1, high=1)
_WITH_NAN[-1] = np.nan
for _op, _fn in (("isinf", np.isinf), ("isnan", np.isnan)):
    for _name, _x in (("with_inf", _WITH_INF), ("with_nan", _WITH_NAN), ("finite", rand(3, 4))):
        case(_op, {"X": _x}, name=_name, reference=lambda X, _fn=_fn: {"Out": np.array([_fn(X).any()])})
for _name, _x in (("with_inf", _WITH_INF), ("finite", rand(3, 4)), ("int", np.arange(6, dtype="int32"))):
    case("isfinite", {"X": _x}, name=_name, reference=lambda X: {"Out": np.array([np.isfinite(X).all()])})
case("size", {"Input": rand(6, 56, 8, 55)}, reference=lambda Input: {"Out": np.array([Input.size], "int64")})
case("is_empty", {"X": rand(2, 3)}, reference=lambda X: {"Out": np.array([False])})
case("is_empty", {"X": np.zeros((0, 3))}, name="empty", reference=lambda X: {"Out": np.array([True])})


def _allclose_ref(Input, Other, rtol, atol, equal_nan):
    """Paddle's allclose_op.h: |a - b| <= atol + rtol |b| all over; NaNs at the same places match
    with equal_nan."""
    with np.errstate(invalid="ignore"):
        close = np.abs(Input - Other) <= atol + rtol * np.abs(Other)
    if equal_nan:
        close |= np.isnan(Input) & np.isnan(Other)
    return {"Out": np.array([close.all()])}


_A = np.array([10000.0, 1e-07])
for _name, _other, _equal_nan in (
    ("not_close", np.array([10000.1, 1e-08]), False),
    ("close", np.array([10000.0, 1e-08]), False),
):
    case(
        "allclose",
        {"Input": _A, "Other": _other},
        attrs={"rtol": 1e-5, "atol": 1e-8, "equal_nan": _equal_nan},
        name=_name,
        reference=_allclose_ref,
    )
for _equal_nan in (False, True):
    case(
        "allclose",
        {"Input": np.array([1.0, np.nan]), "Other": np.array([1.0, np.nan])},
        attrs={"rtol": 1e-5, "atol": 1e-8, "equal_nan": _equal_nan},
        name=f"nan_equal_nan_{_equal_nan}",
        reference=_allclose_ref,
    )

NOT_DIFFERENTIABLE.update(
    {
        **dict.fromkeys(
            ("isinf", "isnan", "isfinite", "allclose"),
            "a whole-tensor bool check: piecewise constant, and Paddle registers no grad for it",
        ),
        "size": "reads only its input's shape (an int64 count)",
        "is_empty": "reads only its input's shape (a bool)",
    }
)
