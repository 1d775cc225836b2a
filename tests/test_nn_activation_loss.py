"""Paddle 2.0's paddle.nn activations and losses (functions and layers) give the values of Paddle 2.0's
unit tests (test_activation_op.py, test_*_loss.py reference functions) eagerly and in a program,
their gradients train the layers that learn, and what Paddle refuses is refused."""

from __future__ import annotations

import math

import numpy as np
import pytest

import fleetgraph as paddle
import fleetgraph.fluid as fluid
import fleetgraph.nn as nn
import fleetgraph.nn.functional as F
from fleetgraph.ir import Program, program_guard, unique_name

RNG = np.random.RandomState(7)
X = RNG.uniform(-4, 4, (3, 5)).astype("float32")
_erf = np.vectorize(math.erf)


def run(mode: str, build, *arrays):
    """build(*variables) -> one result or a tuple, as NumPy arrays: eagerly on Tensors ('eager') or
    fed to a fresh program ('static')."""
    if mode == "eager":
        paddle.disable_static()
        outs = build(*(paddle.to_tensor(a) for a in arrays))
        return [o.numpy() for o in (outs if isinstance(outs, tuple) else (outs,))]
    paddle.enable_static()
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        xs = [fluid.data(f"in{i}", list(a.shape), str(a.dtype)) for i, a in enumerate(arrays)]
        outs = build(*xs)
    fetches = list(outs) if isinstance(outs, tuple) else [outs]
    exe = fluid.Executor()
    scope = paddle.static.Scope()
    exe.run(startup, scope=scope)
    return exe.run(main, feed={f"in{i}": a for i, a in enumerate(arrays)}, fetch_list=fetches, scope=scope)


both_modes = pytest.mark.parametrize("mode", ["eager", "static"])


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


# name -> (function kwargs, the layer and its args or None, NumPy reference)
ACTIVATIONS = {
    "brelu": ({"t_min": 1.0, "t_max": 2.0}, None, lambda x: np.clip(x, 1.0, 2.0)),
    "elu": ({"alpha": 0.5}, (nn.ELU, {"alpha": 0.5}), lambda x: np.where(x > 0, x, 0.5 * (np.exp(x) - 1))),
    "gelu": ({}, (nn.GELU, {}), lambda x: 0.5 * x * (1 + _erf(x / np.sqrt(2)))),
    "hardshrink": ({"threshold": 1.5}, (nn.Hardshrink, {"threshold": 1.5}), lambda x: x * (np.abs(x) > 1.5)),
    "hardtanh": ({"min": -2.0, "max": 1.0}, (nn.Hardtanh, {"min": -2.0, "max": 1.0}), lambda x: np.clip(x, -2, 1)),
    "hardsigmoid": ({}, (nn.Hardsigmoid, {}), lambda x: np.clip(x * 0.1666667 + 0.5, 0, 1)),
    "hardswish": ({}, (nn.Hardswish, {}), lambda x: x * np.clip(x + 3, 0, 6) / 6),
    "leaky_relu": ({}, (nn.LeakyReLU, {}), lambda x: np.where(x > 0, x, 0.01 * x)),
    "log_sigmoid": ({}, (nn.LogSigmoid, {}), lambda x: -np.log1p(np.exp(-x))),
    "relu": ({}, (nn.ReLU, {}), lambda x: np.maximum(x, 0)),
    "relu6": ({}, (nn.ReLU6, {}), lambda x: np.clip(x, 0, 6)),
    "selu": ({}, (nn.SELU, {}), lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x))),
    "sigmoid": ({}, (nn.Sigmoid, {}), lambda x: 1 / (1 + np.exp(-x))),
    "softplus": (
        {"beta": 2, "threshold": 3},
        (nn.Softplus, {"beta": 2, "threshold": 3}),
        lambda x: np.where(2 * x > 3, x, np.log1p(np.exp(2 * x)) / 2),
    ),
    "softshrink": (
        {"threshold": 1.0},
        (nn.Softshrink, {"threshold": 1.0}),
        lambda x: np.where(x > 1, x - 1, np.where(x < -1, x + 1, 0)),
    ),
    "softsign": ({}, (nn.Softsign, {}), lambda x: x / (1 + np.abs(x))),
    "swish": ({}, (nn.Swish, {}), lambda x: x / (1 + np.exp(-x))),
    "tanh": ({}, (nn.Tanh, {}), np.tanh),
    "tanhshrink": ({}, (nn.Tanhshrink, {}), lambda x: x - np.tanh(x)),
    "thresholded_relu": ({}, (nn.ThresholdedReLU, {}), lambda x: np.where(x > 1.0, x, 0)),
    "softmax": ({"axis": 0}, (nn.Softmax, {"axis": 0}), lambda x: _softmax(x, 0)),
    "log_softmax": ({}, (nn.LogSoftmax, {}), lambda x: np.log(_softmax(x))),
    "maxout": ({"groups": 2}, (nn.Maxout, {"groups": 2}), lambda x: x.reshape(1, 2, 2, 1, 2).max(2)),
}


