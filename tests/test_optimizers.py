"""One step of each optimizer equals a hand-written NumPy update; regularization adds the decay term."""

from __future__ import annotations

import numpy as np
import pytest
from models import fit_a_line_2x, train

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.ir import OpRole

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


# -- the other optimizers: three steps each against NumPy, state carried from step to step ----------------------


def _numpy_steps(update, steps=3):
    """fit_a_line's (w, b) after `steps` NumPy updates `update(p, g, state, t) -> p` (state: a dict per
    parameter the update keeps its accumulators in; t counts from 1), from fleetgraph's initial values."""
    main, startup, *_ = fit_a_line_2x()
    scope = paddle.static.Scope()
    paddle.static.Executor().run(startup, scope=scope)
    w, b = np.array(scope.vars["fc_0.w_0"], np.float64), np.array(scope.vars["fc_0.b_0"], np.float64)
    states = ({}, {})
    for t in range(1, steps + 1):
        r = X @ w + b - Y
        gw, gb = 2 * X.T @ r / len(X), np.array([2 * r.mean()])
        w, b = update(w, gw, states[0], t), update(b, gb, states[1], t)
    return w, b


def _fleetgraph_steps(optimizer, steps=3):
    main, startup, *_ = fit_a_line_2x(optimizer=optimizer)
    scope = paddle.static.Scope()
    exe = paddle.static.Executor()
    exe.run(startup, scope=scope)
    for _ in range(steps):
        exe.run(main, feed={"x": X, "y": Y}, scope=scope)
    return np.array(scope.vars["fc_0.w_0"]), np.array(scope.vars["fc_0.b_0"])


def _zeros(state, p, *names):
    return [state.setdefault(n, np.zeros_like(p)) for n in names]


def _rmsprop(lr, rho, eps, momentum, centered):
    def update(p, g, s, t):
        ms, mom, mg = _zeros(s, p, "ms", "mom", "mg")
        ms[...] = rho * ms + (1 - rho) * g * g
        if centered:
            mg[...] = rho * mg + (1 - rho) * g
            mom[...] = momentum * mom + lr * g / np.sqrt(ms - mg * mg + eps)
        else:
            mom[...] = momentum * mom + lr * g / np.sqrt(ms + eps)
        return p - mom

    return update


def _adamax(lr, b1, b2, eps):
    def update(p, g, s, t):
        m, u = _zeros(s, p, "m", "u")
        m[...] = b1 * m + (1 - b1) * g
        u[...] = np.maximum(b2 * u + eps, np.abs(g))
        return p - lr / (1 - b1**t) * m / u

    return update


def _adadelta(lr, rho, eps):
    def update(p, g, s, t):
        eg, ex = _zeros(s, p, "eg", "ex")
        eg[...] = rho * eg + (1 - rho) * g * g
        dx = -np.sqrt((ex + eps) / (eg + eps)) * g
        ex[...] = rho * ex + (1 - rho) * dx * dx
        return p + lr * dx

    return update


def _decayed_adagrad(lr, decay, eps):
    def update(p, g, s, t):
        (m,) = _zeros(s, p, "m")
        m[...] = decay * m + (1 - decay) * g * g
        return p - lr * g / (np.sqrt(m) + eps)

    return update


def _ftrl(lr, l1, l2, power):
    def update(p, g, s, t):
        n, z = _zeros(s, p, "n", "z")
        new_n = n + g * g
        sigma = (new_n ** (-power) - n ** (-power)) / lr
        z[...] = z + g - sigma * p
        n[...] = new_n
        return np.where(np.abs(z) > l1, (l1 * np.sign(z) - z) / (new_n ** (-power) / lr + 2 * l2), 0.0)

    return update


def _lamb(lr, wd, b1, b2, eps):
    def update(p, g, s, t):
        m, v = _zeros(s, p, "m", "v")
        m[...] = b1 * m + (1 - b1) * g
        v[...] = b2 * v + (1 - b2) * g * g
        r = (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + eps) + wd * p
        p_norm, r_norm = np.linalg.norm(p), np.linalg.norm(r)
        ratio = p_norm / r_norm if wd and p_norm > 0 and r_norm > 0 else 1.0  # a zero norm: no rescaling
        return p - lr * ratio * r

    return update


