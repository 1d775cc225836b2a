"""Elementwise activations and unary math: relu, sigmoid, tanh, softmax, square, exp, log, sqrt, abs,
sign, floor, ceil, cos."""

from __future__ import annotations

import numpy as np

from ..ir import make_grad_op, register_op
from ._common import normalize_axis, same_shape
from ._xp import astype, largest, mask, total
from .math import scale_grad
from .sparse_table import RowFunction, SparseTable


def _unary(name, forward, backward=None, grad_uses="Out", attrs=None):
    """Register `name` and, when it has a derivative, `name_grad` taking `grad_uses` and Out@GRAD."""
    grad = make_grad_op(inputs=(grad_uses, "Out@GRAD"), outputs=("X@GRAD",)) if backward else None
    register_op(name, inputs=("X",), outputs=("Out",), attrs=attrs, infer_shape=same_shape(), grad=grad, kernel=forward)
    if backward:
        register_op(
            name + "_grad",
            inputs=(grad_uses, "Out@GRAD"),
            outputs=("X@GRAD",),
            attrs=attrs,
            infer_shape=same_shape(grad_uses, "X@GRAD"),
            kernel=backward,
        )


def _sigmoid(xp, x):
    # split by sign so that exp never overflows
    e = xp.exp(-xp.abs(x))
    return astype(xp, xp.where(x >= 0, 1 / (1 + e), e / (1 + e)), x.dtype)


def _softmax(xp, x, *, axis):
    axis = normalize_axis(axis, x.ndim)
    e = xp.exp(x - largest(xp, x, axis, keepdims=True))
    return e / total(xp, e, axis, keepdims=True)


def _softmax_grad(xp, out, dout, *, axis):
    axis = normalize_axis(axis, out.ndim)
    return out * (dout - total(xp, dout * out, axis, keepdims=True))


def _log_softmax(xp, x, *, axis):
    """x - logsumexp(x): finite wherever x is, however far apart the logits (softmax then log is not)."""
    axis = normalize_axis(axis, x.ndim)
    shifted = x - largest(xp, x, axis, keepdims=True)
    return shifted - xp.log(total(xp, xp.exp(shifted), axis, keepdims=True))


def _log_softmax_grad(xp, out, dout, *, axis):
    axis = normalize_axis(axis, out.ndim)
    return dout - xp.exp(out) * total(xp, dout, axis, keepdims=True)


_ZEROS: dict = {}  # dtype -> a 0-d NumPy zero


def _relu(xp, x):
    if xp is np:  # a ufunc takes a 0-d array of x's dtype faster than Python's 0 (0.4 us against 0.7 on 8x8)
        zero = _ZEROS.get(x.dtype)
        if zero is None:
            zero = _ZEROS[x.dtype] = np.zeros((), x.dtype)
        return np.maximum(x, zero)
    return xp.maximum(x, 0)


_unary("relu", _relu, lambda xp, out, dout: dout * mask(xp, out > 0, dout))
_unary("sigmoid", _sigmoid, lambda xp, out, dout: dout * out * (1 - out))
_unary("tanh", lambda xp, x: xp.tanh(x), lambda xp, out, dout: dout * (1 - out * out))
_unary("softmax", _softmax, _softmax_grad, attrs={"axis": -1})
_unary("log_softmax", _log_softmax, _log_softmax_grad, attrs={"axis": -1})
_unary("square", lambda xp, x: x * x, lambda xp, x, dout: dout * 2 * x, grad_uses="X")
_unary("exp", lambda xp, x: xp.exp(x), lambda xp, out, dout: dout * out)
_unary("log", lambda xp, x: xp.log(x), lambda xp, x, dout: dout / x, grad_uses="X")
_unary("sqrt", lambda xp, x: xp.sqrt(x), lambda xp, out, dout: dout * 0.5 / out)
_unary("abs", lambda xp, x: xp.abs(x), lambda xp, x, dout: dout * xp.sign(x), grad_uses="X")
_unary("floor", lambda xp, x: xp.floor(x), lambda xp, x, dout: xp.zeros_like(dout), grad_uses="X")
_unary("ceil", lambda xp, x: xp.ceil(x), lambda xp, x, dout: xp.zeros_like(dout), grad_uses="X")
_unary("cos", lambda xp, x: xp.cos(x), lambda xp, x, dout: -dout * xp.sin(x), grad_uses="X")


def _sign(xp, x):
    if isinstance(x, (SparseTable, RowFunction)):  # L1 decay of a table: evaluated at a gradient's rows
        return RowFunction.of(x, xp.sign)
    return xp.sign(x)


def _sign_grad_maker(op) -> list[dict]:
    """sign's derivative is zero wherever it exists: a scale by 0 of Out@GRAD, as Paddle's."""
    return scale_grad(op, 0.0)


register_op("sign", inputs=("X",), outputs=("Out",), infer_shape=same_shape(), grad=_sign_grad_maker, kernel=_sign)
