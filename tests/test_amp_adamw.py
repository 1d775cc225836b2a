"""paddle.optimizer.AdamW (decoupled weight decay scaled by the learning rate), the 2.0 scheduler
ReduceOnPlateau, and paddle.amp (auto_cast, GradScaler) as Paddle 2.0 behaves on a CPU build."""

from __future__ import annotations

import numpy as np
import pytest
from dygraph_helpers import fresh_mode_and_names  # noqa: F401  (autouse)

import fleetgraph as paddle

_W0 = np.arange(6).reshape(3, 2).astype("float32") / 10
_X = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]], "float32")
# Paddle 3.3.1 after three AdamW steps, lr 0.1, weight_decay 0.05, the bias not decayed (its Adam
# differs from fleetgraph's, Paddle 2.0's, by ~2e-6 there)
_PADDLE_W = [[-0.23802988, -0.18048178], [-0.08980609, 0.00443523], [0.10534843, 0.20062505]]
_PADDLE_B = [0.20888506, 0.20614742]


def _adamw_numpy(steps, lr=0.1, coeff=0.05, beta1=0.9, beta2=0.999, eps=1e-8):
    w, b = _W0.copy(), np.full(2, 0.5, "float32")
    state = {k: [np.zeros_like(v), np.zeros_like(v)] for k, v in (("w", w), ("b", b))}
    for t in range(1, steps + 1):
        out = _X @ w + b
        dout = 2 * out / out.size
        grads = {"w": _X.T @ dout, "b": dout.sum(0)}
        for key, decays in (("w", True), ("b", False)):
            p = w if key == "w" else b
            if decays:
                p *= 1 - lr * coeff
            m, v = state[key]
            m[:] = beta1 * m + (1 - beta1) * grads[key]
            v[:] = beta2 * v + (1 - beta2) * grads[key] ** 2
            lr_t = lr * np.sqrt(1 - beta2**t) / (1 - beta1**t)
            p -= lr_t * m / (np.sqrt(v) + eps * np.sqrt(1 - beta2**t))
    return w, b


def _linear():
    return paddle.nn.Linear(
        3,
        2,
        weight_attr=paddle.ParamAttr(initializer=paddle.fluid.initializer.NumpyArrayInitializer(_W0)),
        bias_attr=paddle.ParamAttr(initializer=paddle.nn.initializer.Constant(0.5)),
    )


def _weights_only(name):
    return not name.split(".")[-1].startswith("b")


def test_adamw_decays_before_the_adam_step_in_dynamic_mode():
    lin = _linear()
    opt = paddle.optimizer.AdamW(
        0.1, parameters=lin.parameters(), weight_decay=0.05, apply_decay_param_fun=_weights_only
    )
    x = paddle.to_tensor(_X)
    for _ in range(3):
        loss = (lin(x) ** 2).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
    w, b = _adamw_numpy(3)
    np.testing.assert_allclose(lin.weight.numpy(), w, atol=5e-6)
    np.testing.assert_allclose(lin.bias.numpy(), b, atol=5e-6)
    np.testing.assert_allclose(lin.weight.numpy(), _PADDLE_W, atol=5e-6)
    np.testing.assert_allclose(lin.bias.numpy(), _PADDLE_B, atol=5e-6)
    assert str(opt) == f"Weight Decay, params: {lin.weight.name}"


def test_adamw_static_program_with_a_scheduler_decays_by_the_current_rate():
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [2, 3], "float32")
        lin = _linear()
        out = lin(x)
        loss = paddle.fluid.layers.reduce_mean(out * out)
        scheduler = paddle.optimizer.lr.StepDecay(0.1, step_size=10)
        opt = paddle.optimizer.AdamW(scheduler, weight_decay=0.05, apply_decay_param_fun=_weights_only)
        opt.minimize(loss)
    exe = paddle.static.Executor(paddle.CPUPlace())
    scope = paddle.static.Scope()
    exe.run(startup, scope=scope)
    for _ in range(3):
        exe.run(main, feed={"x": _X}, scope=scope)
    w, b = _adamw_numpy(3)
    np.testing.assert_allclose(np.asarray(scope.vars[lin.weight.name]), w, atol=5e-6)
    np.testing.assert_allclose(np.asarray(scope.vars[lin.bias.name]), b, atol=5e-6)


def test_adamw_checks_its_arguments_as_paddle():
    with pytest.raises(TypeError, match="coeff should be float"):
        paddle.optimizer.AdamW(0.1, weight_decay=1)
    with pytest.raises(ValueError, match="beta1"):
        paddle.optimizer.AdamW(0.1, beta1=1.0)


def test_reduce_on_plateau_cuts_the_rate_after_patience_then_cools_down(capsys):
    sched = paddle.optimizer.lr.ReduceOnPlateau(1.0, factor=0.5, patience=1, cooldown=1, threshold=0.1, verbose=True)
    rates = []
    for metric in [1.0, 0.95, 0.95, 0.5, 0.6, 0.6, 0.6, 0.6, 0.4]:
        sched.step(metric)
        rates.append(sched())
    # Paddle's answer (3.3.1, the same algorithm as 2.0's)
    assert rates == [1.0, 1.0, 0.5, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25]
    assert sched.state_dict() == {
        "cooldown_counter": 0, "best": 0.4, "num_bad_epochs": 0, "last_epoch": 9, "last_lr": 0.25,
    }  # fmt: skip
    assert "Epoch 3: ReduceOnPlateau set learning rate to 0.5." in capsys.readouterr().out