NEW_OPTIMIZERS = {
    "rmsprop": (lambda: paddle.optimizer.RMSProp(0.01, rho=0.9, epsilon=1e-6), _rmsprop(0.01, 0.9, 1e-6, 0.0, False)),
    "rmsprop_centered_momentum": (
        lambda: paddle.optimizer.RMSProp(0.01, rho=0.9, epsilon=1e-6, momentum=0.5, centered=True),
        _rmsprop(0.01, 0.9, 1e-6, 0.5, True),
    ),
    "adamax": (lambda: paddle.optimizer.Adamax(0.01), _adamax(0.01, 0.9, 0.999, 1e-8)),
    "adadelta": (lambda: paddle.optimizer.Adadelta(1.0, epsilon=1e-6, rho=0.95), _adadelta(1.0, 0.95, 1e-6)),
    "decayed_adagrad": (
        lambda: paddle.fluid.optimizer.DecayedAdagradOptimizer(0.1, decay=0.9, epsilon=1e-6),
        _decayed_adagrad(0.1, 0.9, 1e-6),
    ),
    "ftrl": (lambda: paddle.fluid.optimizer.Ftrl(0.1, l1=0.001, l2=0.01), _ftrl(0.1, 0.001, 0.01, -0.5)),
    "ftrl_power": (
        lambda: paddle.fluid.optimizer.FtrlOptimizer(0.1, l1=0.0, l2=0.01, lr_power=-0.6),
        _ftrl(0.1, 0.0, 0.01, -0.6),
    ),
    "lamb": (lambda: paddle.optimizer.Lamb(0.01, lamb_weight_decay=0.01), _lamb(0.01, 0.01, 0.9, 0.999, 1e-6)),
    "lamb_excluded": (
        lambda: paddle.fluid.optimizer.LambOptimizer(0.01, exclude_from_weight_decay_fn=lambda p: True),
        _lamb(0.01, 0.0, 0.9, 0.999, 1e-6),
    ),
}


@pytest.mark.parametrize("name", sorted(NEW_OPTIMIZERS))
def test_three_steps_match_numpy(name):
    make, update = NEW_OPTIMIZERS[name]
    w, b = _fleetgraph_steps(make())
    want_w, want_b = _numpy_steps(update)
    np.testing.assert_allclose(w, want_w, atol=1e-6, rtol=1e-5)
    np.testing.assert_allclose(b, want_b, atol=1e-6, rtol=1e-5)


def test_fluid_names_are_the_same_classes_as_the_short_ones():
    fo = paddle.fluid.optimizer
    pairs = ["SGD", "Momentum", "Adagrad", "Adam", "Adamax", "Adadelta", "RMSProp", "Lamb", "DecayedAdagrad", "Ftrl"]
    for short in pairs:
        assert getattr(fo, short + "Optimizer") is getattr(fo, short)


def test_minimize_returns_every_op_it_added():
    from fleetgraph.ir import OpRole

    opt = paddle.optimizer.Adamax(0.01, weight_decay=0.01)
    main, *_ = fit_a_line_2x(optimizer=opt)
    ops = main.global_block().ops
    optimize_ops = [op for op in ops if op.attrs["op_role"] & OpRole.Optimize]
    main2, startup2 = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main2, startup2), paddle.utils.unique_name.guard():
        x = paddle.static.data(name="x", shape=[None, 13], dtype="float32")
        loss = paddle.mean(paddle.static.nn.fc(x, size=1))
        returned, _ = paddle.optimizer.Adamax(0.01, weight_decay=0.01).minimize(loss)
    assert [op.type for op in returned] == [op.type for op in optimize_ops]
    # per parameter: L2 decay (scale, sum) and adamax; then each beta1 power advanced by a scale op
    assert [op.type for op in returned] == ["scale", "sum", "adamax", "scale", "sum", "adamax", "scale", "scale"]


