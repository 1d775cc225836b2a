"""Registry cases for the ops of ops/normalization.py; the references follow Paddle 1.8's unit tests
(test_layer_norm_op.py, test_group_norm_op.py, test_instance_norm_op.py, test_norm_op.py,
test_lrn_op.py, test_affine_channel_op.py), written with plain loops and NumPy."""

import numpy as np

from . import NOT_EXPORTED, case, positive, rand
from .nn import batch_stats, naive_batch_norm


def ref_layer_norm(X, Scale=None, Bias=None, *, epsilon, begin_norm_axis, **a):
    left = int(np.prod(X.shape[:begin_norm_axis]))
    x = X.reshape(left, -1)
    mean, var = x.mean(axis=1), x.var(axis=1)
    y = (x - mean[:, None]) / np.sqrt(var[:, None] + epsilon)
    y = y * (1 if Scale is None else Scale) + (0 if Bias is None else Bias)
    return {"Y": y.reshape(X.shape), "Mean": mean, "Variance": var}


def ref_group_norm(X, Scale=None, Bias=None, *, epsilon, groups, data_layout, **a):
    x = np.moveaxis(X, -1, 1) if data_layout == "NHWC" else X
    n, c = x.shape[:2]
    xg = x.reshape(n, groups, -1)
    mean, var = xg.mean(axis=2), xg.var(axis=2)
    y = ((xg - mean[..., None]) / np.sqrt(var[..., None] + epsilon)).reshape(x.shape)
    cshape = (1, c) + (1,) * (x.ndim - 2)
    if Scale is not None:
        y = y * Scale.reshape(cshape)
    if Bias is not None:
        y = y + Bias.reshape(cshape)
    return {"Y": np.moveaxis(y, 1, -1) if data_layout == "NHWC" else y, "Mean": mean, "Variance": var}


def ref_instance_norm(X, Scale=None, Bias=None, *, epsilon, **a):
    n, c = X.shape[:2]
    x = X.reshape(n, c, -1)
    mean, var = x.mean(axis=2), x.var(axis=2)
    y = ((x - mean[..., None]) / np.sqrt(var[..., None] + epsilon)).reshape(X.shape)
    cshape = (1, c) + (1,) * (X.ndim - 2)
    y = y * (1 if Scale is None else Scale.reshape(cshape)) + (0 if Bias is None else Bias.reshape(cshape))
    return {"Y": y, "SavedMean": mean.ravel(), "SavedVariance": 1 / np.sqrt(var.ravel() + epsilon)}


def ref_norm(X, *, axis, epsilon, **a):
    norm = np.sqrt(np.sum(np.square(X), axis=axis, keepdims=True) + epsilon)
    return {"Out": X / norm, "Norm": norm}


def ref_lrn(X, *, n, k, alpha, beta, data_format, **a):
    """test_lrn_op.py's loop: mid = k + alpha * sum of squares over the channel window."""
    x = np.moveaxis(X, 3, 1) if data_format == "NHWC" else X
    mid = np.full(x.shape, k, dtype=x.dtype)
    pre = (n - 1) // 2
    for c in range(x.shape[1]):
        for j in range(c - pre, c - pre + n):
            if 0 <= j < x.shape[1]:
                mid[:, c] += alpha * x[:, j] ** 2
    out = x * mid ** (-beta)
    back = (lambda a: np.moveaxis(a, 1, 3)) if data_format == "NHWC" else (lambda a: a)
    return {"Out": back(out), "MidOut": back(mid)}


def ref_affine_channel(X, Scale, Bias, *, data_layout, **a):
    shape = [1] * X.ndim
    shape[X.ndim - 1 if data_layout == "NHWC" else 1] = -1
    return {"Out": X * Scale.reshape(shape) + Bias.reshape(shape)}


_LN_OUT = {"Y": 1, "Mean": 1, "Variance": 1}
case(
    "layer_norm",
    {"X": rand(2, 3, 4), "Scale": positive(12, seed=1), "Bias": rand(12, seed=2)},
    outputs=_LN_OUT,
    loss_outputs=("Y",),
    reference=ref_layer_norm,
)
case(
    "layer_norm",
    {"X": rand(2, 3, 2, 2, seed=3), "Scale": positive(4, seed=4)},
    attrs={"begin_norm_axis": 2, "epsilon": 1e-3},
    outputs=_LN_OUT,
    loss_outputs=("Y",),
    name="axis2_scale_only",
    reference=ref_layer_norm,
)
case(
    "layer_norm",
    {"X": rand(3, 5, seed=5)},
    outputs=_LN_OUT,
    loss_outputs=("Y",),
    name="plain",
    reference=ref_layer_norm,
)

