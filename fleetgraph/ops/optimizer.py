"""Optimizer ops: sgd, momentum, lars_momentum, adam, adagrad, rmsprop, adamax, adadelta,
decayed_adagrad, ftrl, lamb and dpsgd, with Paddle's slots, attributes and formulas (lars_momentum's
and dpsgd's kernels, scaled by norms, are in optimizer_scaled.py). They update Param and their state
in place, as Paddle's do (ParamOut shares Param's buffer). A sparse (SelectedRows) gradient of a
dense parameter touches the rows Paddle's kernels touch: SGD, Adagrad, Ftrl and lazy Adam its rows;
Momentum, non-lazy Adam, RMSProp, Adadelta, DecayedAdagrad, Adamax and Lamb every row (their state
decays everywhere, or the update reads the whole parameter); LarsMomentum and Dpsgd refuse it.

A SparseTable parameter (a table on the pservers, or a GEO trainer's copy) has only the rows ids have
touched; its state follows its rows. The same kernels run on the rows that exist, the gradient
renumbered to their positions: a row that never existed has zero state and no gradient, so no
kernel would move it, and the table trains exactly as the dense parameter would. Adamax and Lamb
are the exceptions, refused on a table: Adamax's infinity norm grows at rows a step did not touch,
and Lamb's trust ratio is a norm over every row.

Training threads (train_from_dataset) share the parameters: each update of one parameter and its
state runs whole before another thread's update of it starts. The kernels update in stages over
whole arrays, and a thread reading Adam's first moment with another thread's gradient in it but
the second moment still without it would divide by a moment of zero."""

from __future__ import annotations

import math
import threading

import numpy as np

from ..ir import InferContext, register_op
from ..ir.errors import fmt_shape
from ._xp import copy, scalar, scalar_type, total
from .optimizer_scaled import dpsgd, lars_momentum
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
    return float(a[(0,) * a.ndim])  # a's first element, whatever its shape


def _first(counter) -> int:
    return int(counter[(0,) * counter.ndim])


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
        param[merged.rows] -= merged.value * scalar(xp, param, lr)
    else:
        param -= grad * scalar(xp, param, lr)
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
        g = g * scalar(xp, param, rescale_grad)
    if regularization_method == "l2_decay":
        g = g + param * scalar(xp, param, regularization_coeff)
    lr = scalar(xp, param, _scalar(lr))
    velocity *= scalar(xp, param, mu)
    velocity += g
    if use_nesterov:
        param -= (g + velocity * scalar(xp, param, mu)) * lr
    else:
        param -= velocity * lr
    return param, velocity


def _adam(xp, param, grad, lr, m1, m2, b1pow, b2pow, *, beta1, beta2, epsilon, lazy_mode):
    if isinstance(param, SparseTable):
        g = _on_table(xp, param, grad, m1, m2)
        kw = dict(beta1=beta1, beta2=beta2, epsilon=epsilon, lazy_mode=lazy_mode)
        _adam(xp, param.values, g, lr, m1.values, m2.values, b1pow, b2pow, **kw)
        return param, m1, m2, b1pow, b2pow
    t = scalar_type(xp, param)
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
        step = np.divide(m1, denom, out=denom) if xp is np else m1 / denom  # the standard has no out=
        step *= t(lr_t)
        param -= step
    b1pow *= scalar(xp, b1pow, beta1)
    b2pow *= scalar(xp, b2pow, beta2)
    return param, m1, m2, b1pow, b2pow


def _adagrad(xp, param, grad, moment, lr, *, epsilon):
    if isinstance(param, SparseTable):
        _adagrad(xp, param.values, _on_table(xp, param, grad, moment), moment.values, lr, epsilon=epsilon)
        return param, moment
    t = scalar_type(xp, param)
    if isinstance(grad, SelectedRows):
        sr = grad.merged(xp)
        moment[sr.rows] += sr.value * sr.value
        param[sr.rows] -= t(_scalar(lr)) * sr.value / (xp.sqrt(moment[sr.rows]) + t(epsilon))
        return param, moment
    moment += grad * grad
    param -= t(_scalar(lr)) * grad / (xp.sqrt(moment) + t(epsilon))
    return param, moment


