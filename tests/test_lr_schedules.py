"""Learning-rate schedules: Fluid's decay layers (ops over a global step counter) give the formula's
rate at every step; Paddle 2.x's schedulers give their formulas and, handed to an optimizer, set the
rate each run of a static program."""

from __future__ import annotations

import math

import numpy as np
import pytest
from models import fit_a_line_2x

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.ir import OpRole, Program, program_guard, unique_name

STEPS = 12

FLUID = {
    "exponential": (
        lambda: fluid.layers.exponential_decay(0.5, 4, 0.8),
        lambda t: 0.5 * 0.8 ** (t / 4),
    ),
    "exponential_staircase": (
        lambda: fluid.layers.exponential_decay(0.5, 4, 0.8, staircase=True),
        lambda t: 0.5 * 0.8 ** (t // 4),
    ),
    "natural_exp": (
        lambda: fluid.layers.natural_exp_decay(0.5, 3, 0.5),
        lambda t: 0.5 * math.exp(-0.5 * t / 3),
    ),
    "inverse_time_staircase": (
        lambda: fluid.layers.inverse_time_decay(0.5, 3, 0.5, staircase=True),
        lambda t: 0.5 / (1 + 0.5 * (t // 3)),
    ),
    "polynomial": (
        lambda: fluid.layers.polynomial_decay(0.5, 8, end_learning_rate=0.01, power=2.0),
        lambda t: (0.5 - 0.01) * (1 - min(t, 8) / 8) ** 2 + 0.01,
    ),
    "polynomial_cycle": (
        lambda: fluid.layers.polynomial_decay(0.5, 5, end_learning_rate=0.01, cycle=True),
        lambda t: (0.5 - 0.01) * (1 - t / (5 * max(math.ceil(t / 5), 1))) + 0.01,
    ),
    "piecewise": (
        lambda: fluid.layers.piecewise_decay([3, 7], [1.0, 0.5, 0.1]),
        lambda t: 1.0 if t < 3 else 0.5 if t < 7 else 0.1,
    ),
    "noam": (
        lambda: fluid.layers.noam_decay(64, 4, learning_rate=2.0),
        lambda t: 2.0 * 64**-0.5 * min((t + 1) ** -0.5, 4**-1.5 * (t + 1)),
    ),
    "cosine": (
        lambda: fluid.layers.cosine_decay(0.5, 2, 6),
        lambda t: 0.5 * 0.5 * (math.cos((t // 2) * math.pi / 6) + 1),
    ),
    "linear_warmup": (
        lambda: fluid.layers.linear_lr_warmup(0.5, 5, 0.0, 0.4),
        lambda t: 0.4 * t / 5 if t < 5 else 0.5,
    ),
    "linear_warmup_of_a_decay": (
        lambda: fluid.layers.linear_lr_warmup(fluid.layers.exponential_decay(0.5, 4, 0.8), 5, 0.1, 0.4),
        lambda t: 0.1 + 0.3 * t / 5 if t < 5 else 0.5 * 0.8 ** (t / 4),
    ),
}


def _rates(make_lr, steps=STEPS):
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        lr = make_lr()
    scope = paddle.static.Scope()
    exe = paddle.static.Executor()
    exe.run(startup, scope=scope)
    return [float(exe.run(main, fetch_list=[lr], scope=scope)[0]) for _ in range(steps)], main


@pytest.mark.parametrize("name", sorted(FLUID))
def test_a_fluid_decay_gives_the_formulas_rate_at_every_step(name):
    make_lr, formula = FLUID[name]
    rates, _ = _rates(make_lr)
    np.testing.assert_allclose(rates, [formula(t) for t in range(STEPS)], rtol=1e-6, atol=1e-7)


def test_decay_ops_share_one_counter_incremented_first_and_carry_the_lr_role():
    def two():
        return fluid.layers.exponential_decay(0.5, 4, 0.8), fluid.layers.cosine_decay(0.5, 2, 6)

    _, main = _rates(lambda: two()[0], steps=1)
    ops = main.global_block().ops
    assert ops[0].type == "increment" and ops[0].input("X") == ["@LR_DECAY_COUNTER@"]
    assert all(op.attrs["op_role"] == int(OpRole.LRSched) for op in ops)
    main2, startup2 = Program(), Program()
    with program_guard(main2, startup2), unique_name.guard():
        two()
    assert [op.type for op in main2.global_block().ops].count("increment") == 1
    (init,) = [op for op in startup2.global_block().ops if "@LR_DECAY_COUNTER@" in op.output_arg_names]
    assert init.attrs["value"] == -1.0 and init.attrs["dtype"] == "int64"


def test_piecewise_decay_needs_one_more_value_than_boundaries():
    with pytest.raises(ValueError, match="2 boundaries need 3 values; got 2"):
        _rates(lambda: fluid.layers.piecewise_decay([3, 7], [1.0, 0.5]))


def test_sgd_with_a_decayed_rate_steps_by_the_rate_of_each_step():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(8, 13)).astype("float32"), rng.normal(size=(8, 1)).astype("float32")
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        xv = fluid.layers.data(name="x", shape=[13])
        yv = fluid.layers.data(name="y", shape=[1])
        pred = fluid.layers.fc(xv, size=1, param_attr=fluid.ParamAttr(name="w"), bias_attr=False)
        loss = fluid.layers.mean(fluid.layers.square_error_cost(pred, yv))
        fluid.optimizer.SGD(fluid.layers.exponential_decay(0.1, 1, 0.5)).minimize(loss)
    scope = paddle.static.Scope()
    exe = paddle.static.Executor()
    exe.run(startup, scope=scope)
    w = np.array(scope.vars["w"], np.float64)
    for t in range(4):
        exe.run(main, feed={"x": x, "y": y}, scope=scope)
        w = w - 0.1 * 0.5**t * (2 * x.T @ (x @ w - y) / len(x))
    np.testing.assert_allclose(scope.vars["w"], w, rtol=1e-5, atol=1e-6)


# -- Paddle 2.x schedulers -------------------------------------------------------------------------------

LR = paddle.optimizer.lr
SCHEDULERS = {
    "StepDecay": (lambda: LR.StepDecay(0.5, step_size=3, gamma=0.5), lambda t: 0.5 * 0.5 ** (t // 3)),
    "MultiStepDecay": (
        lambda: LR.MultiStepDecay(0.5, milestones=[2, 5], gamma=0.1),
        lambda t: 0.5 * 0.1 ** sum(t >= m for m in (2, 5)),
    ),
    "PiecewiseDecay": (
        lambda: LR.PiecewiseDecay([3, 7], [1.0, 0.5, 0.1]),
        lambda t: 1.0 if t < 3 else 0.5 if t < 7 else 0.1,
    ),
    "ExponentialDecay": (lambda: LR.ExponentialDecay(0.5, gamma=0.9), lambda t: 0.5 * 0.9**t),
    "NaturalExpDecay": (lambda: LR.NaturalExpDecay(0.5, gamma=0.1), lambda t: 0.5 * math.exp(-0.1 * t)),
    "InverseTimeDecay": (lambda: LR.InverseTimeDecay(0.5, gamma=0.1), lambda t: 0.5 / (1 + 0.1 * t)),
    "PolynomialDecay": (
        lambda: LR.PolynomialDecay(0.5, decay_steps=8, end_lr=0.01, power=2.0),
        lambda t: (0.5 - 0.01) * (1 - min(t, 8) / 8) ** 2 + 0.01,
    ),
    "PolynomialDecay_cycle": (
        lambda: LR.PolynomialDecay(0.5, decay_steps=5, end_lr=0.01, cycle=True),
        lambda t: (0.5 - 0.01) * (1 - t / (5 * max(math.ceil(t / 5), 1))) + 0.01,
    ),
    "CosineAnnealingDecay": (
        lambda: LR.CosineAnnealingDecay(0.5, T_max=4, eta_min=0.1),
        lambda t: 0.1 + 0.4 * (1 + math.cos(math.pi * t / 4)) / 2,
    ),
    "LinearWarmup": (
        lambda: LR.LinearWarmup(LR.ExponentialDecay(0.5, gamma=0.9), warmup_steps=4, start_lr=0.0, end_lr=0.5),
        lambda t: 0.5 * t / 4 if t < 4 else 0.5 * 0.9 ** (t - 4),
    ),
    "NoamDecay": (
        lambda: LR.NoamDecay(d_model=64, warmup_steps=4, learning_rate=2.0),
        lambda t: 2.0 * 64**-0.5 * min(1 if t == 0 else t**-0.5, 4**-1.5 * t),
    ),
    "LambdaDecay": (lambda: LR.LambdaDecay(0.5, lambda e: 0.9**e), lambda t: 0.5 * 0.9**t),
    "MultiplicativeDecay": (lambda: LR.MultiplicativeDecay(0.5, lambda e: 0.9), lambda t: 0.5 * 0.9**t),
}


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_a_scheduler_gives_its_formulas_rate_after_each_step(name):
    make, formula = SCHEDULERS[name]
    scheduler, rates = make(), []
    for _ in range(STEPS):
        rates.append(scheduler())
        scheduler.step()
    np.testing.assert_allclose(rates, [formula(t) for t in range(STEPS)], rtol=1e-9)


def test_a_scheduler_resumes_from_its_state_dict():
    a = LR.StepDecay(0.5, step_size=2)
    for _ in range(5):
        a.step()
    b = LR.StepDecay(0.5, step_size=2)
    b.set_state_dict(a.state_dict())
    assert (b.last_epoch, b()) == (5, a()) and a.state_dict() == {"last_epoch": 5, "last_lr": a()}


def test_an_optimizer_with_a_scheduler_reads_its_rate_each_run():
    scheduler = LR.StepDecay(0.1, step_size=1, gamma=0.5)
    main, startup, *_ = fit_a_line_2x(optimizer=paddle.optimizer.SGD(learning_rate=scheduler))
    assert main.lr_scheduler is scheduler and main.clone().lr_scheduler is scheduler
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(8, 13)).astype("float32"), rng.normal(size=(8, 1)).astype("float32")
    scope = paddle.static.Scope()
    exe = paddle.static.Executor()
    exe.run(startup, scope=scope)
    w, b = np.array(scope.vars["fc_0.w_0"], np.float64), np.array(scope.vars["fc_0.b_0"], np.float64)
    for t in range(3):
        exe.run(main, feed={"x": x, "y": y}, scope=scope)
        r = x @ w + b - y
        w, b = w - 0.1 * 0.5**t * 2 * x.T @ r / len(x), b - 0.1 * 0.5**t * 2 * r.mean()
        scheduler.step()
    np.testing.assert_allclose(scope.vars["fc_0.w_0"], w, rtol=1e-5, atol=1e-6)
    assert paddle.optimizer.SGD(learning_rate=scheduler).get_lr() == pytest.approx(0.1 * 0.5**3)


def test_a_learning_rate_of_the_wrong_type_is_one_clear_error():
    with pytest.raises(TypeError, match="learning_rate expected a float, a schedule's Variable or an LRScheduler"):
        paddle.optimizer.Adam(learning_rate="0.1")