_GN_OUT = {"Y": 1, "Mean": 1, "Variance": 1}
case(
    "group_norm",
    {"X": rand(2, 4, 3, 3), "Scale": positive(4, seed=1), "Bias": rand(4, seed=2)},
    attrs={"groups": 2},
    outputs=_GN_OUT,
    loss_outputs=("Y",),
    atol=1e-5,
    reference=ref_group_norm,
)
case(
    "group_norm",
    {"X": rand(2, 3, 2, 6, seed=3), "Scale": positive(6, seed=4), "Bias": rand(6, seed=5)},
    attrs={"groups": 3, "data_layout": "NHWC", "epsilon": 1e-3},
    outputs=_GN_OUT,
    loss_outputs=("Y",),
    atol=1e-5,
    name="nhwc",
    reference=ref_group_norm,
)
case(
    "group_norm",
    {"X": rand(2, 6, 4, seed=6)},
    attrs={"groups": 3},
    outputs=_GN_OUT,
    loss_outputs=("Y",),
    atol=1e-5,
    name="no_affine",
    reference=ref_group_norm,
)

_IN_OUT = {"Y": 1, "SavedMean": 1, "SavedVariance": 1}
case(
    "instance_norm",
    {"X": rand(2, 3, 4, 5), "Scale": positive(3, seed=1), "Bias": rand(3, seed=2)},
    outputs=_IN_OUT,
    loss_outputs=("Y",),
    reference=ref_instance_norm,
)
case(
    "instance_norm",
    {"X": rand(3, 2, 5, seed=3)},
    attrs={"epsilon": 1e-3},
    outputs=_IN_OUT,
    loss_outputs=("Y",),
    name="rank3_no_affine",
    reference=ref_instance_norm,
)

_NORM_OUT = {"Out": 1, "Norm": 1}
case("norm", {"X": rand(2, 3, 4)}, outputs=_NORM_OUT, loss_outputs=("Out",), reference=ref_norm)
case(
    "norm",
    {"X": rand(3, 5, seed=1)},
    attrs={"axis": -1, "epsilon": 1e-12},
    outputs=_NORM_OUT,
    loss_outputs=("Out",),
    name="last_axis",
    reference=ref_norm,
)

_LRN_OUT = {"Out": 1, "MidOut": 1}
case(
    "lrn",
    {"X": rand(2, 6, 3, 3)},
    attrs={"n": 5, "k": 2.0, "alpha": 0.1, "beta": 0.75},
    outputs=_LRN_OUT,
    loss_outputs=("Out",),
    reference=ref_lrn,
)
case(
    "lrn",
    {"X": rand(2, 3, 3, 4, seed=1)},
    attrs={"n": 3, "k": 1.0, "alpha": 0.2, "beta": 0.5, "data_format": "NHWC"},
    outputs=_LRN_OUT,
    loss_outputs=("Out",),
    name="nhwc",
    reference=ref_lrn,
)

case(
    "affine_channel",
    {"X": rand(2, 3, 2, 2), "Scale": rand(3, seed=1), "Bias": rand(3, seed=2)},
    reference=ref_affine_channel,
)
case(
    "affine_channel",
    {"X": rand(2, 2, 2, 3, seed=3), "Scale": rand(3, seed=4), "Bias": rand(3, seed=5)},
    attrs={"data_layout": "NHWC"},
    name="nhwc",
    reference=ref_affine_channel,
)
case(
    "affine_channel",
    {"X": rand(4, 3, seed=6), "Scale": rand(3, seed=7), "Bias": rand(3, seed=8)},
    name="rank2",
    reference=ref_affine_channel,
)


def ref_data_norm(X, BatchSize, BatchSum, BatchSquareSum, scale_w=None, bias=None, *, slot_dim, **a):
    """test_data_norm_op.py's _reference_testing, with scale and shift where given."""
    means, scales = BatchSum / BatchSize, np.sqrt(BatchSize / BatchSquareSum)
    y = np.zeros_like(X)
    for i in range(X.shape[0]):
        for j in range(0, X.shape[1], slot_dim if slot_dim > 0 else X.shape[1]):
            if slot_dim <= 0 or abs(X[i, j]) >= 1e-7:
                width = slot_dim if slot_dim > 0 else X.shape[1]
                y[i, j : j + width] = (X[i, j : j + width] - means[j : j + width]) * scales[j : j + width]
    if scale_w is not None:
        y = np.where(y != 0, y * scale_w + bias, 0) if slot_dim > 0 else y * scale_w + bias
    return {"Y": y, "Means": means, "Scales": scales}


