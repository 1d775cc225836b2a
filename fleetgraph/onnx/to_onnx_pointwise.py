"""Export rules of the pointwise ops (ops/pointwise.py, ops/pointwise_tensor.py). Where ONNX's
operator differs from Paddle's kernel at some input (Round rounds half to even, LeakyRelu and Elu
branch on the sign, HardSwish fixes its constants) the rule spells Paddle's formula out instead."""

from __future__ import annotations

import math

from .emitter import Emitter, UnsupportedOp, exports

_ONE_TO_ONE = {
    "acos": "Acos",
    "asin": "Asin",
    "atan": "Atan",
    "sin": "Sin",
    "reciprocal": "Reciprocal",
    "erf": "Erf",
    "softsign": "Softsign",
}


@exports(*_ONE_TO_ONE)
def _one_to_one(e: Emitter, op) -> None:
    e.node(_ONE_TO_ONE[op.type], [e.x(op, "X")], e.out(op, "Out"))


def _softplus(e: Emitter, x: str, like: str, out=None) -> str:
    """max(x, 0) + log(e^-m + e^(x - m)): Paddle's softplus, finite where ONNX's Softplus overflows
    (`like`: the op's input, whose dtype the constants take)."""
    m = e.node("Max", [x, e.scalar(0.0, like)])
    exps = e.node("Add", [e.node("Exp", [e.node("Neg", [m])]), e.node("Exp", [e.node("Sub", [x, m])])])
    return e.node("Add", [m, e.node("Log", [exps])], out)


def _clip(e: Emitter, v: str, low: float, high: float, like: str, out=None) -> str:
    """v clipped to [low, high], the bounds of variable `like`'s dtype (the op's input)."""
    return e.node("Clip", [v, e.scalar(low, like), e.scalar(high, like)], out)


def _mul(e: Emitter, v: str, c: float, like: str, out=None) -> str:
    return e.node("Mul", [v, e.scalar(c, like)], out)


def _gelu(e: Emitter, x: str, approximate: bool, out: str) -> None:
    if approximate:
        cube = _mul(e, e.node("Mul", [x, e.node("Mul", [x, x])]), 0.044715, x)
        inner = e.node("Tanh", [_mul(e, e.node("Add", [x, cube]), math.sqrt(2 / math.pi), x)])
    else:
        inner = e.node("Erf", [_mul(e, x, 1 / math.sqrt(2), x)])
    e.node("Mul", [_mul(e, x, 0.5, x), e.node("Add", [inner, e.scalar(1.0, x)])], out)


def _mish(e: Emitter, x: str, threshold: float, out: str) -> None:
    """x tanh(sp): sp is x above threshold, e^x below -threshold, log(1 + e^x) between (Paddle's)."""
    middle = e.node("Log", [e.node("Add", [e.node("Exp", [x]), e.scalar(1.0, x)])])
    sp = middle
    if threshold > 0:
        low = e.node("Where", [e.node("Less", [x, e.scalar(-threshold, x)]), e.node("Exp", [x]), middle])
        sp = e.node("Where", [e.node("Greater", [x, e.scalar(threshold, x)]), x, low])
    e.node("Mul", [x, e.node("Tanh", [sp])], out)


def _round(e: Emitter, x: str, out: str) -> None:
    """Half away from zero, as Paddle's: trunc(x), one further out where |x - trunc(x)| >= 0.5."""
    sign = e.node("Sign", [x])
    t = e.node("Mul", [sign, e.node("Floor", [e.node("Abs", [x])])])
    far = e.node("GreaterOrEqual", [e.node("Abs", [e.node("Sub", [x, t])]), e.scalar(0.5, x)])
    e.node("Where", [far, e.node("Add", [t, sign]), t], out)


def _shrink(e: Emitter, x: str, lambd: float, bias: float, out: str) -> None:
    e.node("Shrink", [x], out, lambd=lambd, bias=bias)