def _input(name):
    """X, or for maxout four channels of it (NCHW)."""
    return X.ravel()[:8].reshape(1, 4, 1, 2) if name == "maxout" else X


@both_modes
@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_function_matches_paddles_reference(mode, name):
    kwargs, _, reference = ACTIVATIONS[name]
    x = _input(name)
    (got,) = run(mode, lambda v: getattr(F, name)(v, **kwargs), x)
    np.testing.assert_allclose(got, reference(x), rtol=1e-5, atol=1e-6)


@both_modes
@pytest.mark.parametrize("name", sorted(n for n, entry in ACTIVATIONS.items() if entry[1]))
def test_activation_layer_matches_its_function(mode, name):
    _, (layer, args), reference = ACTIVATIONS[name]
    x = _input(name)
    (got,) = run(mode, lambda v: layer(**args)(v), x)
    np.testing.assert_allclose(got, reference(x), rtol=1e-5, atol=1e-6)


def test_gelu_approximate_is_the_tanh_form():
    got = F.gelu(paddle.to_tensor(X), approximate=True).numpy()
    want = 0.5 * X * (1 + np.tanh(np.sqrt(2 / np.pi) * (X + 0.044715 * X**3)))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_in_place_forms_write_into_the_tensor_eagerly():
    for name, reference in (("relu_", lambda x: np.maximum(x, 0)), ("elu_", lambda x: np.where(x > 0, x, np.expm1(x)))):
        x = paddle.to_tensor(X.copy())
        assert getattr(F, name)(x) is x
        np.testing.assert_allclose(x.numpy(), reference(X), rtol=1e-6, atol=1e-6)
    x = paddle.to_tensor(X.copy())
    F.tanh_(x), F.softmax_(x)
    np.testing.assert_allclose(x.numpy(), _softmax(np.tanh(X)), rtol=1e-5)


def test_in_place_forms_return_a_new_variable_in_a_program():
    with pytest.warns(UserWarning, match="relu_"):
        (got,) = run("static", F.relu_, X)
    np.testing.assert_allclose(got, np.maximum(X, 0))


@both_modes
def test_prelu_takes_one_slope_or_one_per_channel(mode):
    x = X.reshape(1, 3, 5)
    shared, per_channel = np.array([0.5], "float32"), np.array([0.1, 0.2, 0.3], "float32")
    got = run(mode, lambda v, a, b: (F.prelu(v, a), F.prelu(v, b)), x, shared, per_channel)
    np.testing.assert_allclose(got[0], np.where(x > 0, x, 0.5 * x), rtol=1e-6)
    np.testing.assert_allclose(got[1], np.where(x > 0, x, per_channel.reshape(1, 3, 1) * x), rtol=1e-6)


def test_prelu_layer_learns_its_slopes():
    layer = nn.PReLU(num_parameters=3, init=0.25)
    x = paddle.to_tensor(X.reshape(1, 3, 5))
    loss = paddle.sum(layer(x))
    loss.backward()
    np.testing.assert_allclose(layer._weight.numpy(), [0.25] * 3)
    np.testing.assert_allclose(layer._weight.grad.numpy(), np.minimum(X, 0).sum(1), rtol=1e-5)


def test_prelu_layer_learns_its_slopes_in_a_program():
    def build(x):
        layer = nn.PReLU(num_parameters=3, init=0.25)
        (grad,) = paddle.static.gradients(paddle.sum(layer(x)), [layer._weight])
        return layer(x), grad

    out, grad = run("static", build, X.reshape(1, 3, 5))
    np.testing.assert_allclose(out[0], np.where(X > 0, X, 0.25 * X), rtol=1e-6)
    np.testing.assert_allclose(grad, np.minimum(X, 0).sum(1), rtol=1e-5)


def test_softplus_gradient_follows_both_pieces():
    x = paddle.to_tensor(X, stop_gradient=False)
    paddle.sum(F.softplus(x, beta=2, threshold=3)).backward()
    want = np.where(2 * X > 3, 1.0, 1 / (1 + np.exp(-2 * X)))
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-5)


