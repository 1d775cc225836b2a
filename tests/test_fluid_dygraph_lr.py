"""fluid.dygraph's learning-rate decays (Paddle 1.8): each step decay's rates against the Python
formulas of Paddle 1.8.5's test_learning_rate_scheduler.py, the epoch decays and ReduceLROnPlateau,
one optimizer step per call, and their state through save_dygraph/load_dygraph."""

from __future__ import annotations

import math

import numpy as np
import pytest
from dygraph_helpers import fresh_mode_and_names  # noqa: F401  (autouse)

import fleetgraph.fluid as fluid

dygraph = fluid.dygraph


def exponential_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False):
    exponent = global_step / decay_steps
    if staircase:
        exponent = math.floor(exponent)
    return learning_rate * decay_rate**exponent


def natural_exp_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False):
    exponent = float(global_step) / float(decay_steps)
    if staircase:
        exponent = math.floor(exponent)
    return learning_rate * math.exp(-1 * decay_rate * exponent)


def inverse_time_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False):
    temp = float(global_step) / float(decay_steps)
    if staircase:
        temp = math.floor(temp)
    return learning_rate / (1 + decay_rate * temp)


def polynomial_decay(learning_rate, global_step, decay_steps, end_learning_rate=0.0001, power=1.0, cycle=False):
    if cycle:
        div = math.ceil(global_step / float(decay_steps))
        if div == 0:
            div = 1
        decay_steps = decay_steps * div
    else:
        global_step = min(global_step, decay_steps)
    return (learning_rate - end_learning_rate) * (
        (1 - float(global_step) / float(decay_steps)) ** power
    ) + end_learning_rate


def cosine_decay(global_step, learning_rate, step_each_epoch, epochs):
    cur_epoch = math.floor(global_step / step_each_epoch)
    return learning_rate * 0.5 * (math.cos(cur_epoch * math.pi / epochs) + 1)


def noam_decay(global_step, d_model, warmup_steps, learning_rate=1.0):
    a = math.pow(global_step, -0.5)
    b = math.pow(warmup_steps, -1.5) * global_step
    return learning_rate * math.pow(d_model, -0.5) * min(a, b)


COMMON = {"learning_rate": 1.0, "decay_steps": 5, "decay_rate": 0.5}
CASES = [
    (dygraph.ExponentialDecay, exponential_decay, dict(COMMON, staircase=True)),
    (dygraph.ExponentialDecay, exponential_decay, dict(COMMON, staircase=False)),
    (dygraph.NaturalExpDecay, natural_exp_decay, dict(COMMON, staircase=True)),
    (dygraph.NaturalExpDecay, natural_exp_decay, dict(COMMON, staircase=False)),
    (dygraph.InverseTimeDecay, inverse_time_decay, dict(COMMON, staircase=True)),
    (dygraph.InverseTimeDecay, inverse_time_decay, dict(COMMON, staircase=False)),
    (dygraph.PolynomialDecay, polynomial_decay, {"learning_rate": 1.0, "decay_steps": 5, "cycle": True}),
    (dygraph.PolynomialDecay, polynomial_decay, {"learning_rate": 1.0, "decay_steps": 5, "cycle": False}),
]


@pytest.mark.parametrize("decay, formula, kwargs", CASES, ids=lambda v: getattr(v, "__name__", str(v)))
def test_each_call_gives_the_rate_of_its_step_then_advances(decay, formula, kwargs):
    with dygraph.guard():
        lr = decay(**kwargs)
        for step in range(12):
            rate = lr()
            assert rate.shape == [1] and rate.dtype == "float32"
            assert rate.numpy()[0] == pytest.approx(formula(global_step=float(step), **kwargs), rel=1e-6)


def test_piecewise_cosine_and_noam_decays_follow_paddles_formulas():
    with dygraph.guard():
        piecewise = dygraph.PiecewiseDecay([3, 6], [1.0, 0.5, 0.1], begin=0)
        assert [float(piecewise()) for _ in range(8)] == pytest.approx([1.0] * 3 + [0.5] * 3 + [0.1] * 2)
        cosine = dygraph.CosineDecay(0.1, step_each_epoch=2, epochs=5)
        assert [float(cosine()) for _ in range(6)] == pytest.approx([cosine_decay(s, 0.1, 2, 5) for s in range(6)])
        noam = dygraph.NoamDecay(0.01, 200, learning_rate=2.0)  # its steps count from 1
        assert [float(noam()) for _ in range(5)] == pytest.approx([noam_decay(s, 0.01, 200, 2.0) for s in range(1, 6)])


def test_linear_warmup_ramps_then_hands_over_to_a_decay_called_every_step():
    with dygraph.guard():
        decay = dygraph.PolynomialDecay(learning_rate=1.0, decay_steps=10, end_learning_rate=0.0, power=1.0)
        lr = dygraph.LinearLrWarmup(learning_rate=decay, warmup_steps=2, start_lr=0.0, end_lr=1.0)
        assert [float(lr()) for _ in range(5)] == pytest.approx([0.5, 0.9, 0.8, 0.7, 0.6])
        offset = dygraph.LinearLrWarmup(0.3, warmup_steps=4, start_lr=0.1, end_lr=0.5)
        assert [float(offset()) for _ in range(5)] == pytest.approx([0.2, 0.3, 0.4, 0.3, 0.3])
        with pytest.raises(TypeError):
            dygraph.LinearLrWarmup(learning_rate="fake_lr", warmup_steps=2, start_lr=0.0, end_lr=1.0)