def _dense_on_rows(kernel):
    """An optimizer whose every row's state moves each step (RMSProp's mean square decays everywhere).
    On a dense parameter a sparse gradient counts as its dense form, as Paddle's kernels read absent
    rows as zero; on a sparse table the kernel runs on the rows that exist (a row no id touched has
    zero state and no gradient, so the update leaves it as it is)."""

    def run(xp, param, grad, *state, **attrs):
        if not isinstance(param, SparseTable):
            return kernel(xp, param, to_dense(xp, grad), *state, **attrs)
        tables = [s for s in state if isinstance(s, SparseTable)]
        g = _on_table(xp, param, grad, *tables).to_dense(xp)
        plain = [s.values if isinstance(s, SparseTable) else s for s in state]
        values = param.values
        result = kernel(xp, values, g, *plain, **attrs)
        owner = {id(values): param, **{id(v): s for v, s in zip(plain, state) if isinstance(s, SparseTable)}}
        return tuple(owner.get(id(r), r) for r in result)

    return run


def _no_table(kernel, name: str):
    """An optimizer whose update of a row depends on the whole parameter (Lamb's norms) or on every
    step a row missed (Adamax's infinity norm grows by epsilon each step) cannot run on a table of the
    touched rows only."""

    def run(xp, param, grad, *args, **attrs):
        if isinstance(param, SparseTable):
            raise TypeError(
                f"{name} cannot update a sparse table ({param.height} rows, of which only the touched ones "
                "exist): its update of a row depends on rows or steps the table does not hold; expected sgd, "
                "momentum, adagrad, adam, rmsprop, adadelta, decayed_adagrad or ftrl"
            )
        return kernel(xp, param, to_dense(xp, grad), *args, **attrs)

    return run


def _rmsprop(xp, param, grad, mean_square, moment, lr, mean_grad, *, epsilon, decay, momentum, centered):
    """Outputs in the op's order: ParamOut, MomentOut, MeanSquareOut, MeanGradOut."""
    t = scalar_type(xp, param)
    mean_square *= t(decay)
    mean_square += t(1 - decay) * grad * grad
    if centered:
        mean_grad *= t(decay)
        mean_grad += t(1 - decay) * grad
        denom = mean_square - mean_grad * mean_grad
    else:
        denom = copy(xp, mean_square)
    denom += t(epsilon)
    moment *= t(momentum)
    moment += t(_scalar(lr)) * grad / xp.sqrt(denom)
    param -= moment
    return param, moment, mean_square, mean_grad


def _adamax(xp, param, grad, lr, moment, inf_norm, beta1_pow, *, beta1, beta2, epsilon):
    t = scalar_type(xp, param)
    moment *= t(beta1)
    moment += t(1 - beta1) * grad
    inf_norm *= t(beta2)
    inf_norm += t(epsilon)
    if xp is np:
        np.maximum(inf_norm, np.abs(grad), out=inf_norm)
    else:  # the standard has no out=
        inf_norm[...] = xp.maximum(inf_norm, xp.abs(grad))
    lr_t = _scalar(lr) / (1 - _scalar(beta1_pow))
    param -= t(lr_t) * moment / inf_norm
    return param, moment, inf_norm


def _adadelta(xp, param, grad, avg_squared_grad, avg_squared_update, lr, *, rho, epsilon):
    t = scalar_type(xp, param)
    avg_squared_grad *= t(rho)
    avg_squared_grad += t(1 - rho) * grad * grad
    update = -xp.sqrt((avg_squared_update + t(epsilon)) / (avg_squared_grad + t(epsilon))) * grad
    avg_squared_update *= t(rho)
    avg_squared_update += t(1 - rho) * update * update
    param += t(_scalar(lr)) * update
    return param, avg_squared_grad, avg_squared_update


def _decayed_adagrad(xp, param, grad, moment, lr, *, decay, epsilon):
    t = scalar_type(xp, param)
    moment *= t(decay)
    moment += t(1 - decay) * grad * grad
    param -= t(_scalar(lr)) * grad / (xp.sqrt(moment) + t(epsilon))
    return param, moment


def _ftrl(xp, param, grad, squared, linear, lr, *, l1, l2, lr_power):
    """FTRL-proximal. A sparse gradient updates its rows only (Paddle's sparse kernel)."""
    if isinstance(param, SparseTable):
        g = _on_table(xp, param, grad, squared, linear)
        _ftrl(xp, param.values, g, squared.values, linear.values, lr, l1=l1, l2=l2, lr_power=lr_power)
        return param, squared, linear
    if isinstance(grad, SelectedRows):
        sr = grad.merged(xp)
        p, sq, lin = param[sr.rows], squared[sr.rows], linear[sr.rows]
        _ftrl(xp, p, sr.value, sq, lin, lr, l1=l1, l2=l2, lr_power=lr_power)
        param[sr.rows], squared[sr.rows], linear[sr.rows] = p, sq, lin
        return param, squared, linear
    t, lr = scalar_type(xp, param), _scalar(lr)
    new_squared = squared + grad * grad
    if lr_power == -0.5:
        sigma = (xp.sqrt(new_squared) - xp.sqrt(squared)) / t(lr)
        y = xp.sqrt(new_squared) / t(lr) + t(2 * l2)
    else:
        sigma = (new_squared ** t(-lr_power) - squared ** t(-lr_power)) / t(lr)
        y = new_squared ** t(-lr_power) / t(lr) + t(2 * l2)
    linear += grad - sigma * param
    shrunk = (t(l1) * xp.sign(linear) - linear) / y
    param[...] = xp.where(xp.abs(linear) > t(l1), shrunk, t(0))
    squared[...] = new_squared
    return param, squared, linear