def test_per_parameter_learning_rate_scales_the_update():
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup), paddle.utils.unique_name.guard():
        x = paddle.static.data(name="x", shape=[None, 13], dtype="float32")
        y = paddle.static.data(name="y", shape=[None, 1], dtype="float32")
        attr = paddle.ParamAttr(name="w", learning_rate=0.5)
        pred = paddle.static.nn.fc(x, size=1, weight_attr=attr, bias_attr=paddle.ParamAttr(name="b"))
        loss = paddle.mean(paddle.nn.functional.square_error_cost(pred, y))
        paddle.optimizer.SGD(learning_rate=0.1).minimize(loss)
    scope = paddle.static.Scope()
    exe = paddle.static.Executor()
    exe.run(startup, scope=scope)
    w0, b0 = np.array(scope.vars["w"]), np.array(scope.vars["b"])
    exe.run(main, feed={"x": X, "y": Y}, scope=scope)
    r = X @ w0 + b0 - Y
    np.testing.assert_allclose(scope.vars["w"], w0 - 0.05 * (2 * X.T @ r / len(X)), atol=1e-6)
    np.testing.assert_allclose(scope.vars["b"], b0 - 0.1 * np.array([2 * r.mean()]), atol=1e-6)


def test_parameter_list_limits_what_is_trained():
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup), paddle.utils.unique_name.guard():
        x = paddle.static.data(name="x", shape=[None, 13], dtype="float32")
        pred = paddle.static.nn.fc(
            x, size=1, weight_attr=paddle.ParamAttr(name="w"), bias_attr=paddle.ParamAttr(name="b")
        )
        loss = paddle.mean(pred)
        w = main.global_block().var("w")
        _, params_grads = paddle.fluid.optimizer.RMSPropOptimizer(0.01, parameter_list=[w]).minimize(loss)
    assert [p.name for p, _ in params_grads] == ["w"]
    assert [op.input("Param") for op in main.global_block().ops if op.type == "rmsprop"] == [["w"]]


@pytest.mark.parametrize(
    "bad",
    [
        lambda: paddle.optimizer.SGD(learning_rate="0.1"),
        lambda: paddle.optimizer.Adam(0.1, parameters="fc_0.w_0"),
        lambda: paddle.optimizer.Adam(0.1, parameters=[3]),
        lambda: paddle.optimizer.Momentum(0.1, weight_decay="l2"),
        lambda: paddle.optimizer.SGD(0.1).minimize("loss"),
        lambda: paddle.distributed.fleet.distributed_optimizer(paddle.optimizer.SGD(0.1)).minimize(None),
    ],
    ids=["learning_rate", "parameters_str", "parameters_int", "weight_decay", "loss", "fleet_loss"],
)
def test_a_bad_argument_is_one_error_both_except_clauses_catch(bad):
    """Paddle raises TypeError for these; ours is a FleetgraphError that is also a TypeError."""
    import fleetgraph.distributed.fleet as fleet

    fleet.init(is_collective=True)
    with pytest.raises(paddle.FleetgraphError) as caught:
        bad()
    assert isinstance(caught.value, TypeError)


def test_exponential_moving_average_applies_bias_corrected_averages_and_restores():
    import fleetgraph.fluid as fluid
    from fleetgraph.ir import Program, program_guard, unique_name

    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = fluid.layers.data(name="x", shape=[13])
        y = fluid.layers.data(name="y", shape=[1])
        pred = fluid.layers.fc(x, size=1, param_attr=fluid.ParamAttr(name="w"), bias_attr=fluid.ParamAttr(name="b"))
        loss = fluid.layers.mean(fluid.layers.square_error_cost(pred, y))
        fluid.optimizer.SGD(0.1).minimize(loss)
        ema = fluid.optimizer.ExponentialMovingAverage(0.9)
        ema.update()
    scope = paddle.static.Scope()
    exe = fluid.Executor()
    exe.run(startup, scope=scope)
    average, seen = np.zeros((13, 1)), []
    with paddle.static.scope_guard(scope):
        for _ in range(4):
            exe.run(main, feed={"x": X, "y": Y})
            seen.append(np.array(scope.vars["w"], np.float64))
            average = 0.9 * average + 0.1 * seen[-1]
        with ema.apply(exe):
            np.testing.assert_allclose(scope.vars["w"], average / (1 - 0.9**4), rtol=1e-5)
        np.testing.assert_array_equal(scope.vars["w"], seen[-1].astype("float32"))  # restored
    assert {"/moving_average/"} == {op.attrs.get("op_namescope") for op in main.global_block().ops[-10:]} - {None}