def test_epoch_decays_move_only_on_epoch():
    with dygraph.guard():
        step = dygraph.StepDecay(0.5, 3, 0.2)
        multi = dygraph.MultiStepDecay(0.5, [2, 4, 8], 0.2)
        lam = dygraph.LambdaDecay(0.5, lambda e: 0.95**e)
        for epoch in range(10):
            assert float(step()) == pytest.approx(0.5 * 0.2 ** (epoch // 3))
            assert float(step()) == pytest.approx(0.5 * 0.2 ** (epoch // 3))  # calling does not advance
            assert float(multi()) == pytest.approx(0.5 * 0.2 ** sum(epoch >= m for m in (2, 4, 8)))
            assert float(lam()) == pytest.approx(0.5 * 0.95**epoch)
            for decay in (step, multi, lam):
                decay.epoch()
        step.epoch(1)
        assert step.epoch_num == 1 and float(step()) == pytest.approx(0.5)


@pytest.mark.parametrize(
    "make, error",
    [
        (lambda: dygraph.MultiStepDecay(0.5, [30, 50, 20], 0.1), ValueError),
        (lambda: dygraph.MultiStepDecay(0.5, [20, 30, 50], 1), ValueError),
        (lambda: dygraph.MultiStepDecay("test", [20, 30, 50]), TypeError),
        (lambda: dygraph.MultiStepDecay(-1, [20, 30, 50]), ValueError),
        (lambda: dygraph.StepDecay(0.5, "test", 0.1), TypeError),
        (lambda: dygraph.StepDecay(0.5, 20, 2), ValueError),
        (lambda: dygraph.LambdaDecay(0.5, "test"), TypeError),
        (lambda: dygraph.ReduceLROnPlateau(1.0, mode="up"), ValueError),
        (lambda: dygraph.ReduceLROnPlateau(1.0, decay_rate=1.5), ValueError),
    ],
)
def test_bad_arguments_are_refused_as_paddle_refuses_them(make, error):
    with pytest.raises(error):
        make()


def _plateau_reference(losses, lr, decay_rate, patience, cooldown, threshold=1e-4):
    """ReduceLROnPlateau's rule in plain Python ('min', relative threshold)."""
    best, bad, cool, rates = None, 0, 0, []
    for loss in losses:
        if cool > 0:
            cool -= 1
        else:
            if best is None or loss < best - best * threshold:
                best, bad = loss, 0
            else:
                bad += 1
            if bad > patience:
                cool, bad, lr = cooldown, 0, max(lr * decay_rate, 0.0)
        rates.append(lr)
    return rates


def test_reduce_lr_on_plateau_decays_after_patience_then_cools_down():
    losses = [5.0, 4.0, 4.0, 4.0, 4.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 2.0]
    with dygraph.guard():
        lr = dygraph.ReduceLROnPlateau(1.0, decay_rate=0.5, patience=2, cooldown=1)
        rates = []
        for loss in losses:
            lr.step(dygraph.to_variable(np.array([loss], "float32")))
            rates.append(float(lr()))
        with pytest.raises(ValueError, match="shape"):
            lr.step(dygraph.to_variable(np.ones([2], "float32")))
    assert rates == pytest.approx(_plateau_reference(losses, 1.0, 0.5, 2, 1))
    assert rates[-1] < 1.0


def _train(model, opt, steps):
    x = dygraph.to_variable(np.ones([2, 3], "float32"))
    for _ in range(steps):
        loss = fluid.layers.reduce_mean(model(x))
        loss.backward()
        opt.minimize(loss)
        model.clear_gradients()


def test_an_optimizer_takes_one_rate_per_step_from_a_decay():
    with dygraph.guard():
        linear = dygraph.Linear(3, 1)
        decay = dygraph.PiecewiseDecay([1, 2], [1.0, 0.5, 0.25], begin=0)
        sgd = fluid.optimizer.SGD(learning_rate=decay, parameter_list=linear.parameters())
        moves = []
        for _ in range(3):
            before = linear.bias.numpy()
            _train(linear, sgd, 1)
            moves.append(float((before - linear.bias.numpy())[0]))  # d mean / d bias = 1
        assert moves == pytest.approx([1.0, 0.5, 0.25]) and decay.step_num == 3


def test_decay_state_resumes_through_save_and_load_dygraph(tmp_path):
    path = str(tmp_path / "opt")
    with dygraph.guard():
        linear = dygraph.Linear(3, 3)
        adam = fluid.optimizer.Adam(
            learning_rate=dygraph.ExponentialDecay(0.1, 10000, 0.5, staircase=True), parameter_list=linear.parameters()
        )
        _train(linear, adam, 4)
        dygraph.save_dygraph(adam.state_dict(), path)
        _, state = dygraph.load_dygraph(path)
        decay = dygraph.ExponentialDecay(0.1, 10000, 0.5, staircase=True)
        fluid.optimizer.Adam(learning_rate=decay, parameter_list=linear.parameters()).set_dict(state)
        assert decay.step_num == 4
        step = dygraph.StepDecay(0.5, step_size=3)
        for _ in range(4):
            step.epoch()
        plateau = dygraph.ReduceLROnPlateau(1.0)
        plateau.step(dygraph.to_variable(np.array([2.5], "float32")))
        for saved in (step, plateau):
            fresh = type(saved)(0.5, 3) if isinstance(saved, dygraph.StepDecay) else dygraph.ReduceLROnPlateau(1.0)
            fresh.set_dict(saved.state_dict())
            assert fresh.state_dict() == saved.state_dict() and float(fresh()) == float(saved())
        assert plateau.state_dict()["best_loss"] == 2.5
        with pytest.raises(RuntimeError, match="step_num"):
            dygraph.ExponentialDecay(0.1, 10, 0.5).set_dict({})