def test_refusals_match_paddles():
    x = paddle.to_tensor(X)
    for call in (
        lambda: F.selu(x, scale=1.0),
        lambda: F.selu(x, alpha=-1.0),
        lambda: F.softshrink(x, threshold=-1.0),
        lambda: F.mse_loss(x, x, reduction="avg"),
        lambda: nn.L1Loss(reduction="avg"),
        lambda: nn.HSigmoidLoss(2, 1),
        lambda: F.prelu(x, paddle.to_tensor(np.ones(4, "float32"))),
    ):
        with pytest.raises(ValueError):
            call()
    with pytest.raises(NotImplementedError, match="cross_entropy"):
        weight = paddle.to_tensor(np.ones(5, "float32"))
        F.cross_entropy(x, paddle.to_tensor(_softmax(X)), weight=weight, soft_label=True)


# -- losses ------------------------------------------------------------------------------------------

P = RNG.uniform(0.05, 0.95, (4, 3)).astype("float32")  # probabilities
Q = RNG.uniform(0.05, 0.95, (4, 3)).astype("float32")
BITS = (RNG.rand(4, 3) > 0.5).astype("float32")
LOGITS = RNG.uniform(-3, 3, (4, 3)).astype("float32")
CLASSES = np.array([2, 0, 1, 2], "int64")
WEIGHT = np.array([0.5, 2.0, 1.5], "float32")


def _reduce(loss, reduction):
    return {"mean": np.mean, "sum": np.sum, "none": lambda v: v}[reduction](loss)


def _bce(p, label):
    return -(label * np.log(p) + (1 - label) * np.log(1 - p))


def _logit_bce(z, label):
    return np.maximum(z, 0) - z * label + np.log1p(np.exp(-np.abs(z)))


def _huber(r, delta):
    return np.where(np.abs(r) <= delta, 0.5 * r * r, delta * (np.abs(r) - 0.5 * delta))


@both_modes
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_elementwise_losses_match_paddles_reference(mode, reduction):
    r = reduction
    got = run(
        mode,
        lambda p, q, bits, z, w: (
            F.mse_loss(p, q, r),
            F.l1_loss(p, q, r),
            F.smooth_l1_loss(p, q * 3, r, delta=0.5),
            F.binary_cross_entropy(p, bits, w, r),
            F.binary_cross_entropy_with_logits(z, bits, w, r, pos_weight=w),
            F.margin_ranking_loss(p, q, bits * 2 - 1, margin=0.1, reduction=r),
            F.kl_div(p, q, r),
        ),
        P,
        Q,
        BITS,
        LOGITS,
        WEIGHT,
    )
    want = [
        (P - Q) ** 2,
        np.abs(P - Q),
        _huber(P - Q * 3, 0.5),
        _bce(P, BITS) * WEIGHT,
        _logit_bce(LOGITS, BITS) * (1 + (WEIGHT - 1) * BITS) * WEIGHT,
        np.maximum(0, -(BITS * 2 - 1) * (P - Q) + 0.1),
        Q * (np.log(Q) - P),
    ]
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.squeeze(g), _reduce(w, reduction), rtol=1e-5, atol=1e-6)


def test_kl_div_batchmean_divides_by_the_batch():
    got = F.kl_div(paddle.to_tensor(P), paddle.to_tensor(Q), "batchmean").numpy()
    np.testing.assert_allclose(np.squeeze(got), (Q * (np.log(Q) - P)).sum() / 4, rtol=1e-5)


def _cross_entropy(logits, classes):
    return -np.log(_softmax(logits))[np.arange(len(classes)), classes]


@both_modes
def test_cross_entropy_weights_and_ignores_as_paddle_2(mode):
    ignored = np.array([2, -1, 1, 2], "int64")
    got = run(
        mode,
        lambda z, c, w, i: (
            F.cross_entropy(z, c, reduction="none"),
            F.cross_entropy(z, c),
            F.cross_entropy(z, c, weight=w),
            F.cross_entropy(z, i, weight=w, ignore_index=-1),
            F.cross_entropy(z, i, ignore_index=-1, reduction="sum"),
            F.cross_entropy(z, paddle.nn.functional.softmax(w * z), soft_label=True),
        ),
        LOGITS,
        CLASSES,
        WEIGHT,
        ignored,
    )
    each = _cross_entropy(LOGITS, CLASSES)
    kept = ignored != -1
    each_kept = _cross_entropy(LOGITS, np.where(kept, ignored, 0)) * kept
    soft = -(_softmax(WEIGHT * LOGITS) * np.log(_softmax(LOGITS))).sum(1)
    assert got[0].shape == (4,)
    np.testing.assert_allclose(got[0], each, rtol=1e-5)
    np.testing.assert_allclose(np.squeeze(got[1]), each.mean(), rtol=1e-5)
    np.testing.assert_allclose(np.squeeze(got[2]), (each * WEIGHT[CLASSES]).sum() / WEIGHT[CLASSES].sum(), rtol=1e-5)
    picked = WEIGHT[np.where(kept, ignored, 0)] * kept
    np.testing.assert_allclose(np.squeeze(got[3]), (each_kept * picked).sum() / picked.sum(), rtol=1e-5)
    np.testing.assert_allclose(np.squeeze(got[4]), each_kept.sum(), rtol=1e-5)
    np.testing.assert_allclose(np.squeeze(got[5]), soft.mean(), rtol=1e-5)