def test_lookahead_moves_the_slow_weights_every_k_steps_as_numpy():
    import fleetgraph.fluid as fluid

    k, alpha, lr = 2, 0.5, 0.1
    make = lambda: fluid.optimizer.LookaheadOptimizer(fluid.optimizer.SGD(lr), alpha=alpha, k=k)  # noqa: E731
    got_w, got_b = _fleetgraph_steps(make(), steps=5)
    slow = {}

    def update(p, g, s, t):
        key = "w" if p.size > 1 else "b"
        slow.setdefault(key, p.copy())
        fast = p - lr * g
        if t % k == 0:
            slow[key] = alpha * fast + (1 - alpha) * slow[key]
            fast = slow[key].copy()
        return fast

    want_w, want_b = _numpy_steps(update, steps=5)
    np.testing.assert_allclose(got_w, want_w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_b, want_b, rtol=1e-5, atol=1e-6)
    assert paddle.incubate.optimizer.LookAhead is fluid.optimizer.LookaheadOptimizer


def _fluid_line_then(after_minimize):
    """Seed 001's model without its bias ("w" only), SGD(0.1), then `after_minimize()` in its programs."""
    import fleetgraph.fluid as fluid
    from fleetgraph.ir import Program, program_guard, unique_name

    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = fluid.layers.data(name="x", shape=[13])
        y = fluid.layers.data(name="y", shape=[1])
        pred = fluid.layers.fc(x, size=1, param_attr=fluid.ParamAttr(name="w"), bias_attr=False)
        fluid.optimizer.SGD(0.1).minimize(fluid.layers.mean(fluid.layers.square_error_cost(pred, y)))
        return main, startup, after_minimize()


def test_exponential_moving_average_with_thres_steps_warms_its_decay_up():
    import fleetgraph.fluid as fluid

    def ema_with_thres_steps():
        step = fluid.layers.autoincreased_step_counter(begin=1)
        fluid.optimizer.ExponentialMovingAverage(0.9, thres_steps=step).update()

    main, startup, _ = _fluid_line_then(ema_with_thres_steps)
    scope = paddle.static.Scope()
    exe = fluid.Executor()
    exe.run(startup, scope=scope)
    average = np.zeros((13, 1))
    for t in range(1, 4):
        exe.run(main, feed={"x": X, "y": Y}, scope=scope)
        decay = min(0.9, (1 + t) / (10 + t))
        average = decay * average + (1 - decay) * np.array(scope.vars["w"], np.float64)
    (ema_name,) = [n for n in scope.vars if n.startswith("w.ema")]
    np.testing.assert_allclose(scope.vars[ema_name], average, rtol=1e-5)


def test_model_average_applies_the_window_average_as_paddles_kernel_keeps_it():
    import fleetgraph.fluid as fluid

    main, startup, average = _fluid_line_then(
        lambda: fluid.optimizer.ModelAverage(0.5, min_average_window=2, max_average_window=3)
    )
    scope = paddle.static.Scope()
    exe = fluid.Executor()
    exe.run(startup, scope=scope)
    s1, s2, s3, acc, old, updates = np.zeros((13, 1)), np.zeros((13, 1)), np.zeros((13, 1)), 0, 0, 0
    for _ in range(7):  # Paddle's average_accumulates, step by step (the sums move as they were)
        exe.run(main, feed={"x": X, "y": Y}, scope=scope)
        w = np.array(scope.vars["w"], np.float64)
        updates, acc = updates + 1, acc + 1
        new1 = s1 + w
        if acc >= 2 and acc >= min(3, updates * 0.5):
            s3, new1, s2, old, acc = s1 + s2, np.zeros_like(s1), np.zeros_like(s2), acc, 0
        s1 = new1
    with paddle.static.scope_guard(scope), average.apply(exe):
        np.testing.assert_allclose(scope.vars["w"], (s1 + s2 + s3) / (acc + old), rtol=1e-5)
    np.testing.assert_array_equal(scope.vars["w"], w.astype("float32"))
    assert [op.type for op in main.global_block().ops][-1] == "average_accumulates"


