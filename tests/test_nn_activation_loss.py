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