def _soft_relu(e: Emitter, x: str, threshold: float, out: str) -> None:
    clipped = _clip(e, x, -threshold, threshold, x)
    e.node("Log", [e.node("Add", [e.node("Exp", [clipped]), e.scalar(1.0, x)])], out)


def _elu(e: Emitter, x: str, alpha: float, out: str) -> None:
    """max(0, x) + min(0, alpha (e^x - 1)), Paddle's (ONNX's Elu branches on x's sign instead)."""
    zero = e.scalar(0.0, x)
    negative = _mul(e, e.node("Sub", [e.node("Exp", [x]), e.scalar(1.0, x)]), alpha, x)
    e.node("Add", [e.node("Max", [x, zero]), e.node("Min", [negative, zero])], out)


def _hard_swish(e: Emitter, x: str, a, out: str) -> None:
    gate = _clip(e, e.node("Add", [x, e.scalar(a("offset"), x)]), 0.0, a("threshold"), x)
    e.node("Div", [e.node("Mul", [gate, x]), e.scalar(a("scale"), x)], out)


# op type -> rule(emitter, X, the op's attr getter, Out)
_RULES = {
    "rsqrt": lambda e, x, a, out: e.node("Reciprocal", [e.node("Sqrt", [x])], out),
    "log1p": lambda e, x, a, out: e.node("Log", [e.node("Add", [x, e.scalar(1.0, x)])], out),
    "round": lambda e, x, a, out: _round(e, x, out),
    "tanh_shrink": lambda e, x, a, out: e.node("Sub", [x, e.node("Tanh", [x])], out),
    "softplus": lambda e, x, a, out: _softplus(e, x, x, out),
    "logsigmoid": lambda e, x, a, out: e.node("Neg", [_softplus(e, e.node("Neg", [x]), x)], out),
    "softshrink": lambda e, x, a, out: _shrink(e, x, a("lambda"), a("lambda"), out),
    "hard_shrink": lambda e, x, a, out: _shrink(e, x, a("threshold"), 0.0, out),
    "brelu": lambda e, x, a, out: _clip(e, x, a("t_min"), a("t_max"), x, out),
    "relu6": lambda e, x, a, out: _clip(e, x, 0.0, a("threshold"), x, out),
    "soft_relu": lambda e, x, a, out: _soft_relu(e, x, a("threshold"), out),
    "thresholded_relu": lambda e, x, a, out: e.node("ThresholdedRelu", [x], out, alpha=a("threshold")),
    "elu": lambda e, x, a, out: _elu(e, x, a("alpha"), out),
    "leaky_relu": lambda e, x, a, out: e.node("Max", [x, _mul(e, x, a("alpha"), x)], out),
    "stanh": lambda e, x, a, out: _mul(e, e.node("Tanh", [_mul(e, x, a("scale_a"), x)]), a("scale_b"), x, out),
    "hard_sigmoid": lambda e, x, a, out: e.node("HardSigmoid", [x], out, alpha=a("slope"), beta=a("offset")),
    "swish": lambda e, x, a, out: e.node("Mul", [x, e.node("Sigmoid", [_mul(e, x, a("beta"), x)])], out),
    "hard_swish": lambda e, x, a, out: _hard_swish(e, x, a, out),
    "selu": lambda e, x, a, out: e.node("Selu", [x], out, alpha=a("alpha"), gamma=a("scale")),
    "gelu": lambda e, x, a, out: _gelu(e, x, a("approximate"), out),
    "mish": lambda e, x, a, out: _mish(e, x, a("threshold"), out),
}


@exports(*_RULES)
def _activation(e: Emitter, op) -> None:
    _RULES[op.type](e, e.x(op, "X"), op.attr, e.out(op, "Out"))