def test_cross_entropy_loss_layer_trains_the_logits_by_the_weights():
    z = paddle.to_tensor(LOGITS, stop_gradient=False)
    loss = nn.CrossEntropyLoss(weight=paddle.to_tensor(WEIGHT))(z, paddle.to_tensor(CLASSES))
    loss.backward()
    w = WEIGHT[CLASSES][:, None]
    want = w * (_softmax(LOGITS) - np.eye(3)[CLASSES]) / w.sum()
    np.testing.assert_allclose(z.grad.numpy(), want, rtol=1e-5, atol=1e-7)


@both_modes
def test_nll_loss_picks_the_classes_of_a_4d_input(mode):
    logs = np.log(_softmax(RNG.uniform(-2, 2, (2, 3, 2, 2)).astype("float32"), 1))
    labels = np.array([[[0, 2], [1, -100]], [[2, 2], [0, 1]]], "int64")
    got = run(
        mode,
        lambda x, lab, w: (F.nll_loss(x, lab, reduction="none"), F.nll_loss(x, lab, w), nn.NLLLoss(w)(x, lab)),
        logs,
        labels,
        WEIGHT,
    )
    kept = labels != -100
    safe = np.where(kept, labels, 0)
    picked = np.take_along_axis(logs, safe[:, None], 1)[:, 0]
    np.testing.assert_allclose(got[0], -picked * kept, rtol=1e-5)
    w = WEIGHT[safe] * kept
    np.testing.assert_allclose(np.squeeze(got[1]), (-picked * w).sum() / w.sum(), rtol=1e-5)
    np.testing.assert_allclose(got[2], got[1], rtol=1e-6)


def test_nll_loss_gradient_reaches_the_picked_log_probabilities():
    x = paddle.to_tensor(np.log(P), stop_gradient=False)
    F.nll_loss(x, paddle.to_tensor(CLASSES), paddle.to_tensor(WEIGHT)).backward()
    w = WEIGHT[CLASSES]
    np.testing.assert_allclose(x.grad.numpy(), -np.eye(3)[CLASSES] * (w / w.sum())[:, None], rtol=1e-6)


@both_modes
def test_fluid_spelled_losses_keep_their_values(mode):
    got = run(
        mode,
        lambda p, q, z, c: (
            F.square_error_cost(p, q),
            F.log_loss(p[:, :1], q[:, :1]),
            F.softmax_with_cross_entropy(z, paddle.unsqueeze(c, [1])),
            F.dice_loss(p, paddle.unsqueeze(c, [1])),
        ),
        P,
        Q,
        LOGITS,
        CLASSES,
    )
    np.testing.assert_allclose(got[0], (P - Q) ** 2, rtol=1e-6)
    eps = 1e-4
    np.testing.assert_allclose(
        got[1], -Q[:, :1] * np.log(P[:, :1] + eps) - (1 - Q[:, :1]) * np.log(1 - P[:, :1] + eps), rtol=1e-5
    )
    np.testing.assert_allclose(got[2][:, 0], _cross_entropy(LOGITS, CLASSES), rtol=1e-5)
    hot = np.eye(3)[CLASSES]
    dice = 1 - 2 * (P * hot).sum(1) / (P.sum(1) + hot.sum(1) + 1e-5)
    np.testing.assert_allclose(np.squeeze(got[3]), dice.mean(), rtol=1e-5)


def test_npair_loss_as_paddles_composition():
    anchor, positive = P, Q
    labels = np.array([1.0, 2.0, 1.0, 3.0], "float32")
    got = F.npair_loss(paddle.to_tensor(anchor), paddle.to_tensor(positive), paddle.to_tensor(labels)).numpy()
    same = (labels[:, None] == labels[None, :]).astype("float32")
    same /= same.sum(1, keepdims=True)
    l2 = ((anchor**2).sum(1).mean() + (positive**2).sum(1).mean()) * 0.25 * 0.002
    ce = -(same * np.log(_softmax(anchor @ positive.T))).sum(1)
    np.testing.assert_allclose(np.squeeze(got), l2 + (same * ce[:, None]).sum(0).mean(), rtol=1e-5)