# -- RecomputeOptimizer ------------------------------------------------------------------------------


def _deep_mlp(recompute: bool, dropout: bool = False):
    from fleetgraph.ir import Program, program_guard, unique_name

    main, startup = Program(), Program()
    main.random_seed = startup.random_seed = 5
    with program_guard(main, startup), unique_name.guard():
        x = paddle.static.data(name="x", shape=[-1, 4], dtype="float32")
        y = paddle.static.data(name="y", shape=[-1, 1], dtype="float32")
        h1 = paddle.static.nn.fc(x, 8, activation="relu")
        h2 = paddle.static.nn.fc(h1, 8, activation="relu")
        if dropout:
            h2 = paddle.nn.functional.dropout(h2, 0.3)
        h3 = paddle.static.nn.fc(h2, 8, activation="relu")
        loss = paddle.mean(paddle.nn.functional.square_error_cost(paddle.static.nn.fc(h3, 1), y))
        opt = paddle.optimizer.SGD(0.1)
        if recompute:
            opt = paddle.incubate.optimizer.RecomputeOptimizer(opt)
            opt._set_checkpoints([h1, h2])
        opt.minimize(loss)
    return main, startup, loss


# Paddle 2.6.2 on this model (checkpoints fc_0.tmp_2 and fc_1.tmp_2): each segment's mul and
# elementwise_add run again, outputs renamed '.subprog_k', right before the segment's gradient ops
PADDLE_RECOMPUTE_OPS = (
    "mul elementwise_add relu mul elementwise_add relu mul elementwise_add relu mul elementwise_add "
    "elementwise_sub square reduce_mean fill_constant reduce_mean_grad square_grad elementwise_sub_grad "
    "elementwise_add_grad mul_grad relu_grad elementwise_add_grad mul_grad mul elementwise_add relu_grad "
    "elementwise_add_grad mul_grad mul elementwise_add relu_grad elementwise_add_grad mul_grad " + "sgd " * 8
).split()


def test_recompute_builds_paddles_program():
    main = _deep_mlp(recompute=True)[0]
    ops = main.global_block().ops
    assert [op.type for op in ops] == PADDLE_RECOMPUTE_OPS
    again = [op for op in ops if op.type == "mul" and op.attrs["op_role"] & OpRole.Backward]
    assert [op.output("Out") for op in again] == [["fc_1.tmp_0.subprog_0"], ["fc_0.tmp_0.subprog_1"]]
    add_grads = [op for op in ops if op.type == "elementwise_add_grad"]
    assert add_grads[-2].input("X") == ["fc_1.tmp_0.subprog_0"]  # the segment's gradients read the recomputed value


@pytest.mark.parametrize("dropout", [False, True], ids=["plain", "dropout"])
def test_recompute_trains_to_the_bit_as_the_inner_optimizer(dropout):
    rng = np.random.default_rng(0)
    feeds = [{"x": rng.normal(size=(16, 4)).astype("float32"), "y": rng.normal(size=(16, 1)).astype("float32")}]
    results = {}
    for recompute in (False, True):
        main, startup, loss = _deep_mlp(recompute, dropout)
        losses, scope = train(main, startup, feeds * 5, [loss])
        params = {p.name: np.array(scope.vars[p.name]) for p in main.all_parameters()}
        results[recompute] = ([float(np.asarray(v[0]).reshape(-1)[0]) for v in losses], params)
    assert results[True][0] == results[False][0]
    for name, value in results[False][1].items():
        np.testing.assert_array_equal(results[True][1][name], value, err_msg=name)


def test_recompute_without_checkpoints_says_so():
    from fleetgraph.ir import FleetgraphError

    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data(name="x", shape=[-1, 4], dtype="float32")
        loss = paddle.mean(paddle.static.nn.fc(x, 1))
        with pytest.raises(FleetgraphError, match=r"no checkpoints; call _set_checkpoints"):
            paddle.incubate.optimizer.RecomputeOptimizer(paddle.optimizer.SGD(0.1)).minimize(loss)
    assert fluid.optimizer.RecomputeOptimizer is paddle.incubate.optimizer.RecomputeOptimizer