@exports("prelu")
def _prelu(e: Emitter, op) -> None:
    x, alpha = e.x(op, "X"), e.x(op, "Alpha")
    rank = len(e.shape(x))
    if op.attr("mode") == "channel" and rank != 4:  # alpha is [1, C, 1, 1]: line C up with axis 1
        alpha = e.node("Reshape", [alpha, e.const([1, -1] + [1] * (rank - 2))])
    e.node("Where", [e.node("Greater", [x, e.scalar(0.0, x)]), x, e.node("Mul", [alpha, x])], e.out(op, "Out"))


@exports("pow")
def _pow(e: Emitter, op) -> None:
    x = e.x(op, "X")
    factor = op.input("FactorTensor")
    exponent = factor[0] if factor else e.scalar(op.attr("factor"), x)  # an int x truncates it, as Paddle's
    e.node("Pow", [x, exponent], e.out(op, "Out"))


@exports("maxout")
def _maxout(e: Emitter, op) -> None:
    """Channels split into (C / groups, groups), the largest of each group kept."""
    x, groups, axis = e.x(op, "X"), op.attr("groups"), op.attr("axis")
    dims = [0 if i == 0 else d for i, d in enumerate(e.shape(x))]  # 0: the batch, copied at run time
    if any(d < 0 for d in dims):
        raise UnsupportedOp(f"maxout: X '{x}' {list(e.shape(x))} has a dim other than the batch known only at run time")
    split = e.node("Reshape", [x, e.const(dims[:axis] + [dims[axis] // groups, groups] + dims[axis + 1 :])])
    e.node("ReduceMax", [split, e.const([axis + 1])], e.out(op, "Out"), keepdims=0)


@exports("cumsum")
def _cumsum(e: Emitter, op) -> None:
    axis = e.const(op.attr("axis"), dtype="int64")
    attrs = {"exclusive": int(op.attr("exclusive")), "reverse": int(op.attr("reverse"))}
    e.node("CumSum", [e.x(op, "X"), axis], e.out(op, "Out"), **attrs)


def _one(e: Emitter, flag: str, every: bool, out: str) -> None:
    """A bool [1]: whether `flag` (bool) holds everywhere (`every`) or somewhere."""
    reduced = e.node("ReduceMin" if every else "ReduceMax", [e.node("Cast", [flag], to=6)], keepdims=0)  # 6: int32
    e.node("Reshape", [e.node("Cast", [reduced], to=9), e.const([1])], out)  # 9: bool


@exports("isinf", "isnan", "isfinite")
def _checks(e: Emitter, op) -> None:
    x, out = e.x(op, "X"), e.out(op, "Out")
    if not e.dtype(x).startswith("float"):  # an integer is finite
        e.node("Identity", [e.const([op.type == "isfinite"], dtype=bool)], out)
    elif op.type == "isfinite":
        bad = e.node("Or", [e.node("IsInf", [x]), e.node("IsNaN", [x])])
        _one(e, e.node("Not", [bad]), True, out)
    else:
        _one(e, e.node("IsInf" if op.type == "isinf" else "IsNaN", [x]), False, out)


@exports("allclose")
def _allclose(e: Emitter, op) -> None:
    a, b = e.x(op, "Input"), e.x(op, "Other")
    bound = e.node("Add", [e.scalar(op.attr("atol"), b), _mul(e, e.node("Abs", [b]), op.attr("rtol"), b)])
    close = e.node("LessOrEqual", [e.node("Abs", [e.node("Sub", [a, b])]), bound])
    if op.attr("equal_nan"):
        close = e.node("Or", [close, e.node("And", [e.node("IsNaN", [a]), e.node("IsNaN", [b])])])
    _one(e, close, True, e.out(op, "Out"))


@exports("size", "is_empty")
def _size(e: Emitter, op) -> None:
    slot = "Input" if op.type == "size" else "X"
    count = e.node("Size", [e.x(op, slot)])
    if op.type == "is_empty":
        count = e.node("Equal", [count, e.const(0, dtype="int64")])
    e.node("Reshape", [count, e.const([1])], e.out(op, "Out"))