def _lamb(xp, param, grad, lr, m1, m2, b1pow, b2pow, *, weight_decay, beta1, beta2, epsilon, always_adapt):
    """Adam's moments, the step rescaled by ||param|| / ||step|| (the layer's trust ratio)."""
    t = scalar_type(xp, param)
    m1 *= t(beta1)
    m1 += t(1 - beta1) * grad
    m2 *= t(beta2)
    m2 += t(1 - beta2) * grad * grad
    step = (m1 / t(1 - _scalar(b1pow))) / (xp.sqrt(m2 / t(1 - _scalar(b2pow))) + t(epsilon))
    if weight_decay != 0 or always_adapt:
        step += t(weight_decay) * param
        p_norm, s_norm = float(xp.sqrt(total(xp, param * param))), float(xp.sqrt(total(xp, step * step)))
        ratio = p_norm / s_norm if p_norm > 0 and s_norm > 0 else 1.0
    else:
        ratio = 1.0
    param -= t(_scalar(lr) * ratio) * step
    b1pow *= scalar(xp, b1pow, beta1)
    b2pow *= scalar(xp, b2pow, beta2)
    return param, m1, m2, b1pow, b2pow


_ADAM_STATE = {
    "ParamOut": "Param",
    "Moment1Out": "Moment1",
    "Moment2Out": "Moment2",
    "Beta1PowOut": "Beta1Pow",
    "Beta2PowOut": "Beta2Pow",
}
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
    "lars_momentum",
    inputs=("Param", "Grad", "Velocity", "LearningRate"),
    outputs=("ParamOut", "VelocityOut"),
    attrs={"mu": 0.9, "lars_coeff": 0.001, "lars_weight_decay": 0.0005},
    infer_shape=_check_grad,
    kernel=_one_update_at_a_time(lars_momentum),
    inplace={"ParamOut": "Param", "VelocityOut": "Velocity"},
)
register_op(
    "dpsgd",
    inputs=("Param", "Grad", "LearningRate"),
    outputs=("ParamOut",),
    attrs={"clip": 10.0, "batch_size": 16.0, "sigma": 1.0, "seed": 0},
    infer_shape=_check_grad,
    kernel=_one_update_at_a_time(dpsgd),
    inplace={"ParamOut": "Param"},
    random=True,
)
register_op(
    "adam",
    inputs=("Param", "Grad", "LearningRate", "Moment1", "Moment2", "Beta1Pow", "Beta2Pow"),
    outputs=("ParamOut", "Moment1Out", "Moment2Out", "Beta1PowOut", "Beta2PowOut"),
    attrs={"beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8, "lazy_mode": False},
    infer_shape=_check_grad,
    kernel=_one_update_at_a_time(_adam),
    inplace=_ADAM_STATE,
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
register_op(
    "rmsprop",
    inputs=("Param", "Grad", "MeanSquare", "Moment", "LearningRate", "MeanGrad?"),
    outputs=("ParamOut", "MomentOut", "MeanSquareOut", "MeanGradOut?"),
    attrs={"epsilon": 1e-10, "decay": 0.9, "momentum": 0.0, "centered": False},
    infer_shape=_check_grad,
    kernel=_one_update_at_a_time(_dense_on_rows(_rmsprop)),
    inplace={"ParamOut": "Param", "MomentOut": "Moment", "MeanSquareOut": "MeanSquare", "MeanGradOut": "MeanGrad"},
)
register_op(
    "adamax",
    inputs=("Param", "Grad", "LearningRate", "Moment", "InfNorm", "Beta1Pow"),
    outputs=("ParamOut", "MomentOut", "InfNormOut"),
    attrs={"beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8},
    infer_shape=_check_grad,
    kernel=_one_update_at_a_time(_no_table(_adamax, "adamax")),
    inplace={"ParamOut": "Param", "MomentOut": "Moment", "InfNormOut": "InfNorm"},
)
register_op(
    "adadelta",
    inputs=("Param", "Grad", "AvgSquaredGrad", "AvgSquaredUpdate", "LearningRate"),
    outputs=("ParamOut", "AvgSquaredGradOut", "AvgSquaredUpdateOut"),
    attrs={"rho": 0.95, "epsilon": 1e-6},
    infer_shape=_check_grad,
    kernel=_one_update_at_a_time(_dense_on_rows(_adadelta)),
    inplace={"ParamOut": "Param", "AvgSquaredGradOut": "AvgSquaredGrad", "AvgSquaredUpdateOut": "AvgSquaredUpdate"},
)
register_op(
    "decayed_adagrad",
    inputs=("Param", "Grad", "Moment", "LearningRate"),
    outputs=("ParamOut", "MomentOut"),
    attrs={"decay": 0.95, "epsilon": 1e-6},
    infer_shape=_check_grad,
    kernel=_one_update_at_a_time(_dense_on_rows(_decayed_adagrad)),
    inplace={"ParamOut": "Param", "MomentOut": "Moment"},
)
register_op(
    "ftrl",
    inputs=("Param", "Grad", "SquaredAccumulator", "LinearAccumulator", "LearningRate"),
    outputs=("ParamOut", "SquaredAccumOut", "LinearAccumOut"),
    attrs={"l1": 0.0, "l2": 0.0, "lr_power": -0.5},
    infer_shape=_check_grad,
    kernel=_one_update_at_a_time(_ftrl),
    inplace={"ParamOut": "Param", "SquaredAccumOut": "SquaredAccumulator", "LinearAccumOut": "LinearAccumulator"},
)
register_op(
    "lamb",
    inputs=("Param", "Grad", "LearningRate", "Moment1", "Moment2", "Beta1Pow", "Beta2Pow"),
    outputs=("ParamOut", "Moment1Out", "Moment2Out", "Beta1PowOut", "Beta2PowOut"),
    attrs={"weight_decay": 0.01, "beta1": 0.9, "beta2": 0.999, "epsilon": 1e-6, "always_adapt": False},
    infer_shape=_check_grad,
    kernel=_one_update_at_a_time(_no_table(_lamb, "lamb")),
    inplace=_ADAM_STATE,
)

# -- average_accumulates (ModelAverage) -----------------------------------------------------------------

MAX_NUM_ACCUMULATES = 16384  # Paddle's kMaxNumAccumulates: sum_1 moves to sum_2 this often


def _average_accumulates(
    xp,
    param,
    sum_1,
    sum_2,
    sum_3,
    num_accumulates,
    old_num_accumulates,
    num_updates,
    *,
    average_window,
    max_average_window,
    min_average_window,
):
    """Paddle's kernel, quirks included: when the sums move, they move as they were before this step's
    parameter was added (that step's parameter is dropped from them)."""
    updates, accumulates = _first(num_updates) + 1, _first(num_accumulates) + 1
    old = _first(old_num_accumulates)
    out_1, out_2, out_3 = sum_1 + param, copy(xp, sum_2), copy(xp, sum_3)
    if updates % MAX_NUM_ACCUMULATES == 0:
        out_2, out_1 = sum_2 + sum_1, xp.zeros_like(sum_1)
    if accumulates >= min_average_window and accumulates >= min(max_average_window, updates * average_window):
        out_3, out_1, out_2 = sum_1 + sum_2, xp.zeros_like(sum_1), xp.zeros_like(sum_2)
        old, accumulates = accumulates, 0
    count = lambda n: xp.asarray([n], dtype=num_updates.dtype)  # noqa: E731
    return out_1, out_2, out_3, count(accumulates), count(old), count(updates)


register_op(
    "average_accumulates",
    inputs=(
        "param",
        "in_sum_1",
        "in_sum_2",
        "in_sum_3",
        "in_num_accumulates",
        "in_old_num_accumulates",
        "in_num_updates",
    ),
    outputs=(
        "out_sum_1",
        "out_sum_2",
        "out_sum_3",
        "out_num_accumulates",
        "out_old_num_accumulates",
        "out_num_updates",
    ),
    attrs={"average_window": 0.0, "max_average_window": 10000, "min_average_window": 10000},
    kernel=_average_accumulates,
    inplace={
        "out_sum_1": "in_sum_1",
        "out_sum_2": "in_sum_2",
        "out_sum_3": "in_sum_3",
        "out_num_accumulates": "in_num_accumulates",
        "out_old_num_accumulates": "in_old_num_accumulates",
        "out_num_updates": "in_num_updates",
    },
)
