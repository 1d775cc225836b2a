"""One step of each optimizer equals a hand-written NumPy update; regularization adds the decay term."""

from __future__ import annotations

import numpy as np
import pytest
from models import fit_a_line_2x, train

import fleetgraph as paddle

RNG = np.random.default_rng(42)
X = RNG.normal(size=(8, 13)).astype("float32")
Y = RNG.normal(size=(8, 1)).astype("float32")


def _first_step(optimizer):
    """Parameters before and after one step, and the gradients of that step (computed in NumPy)."""
    main, startup, x, y, loss = fit_a_line_2x(optimizer=optimizer)
    scope = paddle.static.Scope()
    exe = paddle.static.Executor()
    exe.run(startup, scope=scope)
    w0 = np.array(scope.vars["fc_0.w_0"])
    b0 = np.array(scope.vars["fc_0.b_0"])
    exe.run(main, feed={"x": X, "y": Y}, scope=scope)
    # d mean((xw + b - y)^2) / dw, db
    r = X @ w0 + b0 - Y
    gw, gb = 2 * X.T @ r / len(X), np.array([2 * r.mean()])
    return (w0, b0), (gw, gb), (np.array(scope.vars["fc_0.w_0"]), np.array(scope.vars["fc_0.b_0"])), scope


def test_sgd_step_matches_numpy():
    (w, b), (gw, gb), (w1, b1), _ = _first_step(paddle.optimizer.SGD(learning_rate=0.1))
    np.testing.assert_allclose(w1, w - 0.1 * gw, atol=1e-6)
    np.testing.assert_allclose(b1, b - 0.1 * gb, atol=1e-6)


@pytest.mark.parametrize("nesterov", [False, True])
def test_momentum_step_matches_numpy(nesterov):
    (w, _), (gw, _), (w1, _), scope = _first_step(
        paddle.optimizer.Momentum(learning_rate=0.1, momentum=0.9, use_nesterov=nesterov)
    )
    v = gw  # velocity starts at zero: v = 0.9 * 0 + g
    want = w - 0.1 * (gw + 0.9 * v) if nesterov else w - 0.1 * v
    np.testing.assert_allclose(w1, want, atol=1e-6)
    np.testing.assert_allclose(scope.vars["fc_0.w_0_velocity_0"], v, atol=1e-6)


def test_adam_step_matches_numpy():
    (w, _), (gw, _), (w1, _), scope = _first_step(paddle.optimizer.Adam(learning_rate=0.01))
    b1, b2, eps = 0.9, 0.999, 1e-8
    m = (1 - b1) * gw
    v = (1 - b2) * gw * gw
    lr_t = 0.01 * np.sqrt(1 - b2) / (1 - b1)
    want = w - lr_t * m / (np.sqrt(v) + eps * np.sqrt(1 - b2))
    np.testing.assert_allclose(w1, want, atol=1e-6)
    np.testing.assert_allclose(scope.vars["fc_0.w_0_beta1_pow_acc_0"], [b1 * b1], atol=1e-7)


def test_adagrad_step_matches_numpy():
    (w, _), (gw, _), (w1, _), _ = _first_step(paddle.optimizer.Adagrad(learning_rate=0.1, epsilon=1e-6))
    np.testing.assert_allclose(w1, w - 0.1 * gw / (np.sqrt(gw * gw) + 1e-6), atol=1e-6)


def test_l2_weight_decay_adds_coeff_times_param():
    (w, _), (gw, _), (w1, _), _ = _first_step(paddle.optimizer.SGD(learning_rate=0.1, weight_decay=0.01))
    np.testing.assert_allclose(w1, w - 0.1 * (gw + 0.01 * w), atol=1e-6)


def test_l1_decay_adds_coeff_times_sign():
    opt = paddle.optimizer.SGD(learning_rate=0.1, weight_decay=paddle.regularizer.L1Decay(0.01))
    (w, _), (gw, _), (w1, _), _ = _first_step(opt)
    np.testing.assert_allclose(w1, w - 0.1 * (gw + 0.01 * np.sign(w)), atol=1e-6)


def test_param_regularizer_overrides_optimizer_and_regularization_ops_are_optimize_role():
    import fleetgraph.fluid as fluid
    from fleetgraph.ir import OpRole, Program, program_guard, unique_name

    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = fluid.layers.data(name="x", shape=[3])
        attr = fluid.ParamAttr(regularizer=fluid.regularizer.L1Decay(0.5))
        out = fluid.layers.fc(x, size=2, param_attr=attr)
        loss = fluid.layers.mean(out)
        fluid.optimizer.SGD(0.1, regularization=fluid.regularizer.L2Decay(0.1)).minimize(loss)
    types = [op.type for op in main.global_block().ops if op.attrs["op_role"] == OpRole.Optimize]
    # bias: L2 (scale, sum); weight: its own L1 (sign, scale, sum)
    assert types == ["scale", "sum", "sgd", "sign", "scale", "sum", "sgd"]


def test_learning_rate_must_be_a_float():
    with pytest.raises(TypeError, match="learning_rate expected a float"):
        paddle.optimizer.SGD(learning_rate="0.1")


def test_optimizer_state_starts_from_startup_program():
    main, startup, *_ = fit_a_line_2x(optimizer=paddle.optimizer.Adam(learning_rate=0.01))
    startup_types = [op.type for op in startup.global_block().ops]
    assert startup_types == ["uniform_random", "fill_constant", "fill_constant"] + ["fill_constant"] * 8
    _, scope = train(main, startup, [], [])
    assert float(scope.vars["fc_0.w_0_beta2_pow_acc_0"][0]) == pytest.approx(0.999)