def test_reduce_on_plateau_in_max_mode_takes_tensors_and_stops_at_min_lr():
    sched = paddle.optimizer.lr.ReduceOnPlateau(1.0, mode="max", threshold_mode="abs", threshold=0.5, patience=0,
                                                min_lr=0.3)  # fmt: skip
    lin = paddle.nn.Linear(2, 1)
    opt = paddle.optimizer.SGD(learning_rate=sched, parameters=lin.parameters())
    rates = []
    for metric in [1.0, 1.4, 2.0, 2.2, 2.3]:
        sched.step(paddle.to_tensor([metric]))
        rates.append(opt.get_lr())
    assert rates == [1.0, 0.3, 0.3, 0.3, 0.3] and sched.best == 2.0
    resumed = paddle.optimizer.lr.ReduceOnPlateau(1.0, mode="max")
    resumed.set_state_dict(sched.state_dict())
    assert resumed() == 0.3 and resumed.last_epoch == 5
    with pytest.raises(ValueError, match="metrics.shape"):
        sched.step(paddle.to_tensor([1.0, 2.0]))
    with pytest.raises(ValueError, match="gamma should be < 1.0"):
        paddle.optimizer.lr.ReduceOnPlateau(1.0, factor=1.0)
    assert paddle.optimizer.lr.Tensor is paddle.Tensor


def test_auto_cast_on_a_cpu_place_warns_and_keeps_float32():
    lin = _linear()
    x = paddle.to_tensor(_X)
    with pytest.warns(UserWarning, match="amp_guard can only be enabled on CUDAPlace, current place is CPUPlace"):
        with paddle.amp.auto_cast(custom_white_list={"elementwise_add"}):
            out = lin(x) + lin(x)
    assert out.dtype == paddle.float32
    np.testing.assert_allclose(out.numpy(), 2 * (_X @ _W0 + 0.5), rtol=1e-6)
    with paddle.amp.auto_cast(enable=False):
        assert lin(x).dtype == paddle.float32
    with pytest.raises(ValueError, match="Custom white list overlap custom black list"):
        paddle.amp.auto_cast(custom_white_list={"conv2d"}, custom_black_list=["conv2d"])


def test_auto_cast_and_grad_scaler_are_dygraph_only():
    paddle.enable_static()
    with pytest.raises(AssertionError, match="We only support 'amp_guard\\(\\)' in dynamic graph mode"):
        paddle.amp.auto_cast()
    with pytest.raises(ValueError, match="not in imperative mode"):
        paddle.amp.GradScaler()


def test_grad_scaler_on_a_cpu_place_is_disabled_as_paddles():
    lin = _linear()
    opt = paddle.optimizer.SGD(0.1, parameters=lin.parameters())
    with pytest.warns(UserWarning, match="AmpScaler can only be enabled on CUDAPlace"):
        scaler = paddle.amp.GradScaler(init_loss_scaling=1024)
    loss = lin(paddle.to_tensor(_X)).mean()
    scaled = scaler.scale(loss)
    assert scaled is loss  # not multiplied by 1024: the scaler is off
    scaled.backward()
    grad = lin.weight.grad.numpy()
    scaler.minimize(opt, scaled)
    np.testing.assert_allclose(lin.weight.numpy(), _W0 - 0.1 * grad, rtol=1e-6)
    # an overflowing loss is not skipped: its inf gradient reaches the parameters, as on Paddle's CPU build
    opt.clear_grad()
    with np.errstate(over="ignore", invalid="ignore"):
        huge = scaler.scale(lin(paddle.to_tensor(_X * 1e38)).sum() * 1e38)
        huge.backward()
        scaler.minimize(opt, huge)
    assert not np.isfinite(lin.weight.numpy()).all()
    with pytest.raises(TypeError, match="AmpScaler.scale"):
        scaler.scale(1.0)


def test_reduce_on_plateau_sets_the_static_programs_rate_before_each_run():
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [2, 3], "float32")
        loss = paddle.fluid.layers.reduce_mean(_linear()(x))
        sched = paddle.optimizer.lr.ReduceOnPlateau(0.5, patience=0, factor=0.2)
        paddle.optimizer.SGD(sched).minimize(loss)
    exe, scope = paddle.static.Executor(paddle.CPUPlace()), paddle.static.Scope()
    exe.run(startup, scope=scope)
    rates = []
    for metric in [1.0, 2.0, 3.0]:
        (rate,) = exe.run(main, feed={"x": _X}, fetch_list=[sched._var_name], scope=scope)
        rates.append(float(rate[0]))
        sched.step(metric)
    np.testing.assert_allclose(rates, [0.5, 0.5, 0.1], rtol=1e-6)
