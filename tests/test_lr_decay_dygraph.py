"""fluid.layers' learning-rate schedules in imperative mode return fluid.dygraph's decay objects, as
Paddle 1.8's do. The expected rates are the references of Paddle 1.8's test_learning_rate_scheduler.py
(test_fluid_dygraph_lr.py keeps them); test_NoamDecay and test_LinearLrWarmup are its dygraph tests."""

from __future__ import annotations

import numpy as np
import pytest
from dygraph_helpers import fresh_mode_and_names  # noqa: F401  (autouse)
from test_fluid_dygraph_lr import CASES, cosine_decay, noam_decay

import fleetgraph.fluid as fluid
from fleetgraph.ir import Program, program_guard


def piecewise_decay(global_step, boundaries, values):
    for boundary, value in zip(boundaries, values):
        if global_step < boundary:
            return value
    return values[-1]


LAYER_CASES = [  # (the layer, its kwargs, the fluid.dygraph class it returns, Paddle's reference)
    *((formula.__name__, kwargs, decay.__name__, formula) for decay, formula, kwargs in CASES),
    ("piecewise_decay", {"boundaries": [3, 6, 9], "values": [0.1, 0.2, 0.3, 0.4]}, "PiecewiseDecay", piecewise_decay),
    ("cosine_decay", {"learning_rate": 0.1, "step_each_epoch": 100, "epochs": 120}, "CosineDecay", cosine_decay),
    ("noam_decay", {"d_model": 0.01, "warmup_steps": 200, "learning_rate": 2.0}, "NoamDecay", noam_decay),
]


@pytest.mark.parametrize(("layer", "kwargs", "decay_class", "reference"), LAYER_CASES)
def test_schedule_in_imperative_mode_is_the_dygraph_decay_stepping_per_call(layer, kwargs, decay_class, reference):
    with fluid.dygraph.guard():
        lr = getattr(fluid.layers, layer)(**kwargs)
        assert type(lr) is getattr(fluid.dygraph, decay_class)
        first = 1 if layer == "noam_decay" else 0  # NoamDecay counts from 1, as Paddle's
        for step in range(first, first + 10):
            rate = lr()
            assert list(rate.shape) == [1] and rate.dtype == "float32"
            assert float(rate.numpy()[0]) == pytest.approx(reference(global_step=float(step), **kwargs), rel=1e-6)


def test_schedule_given_positionally_in_imperative_mode_keeps_paddle_argument_order():
    with fluid.dygraph.guard():
        noam = fluid.layers.noam_decay(0.01, 200, 2.0)  # learning_rate third, not NoamDecay's begin
        piecewise = fluid.layers.piecewise_decay([3, 6], [0.1, 0.2, 0.3])
    assert (noam.learning_rate, noam.step_num) == (2.0, 1)
    assert piecewise.step_num == 0


def test_noam_decay_in_imperative_mode():
    """Paddle 1.8's TestLearningRateDecayDygraph.test_NoamDecay."""
    with fluid.dygraph.guard():
        d_model, warmup_steps, learning_rate = 0.01, 200, 2.0
        lr = fluid.layers.noam_decay(d_model, warmup_steps, learning_rate)
        for step in range(1, 6):
            right_result = noam_decay(step, d_model, warmup_steps, learning_rate)
            assert float(lr().numpy()[0]) == pytest.approx(right_result, rel=1e-6)


def test_linear_lr_warmup_over_a_polynomial_decay_in_imperative_mode():
    """Paddle 1.8's TestLearningRateDecayDygraph.test_LinearLrWarmup: the inner decay steps with
    the warmup."""
    with fluid.dygraph.guard():
        lr = fluid.layers.polynomial_decay(learning_rate=1.0, decay_steps=10, end_learning_rate=0.0, power=1.0)
        lr = fluid.layers.linear_lr_warmup(learning_rate=lr, warmup_steps=2, start_lr=0.0, end_lr=1.0)
        assert isinstance(lr, fluid.dygraph.LinearLrWarmup)
        rates = [lr().numpy()[0].item() for _ in range(5)]
        np.testing.assert_allclose(rates, [0.5, 0.9, 0.8, 0.7, 0.6], rtol=1e-6)
        with pytest.raises(TypeError):
            fluid.layers.linear_lr_warmup(learning_rate="fake_lr", warmup_steps=2, start_lr=0.0, end_lr=1.0)


def test_piecewise_decay_in_imperative_mode_checks_its_values_first():
    with fluid.dygraph.guard(), pytest.raises(ValueError):
        fluid.layers.piecewise_decay([3, 6], [0.1, 0.2])


def test_imperative_schedule_drives_an_optimizer_step_by_step():
    """SGD with fluid.layers.exponential_decay in dygraph: each minimize uses the next rate."""
    with fluid.dygraph.guard():
        linear = fluid.dygraph.Linear(2, 1, bias_attr=False)
        weight = linear.weight.numpy().copy()
        lr = fluid.layers.exponential_decay(learning_rate=0.5, decay_steps=1, decay_rate=0.5)
        sgd = fluid.optimizer.SGD(learning_rate=lr, parameter_list=linear.parameters())
        x = fluid.dygraph.to_variable(np.ones([1, 2], dtype="float32"))
        for step in range(3):
            loss = fluid.layers.reduce_sum(linear(x))
            loss.backward()
            sgd.minimize(loss)
            linear.clear_gradients()
            weight -= 0.5 * 0.5**step  # d loss / d w is 1 for every weight
            np.testing.assert_allclose(linear.weight.numpy(), weight, rtol=1e-6)


def test_schedule_outside_imperative_mode_still_builds_ops():
    main, startup = Program(), Program()
    with program_guard(main, startup):
        lr = fluid.layers.noam_decay(0.01, 200, 2.0)
    assert isinstance(lr, fluid.framework.Variable)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    for step in range(1, 4):
        (value,) = exe.run(main, fetch_list=[lr])
        assert float(value[0]) == pytest.approx(noam_decay(step, 0.01, 200, 2.0), rel=1e-6)