_DN_OUT = {"Y": 1, "Means": 1, "Scales": 1}
_DN_STATS = {
    "BatchSize": positive(4, seed=1) * 10,
    "BatchSum": rand(4, seed=2),
    "BatchSquareSum": positive(4, seed=3) * 5,
}
case(
    "data_norm",
    {"X": rand(5, 4), **_DN_STATS},
    outputs=_DN_OUT,
    loss_outputs=("Y",),
    no_grad=tuple(_DN_STATS),  # their 'gradients' are the batch's summaries: test_normalization_projection.py
    reference=ref_data_norm,
)
_DN_SLOTS = rand(4, 4, seed=4)
_DN_SLOTS[1, 0] = _DN_SLOTS[3, 2] = 0.0  # two slots not shown
case(
    "data_norm",
    {"X": _DN_SLOTS, **_DN_STATS, "scale_w": positive(4, seed=5), "bias": rand(4, seed=6)},
    attrs={"slot_dim": 2, "enable_scale_and_shift": True},
    outputs=_DN_OUT,
    loss_outputs=("Y",),
    no_grad=("X", *_DN_STATS),  # a nudge to a slot's zero shows the slot
    name="slots_scale_shift",
    reference=ref_data_norm,
)


def ref_spectral_norm(Weight, U, V, *, dim, power_iters, eps, **a):
    """test_spectral_norm_op.py's reference."""
    h = Weight.shape[dim]
    perm = [dim] + [d for d in range(Weight.ndim) if d != dim]
    w = Weight.transpose(perm).reshape(h, -1)
    u, v = U.reshape(h, 1), V.reshape(-1, 1)
    for _ in range(power_iters):
        v = w.T @ u
        v = v / (np.sqrt((v * v).sum()) + eps)
        u = w @ v
        u = u / (np.sqrt((u * u).sum()) + eps)
    return {"Out": Weight / (u * (w @ v)).sum()}


_SN_IN = {"U": rand(6, seed=1), "V": rand(12, seed=2)}
case(
    "spectral_norm",
    {"Weight": rand(3, 6, 2, 2), **_SN_IN},
    attrs={"dim": 1, "power_iters": 0},
    no_grad=("U", "V"),
    reference=ref_spectral_norm,
)
case(
    "spectral_norm",
    {"Weight": rand(6, 4, seed=3), "U": rand(6, seed=4), "V": rand(4, seed=5)},
    attrs={"power_iters": 0},
    no_grad=("U", "V"),
    name="dim0",
    reference=ref_spectral_norm,
)
# the iterations from random U and V (whose gradient Paddle leaves out): test_normalization_projection.py


def _top_singular_vectors(weight, dim):
    """U and V where the power iteration has converged: there the gradient that holds them constant
    (Paddle's) is the whole gradient, so central differences check it through the iterations."""
    perm = [dim] + [d for d in range(weight.ndim) if d != dim]
    u, _, vt = np.linalg.svd(weight.transpose(perm).reshape(weight.shape[dim], -1))
    return {"U": u[:, 0], "V": vt[0]}


_SN_W = rand(2, 6, 3, 2, seed=6)
case(
    "spectral_norm",
    {"Weight": _SN_W, **_top_singular_vectors(_SN_W, 1)},
    attrs={"dim": 1, "power_iters": 3},
    no_grad=("U", "V"),
    name="converged",
    reference=ref_spectral_norm,
)


def ref_inplace_abn(X, Scale, Bias, Mean, Variance, *, epsilon, activation, alpha, **a):
    m, v = batch_stats(X)
    y = naive_batch_norm(X, Scale, Bias, m, v, epsilon)
    if activation == "leaky_relu":
        y = np.where(y > 0, y, alpha * y)
    elif activation == "elu":
        y = np.where(y > 0, y, alpha * (np.exp(np.minimum(y, 0)) - 1))
    return {"Y": y, "SavedMean": m, "SavedVariance": 1 / np.sqrt(v + epsilon)}


_ABN_OUT = {"Y": 1, "SavedMean": 1, "SavedVariance": 1}
for _act in ("", "leaky_relu", "elu"):
    case(
        "inplace_abn",
        {
            "X": rand(3, 2, 2, 2, seed=7),
            "Scale": positive(2, seed=8),
            "Bias": rand(2, seed=9),
            "Mean": rand(2, seed=10) * 0.1,
            "Variance": positive(2, seed=11),
        },
        attrs={"activation": _act, "alpha": 0.2},
        outputs=_ABN_OUT,
        loss_outputs=("Y",),
        no_grad=("Mean", "Variance"),
        name=_act or "identity",
        reference=ref_inplace_abn,
    )

NOT_EXPORTED.update(
    {
        "spectral_norm": "no ONNX exporter yet (the power iterations unrolled: MatMul, ReduceL2, Div per step)",
    }
)
