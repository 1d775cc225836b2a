"""Optimizer ops: sgd, momentum, adam, adagrad. They update Param and their state in place, as
Paddle's do (ParamOut shares Param's buffer). A sparse (SelectedRows) gradient of a dense parameter
touches the rows Paddle's kernels touch: SGD and Adagrad its rows, Momentum and non-lazy Adam every
row (their state decays everywhere), lazy Adam its rows.

A SparseTable parameter (a table on the pservers, or a GEO trainer's copy) has only the rows ids have
touched; its state follows its rows. The same kernels run on the rows that exist, the gradient
renumbered to their positions: a row that never existed has zero state and no gradient, so no
kernel would move it, and the table trains exactly as the dense parameter would.

Training threads (train_from_dataset) share the parameters: each update of one parameter and its
state runs whole before another thread's update of it starts. The kernels update in stages over
whole arrays, and a thread reading Adam's first moment with another thread's gradient in it but
the second moment still without it would divide by a moment of zero."""

from __future__ import annotations

import math
import threading

from ..ir import InferContext, register_op
from ..ir.errors import fmt_shape
from .selected_rows import SelectedRows, to_dense
from .sparse_table import SparseTable

_STRIPES = [threading.Lock() for _ in range(64)]


def _one_update_at_a_time(kernel):
    """The kernel holding a lock of its parameter (striped by identity: two parameters may share one,
    which only makes them wait)."""

    def locked(xp, param, *args, **kwargs):
        with _STRIPES[id(param) % len(_STRIPES)]:
            return kernel(xp, param, *args, **kwargs)

    return locked


def _scalar(a) -> float:
    return float(a.reshape(-1)[0])


def _check_grad(ctx: InferContext) -> None:
    p, g = ctx.input_var("Param"), ctx.input_var("Grad")
    if p.shape != g.shape and g.type != "selected_rows":
        raise ctx.error(f"Grad '{g.name}' {fmt_shape(g.shape)} does not match Param '{p.name}' {fmt_shape(p.shape)}")


def _on_table(xp, param: SparseTable, grad, *state) -> SelectedRows:
    """A table's sparse gradient as rows of its `values` (and of its state's, which follow it)."""
    if not isinstance(grad, SelectedRows):
        raise TypeError(
            f"the parameter is a sparse table of {param.height} rows; expected a sparse (SelectedRows) "
            f"gradient, got a dense {type(grad).__name__}"
        )
    positions = param.positions(grad.rows)
    for table in state:
        table.follow(param)
    return SelectedRows(positions, grad.value, len(param))


def _sgd(xp, param, grad, lr):
    if isinstance(param, SparseTable):
        _sgd(xp, param.values, _on_table(xp, param, grad), lr)
        return param
    lr = _scalar(lr)
    if isinstance(grad, SelectedRows):  # merged first: one update per row, not ufunc.at's per entry
        merged = grad.merged(xp)
        param[merged.rows] -= merged.value * param.dtype.type(lr)
    else:
        param -= grad * param.dtype.type(lr)
    return param


def _momentum(
    xp, param, grad, velocity, lr, *, mu, use_nesterov, regularization_method, regularization_coeff, rescale_grad
):
    if isinstance(param, SparseTable):
        kw = dict(mu=mu, use_nesterov=use_nesterov, rescale_grad=rescale_grad)
        kw.update(regularization_method=regularization_method, regularization_coeff=regularization_coeff)
        _momentum(xp, param.values, _on_table(xp, param, grad, velocity), velocity.values, lr, **kw)
        return param, velocity
    g = to_dense(xp, grad)
    if rescale_grad != 1.0:
        g = g * param.dtype.type(rescale_grad)
    if regularization_method == "l2_decay":
        g = g + param * param.dtype.type(regularization_coeff)
    lr = param.dtype.type(_scalar(lr))
    velocity *= param.dtype.type(mu)
    velocity += g
    if use_nesterov:
        param -= (g + velocity * param.dtype.type(mu)) * lr
    else:
        param -= velocity * lr
    return param, velocity


