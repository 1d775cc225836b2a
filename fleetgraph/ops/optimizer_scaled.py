"""Kernels of the optimizers whose step is scaled by norms of the whole parameter or gradient:
lars_momentum (LARS: a local learning rate from ||param|| and ||grad||) and dpsgd (differentially
private SGD: the gradient clipped to an L2 norm, plus gaussian noise). ops/optimizer.py registers
them beside momentum, under its per-parameter lock. Both are dense only, as Paddle 1.8's kernels
are: a norm over the rows a sparse gradient or a sparse table holds is not the parameter's norm."""

from __future__ import annotations

from ._xp import scalar_type, total
from .selected_rows import SelectedRows
from .sparse_table import SparseTable


def _dense_only(op_type: str, param, grad) -> None:
    if isinstance(param, SparseTable) or isinstance(grad, SelectedRows):
        what = "a sparse table parameter" if isinstance(param, SparseTable) else "a sparse (SelectedRows) gradient"
        raise TypeError(
            f"{op_type} takes a dense parameter and gradient (its norms are over the whole tensor), got {what}"
        )


def _norm(xp, a) -> float:
    return float(xp.sqrt(total(xp, a * a)))


def _rate(lr) -> float:
    return float(lr[(0,) * lr.ndim])  # the LearningRate tensor's one element, whatever its shape


def lars_momentum(xp, param, grad, velocity, lr, *, mu, lars_coeff, lars_weight_decay):
    """Momentum with the layer-wise rate lr * lars_coeff * ||p|| / (||g|| + lars_weight_decay * ||p||)
    (plain lr while either norm is 0, as at a zero-initialised bias), and the weight decay added to
    the gradient: v = mu * v + local_lr * (g + lars_weight_decay * p); p -= v."""
    _dense_only("lars_momentum", param, grad)
    t = scalar_type(xp, param)
    p_norm, g_norm, rate = _norm(xp, param), _norm(xp, grad), _rate(lr)
    if p_norm > 0 and g_norm > 0:
        rate = rate * lars_coeff * p_norm / (g_norm + lars_weight_decay * p_norm)
    velocity *= t(mu)
    velocity += t(rate) * (grad + t(lars_weight_decay) * param)
    param -= velocity
    return param, velocity


def dpsgd(xp, param, grad, lr, *, clip, batch_size, sigma, seed, rng):
    """p -= lr * (g / scale + noise / batch_size), scale = ||g|| / clip when ||g|| > clip (else 1), and
    noise ONE scalar draw of N(0, sigma) shared by every element (CCS16, Deep Learning with
    Differential Privacy). The draw differs from Paddle's, distributed alike: Paddle seeds
    std::minstd_rand with `seed` (0: the time) at every step and takes a polar Box-Muller sample;
    here it comes from the op's counter-based stream (ops/rng.py), which a nonzero `seed` fixes
    (the same noise every step, as Paddle's fixed seed gives) and which `paddle.seed` makes
    reproducible when `seed` is 0."""
    _dense_only("dpsgd", param, grad)
    t = scalar_type(xp, param)
    norm = _norm(xp, grad)
    scale = norm / clip if norm > clip else 1.0
    noise = sigma * float(rng.standard_normal(rng.fresh(1))[0])
    param -= t(_rate(lr)) * (grad / t(scale) + t(noise / batch_size))
    return param