# Paddle's ctc_loss and hsigmoid_loss on the values below (printed by PaddlePaddle 3.3.1, whose
# kernels for these are 2.0's)
CTC_RNG = np.random.RandomState(0)
CTC_LOG_PROBS = CTC_RNG.rand(4, 2, 3).astype("float32")
HS_X, HS_W, HS_B = (CTC_RNG.rand(*s).astype("float32") for s in ((3, 2), (4, 2), (4, 1)))


@both_modes
def test_ctc_loss_matches_paddle(mode):
    labels = np.array([[1, 2], [1, 0]], "int32")
    lengths = np.array([4, 3], "int64"), np.array([2, 1], "int64")
    got = run(
        mode,
        lambda lp, lab, il, ll: (
            F.ctc_loss(lp, lab, il, ll, reduction="none"),
            F.ctc_loss(lp, lab, il, ll),
            nn.CTCLoss(reduction="sum")(lp, lab, il, ll),
        ),
        CTC_LOG_PROBS,
        labels,
        *lengths,
    )
    np.testing.assert_allclose(got[0], [1.744443655014038, 1.8012125492095947], rtol=1e-5)
    np.testing.assert_allclose(np.squeeze(got[1]), 1.336717128753662, rtol=1e-5)
    np.testing.assert_allclose(np.squeeze(got[2]), 3.545656204223633, rtol=1e-5)


@both_modes
def test_hsigmoid_loss_matches_paddle(mode):
    labels = np.array([0, 2, 3], "int64")
    got = run(
        mode,
        lambda x, lab, w, b: (F.hsigmoid_loss(x, lab, 5, w, b), F.hsigmoid_loss(x, lab, 5, w)),
        HS_X,
        labels,
        HS_W,
        HS_B,
    )
    np.testing.assert_allclose(got[0][:, 0], [2.6579506397247314, 1.187093734741211, 4.374266624450684], rtol=1e-5)
    np.testing.assert_allclose(got[1][:, 0], [2.1898999214172363, 1.5162768363952637, 2.9282073974609375], rtol=1e-5)


def test_hsigmoid_loss_layer_owns_the_default_trees_weights():
    layer = nn.HSigmoidLoss(feature_size=2, num_classes=5)
    assert list(layer.weight.shape) == [4, 2] and list(layer.bias.shape) == [4, 1]
    layer.weight.set_value(HS_W)
    layer.bias.set_value(HS_B)
    out = layer(paddle.to_tensor(HS_X), paddle.to_tensor(np.array([0, 2, 3], "int64")))
    np.testing.assert_allclose(out.numpy()[:, 0], [2.6579506397247314, 1.187093734741211, 4.374266624450684], rtol=1e-5)
    paddle.sum(out).backward()
    assert layer.weight.grad is not None and layer.bias.grad is not None


LOSS_LAYERS = [
    (nn.BCELoss, {"reduction": "sum"}, F.binary_cross_entropy, (P, BITS)),
    (nn.BCEWithLogitsLoss, {"reduction": "none"}, F.binary_cross_entropy_with_logits, (LOGITS, BITS)),
    (nn.L1Loss, {}, F.l1_loss, (P, Q)),
    (nn.MSELoss, {"reduction": "sum"}, F.mse_loss, (P, Q)),
    (nn.KLDivLoss, {"reduction": "sum"}, F.kl_div, (P, Q)),
    (nn.MarginRankingLoss, {"margin": 0.2}, F.margin_ranking_loss, (P, Q, BITS * 2 - 1)),
    (nn.SmoothL1Loss, {"delta": 0.3}, F.smooth_l1_loss, (P, Q * 2)),
]


@pytest.mark.parametrize("layer, args, function, arrays", LOSS_LAYERS, ids=lambda v: getattr(v, "__name__", ""))
def test_loss_layer_calls_its_function_with_its_arguments(layer, args, function, arrays):
    tensors = [paddle.to_tensor(a) for a in arrays]
    np.testing.assert_allclose(layer(**args)(*tensors).numpy(), function(*tensors, **args).numpy(), rtol=1e-6)


@both_modes
def test_cross_entropy_without_softmax_takes_probabilities(mode):
    probs = _softmax(LOGITS)
    got = run(mode, lambda p, c: F.cross_entropy(p, c, reduction="none", use_softmax=False), probs, CLASSES)
    np.testing.assert_allclose(np.squeeze(got[0]), _cross_entropy(LOGITS, CLASSES), rtol=1e-5)