def _adam(xp, param, grad, lr, m1, m2, b1pow, b2pow, *, beta1, beta2, epsilon, lazy_mode):
    if isinstance(param, SparseTable):
        g = _on_table(xp, param, grad, m1, m2)
        kw = dict(beta1=beta1, beta2=beta2, epsilon=epsilon, lazy_mode=lazy_mode)
        _adam(xp, param.values, g, lr, m1.values, m2.values, b1pow, b2pow, **kw)
        return param, m1, m2, b1pow, b2pow
    t = param.dtype.type
    b1p, b2p = _scalar(b1pow), _scalar(b2pow)
    lr_t = _scalar(lr) * math.sqrt(1 - b2p) / (1 - b1p)
    if isinstance(grad, SelectedRows) and lazy_mode:
        sr = grad.merged(xp)
        rows = sr.rows
        m1[rows] = m1[rows] * t(beta1) + sr.value * t(1 - beta1)
        m2[rows] = m2[rows] * t(beta2) + sr.value * sr.value * t(1 - beta2)
        param[rows] -= t(lr_t) * m1[rows] / (xp.sqrt(m2[rows]) + t(epsilon * math.sqrt(1 - b2p)))
    else:
        g = to_dense(xp, grad)
        m1 *= t(beta1)
        m1 += g * t(1 - beta1)
        m2 *= t(beta2)
        m2 += g * g * t(1 - beta2)
        denom = xp.sqrt(m2)
        denom += t(epsilon * math.sqrt(1 - b2p))
        step = xp.divide(m1, denom, out=denom)
        step *= t(lr_t)
        param -= step
    b1pow *= b1pow.dtype.type(beta1)
    b2pow *= b2pow.dtype.type(beta2)
    return param, m1, m2, b1pow, b2pow


def _adagrad(xp, param, grad, moment, lr, *, epsilon):
    if isinstance(param, SparseTable):
        _adagrad(xp, param.values, _on_table(xp, param, grad, moment), moment.values, lr, epsilon=epsilon)
        return param, moment
    t = param.dtype.type
    if isinstance(grad, SelectedRows):
        sr = grad.merged(xp)
        moment[sr.rows] += sr.value * sr.value
        param[sr.rows] -= t(_scalar(lr)) * sr.value / (xp.sqrt(moment[sr.rows]) + t(epsilon))
        return param, moment
    moment += grad * grad
    param -= t(_scalar(lr)) * grad / (xp.sqrt(moment) + t(epsilon))
    return param, moment


register_op(
    "sgd",
    inputs=("Param", "Grad", "LearningRate"),
    outputs=("ParamOut",),
    infer_shape=_check_grad,
    kernel=_one_update_at_a_time(_sgd),
    inplace={"ParamOut": "Param"},
)
register_op(
    "momentum",
    inputs=("Param", "Grad", "Velocity", "LearningRate"),
    outputs=("ParamOut", "VelocityOut"),
    attrs={
        "mu": 0.9,
        "use_nesterov": False,
        "regularization_method": "",
        "regularization_coeff": 0.0,
        "rescale_grad": 1.0,
    },
    infer_shape=_check_grad,
    kernel=_one_update_at_a_time(_momentum),
    inplace={"ParamOut": "Param", "VelocityOut": "Velocity"},
)
register_op(
    "adam",
    inputs=("Param", "Grad", "LearningRate", "Moment1", "Moment2", "Beta1Pow", "Beta2Pow"),
    outputs=("ParamOut", "Moment1Out", "Moment2Out", "Beta1PowOut", "Beta2PowOut"),
    attrs={"beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8, "lazy_mode": False},
    infer_shape=_check_grad,
    kernel=_one_update_at_a_time(_adam),
    inplace={
        "ParamOut": "Param",
        "Moment1Out": "Moment1",
        "Moment2Out": "Moment2",
        "Beta1PowOut": "Beta1Pow",
        "Beta2PowOut": "Beta2Pow",
    },
)
register_op(
    "adagrad",
    inputs=("Param", "Grad", "Moment", "LearningRate"),
    outputs=("ParamOut", "MomentOut"),
    attrs={"epsilon": 1e-6},
    infer_shape=_check_grad,
    kernel=_one_update_at_a_time(_adagrad),
    inplace={"ParamOut": "Param", "MomentOut": "Moment"},
)
