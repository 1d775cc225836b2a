"""Random ops, initializers, ParamAttr and Variable's arithmetic operators."""

from __future__ import annotations

import math

import numpy as np
import pytest

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.ir import Program, op_summary, program_guard, unique_name


def _init(initializer, shape, seed=5):
    """The value an initializer gives a parameter of `shape`."""
    main, startup = Program(), Program()
    startup.random_seed = seed
    with program_guard(main, startup), unique_name.guard():
        param = fluid.layers.create_parameter(shape, "float32", attr=fluid.ParamAttr(name="p", initializer=initializer))
    scope = paddle.static.Scope()
    paddle.static.Executor().run(startup, scope=scope)
    return np.array(scope.vars[param.name]), startup


def test_random_ops_are_seeded_and_in_range():
    a, _ = _init(fluid.initializer.Uniform(-0.5, 0.25), [200, 50])
    b, _ = _init(fluid.initializer.Uniform(-0.5, 0.25), [200, 50])
    np.testing.assert_array_equal(a, b)
    assert a.min() >= -0.5 and a.max() < 0.25 and abs(a.mean() + 0.125) < 0.01
    n, _ = _init(fluid.initializer.Normal(1.0, 2.0), [200, 50])
    assert abs(n.mean() - 1.0) < 0.1 and abs(n.std() - 2.0) < 0.1
    t, _ = _init(paddle.nn.initializer.TruncatedNormal(0.0, 1.0), [200, 50])
    assert np.abs(t).max() <= 2.0 and abs(t.std() - 0.88) < 0.05  # std of N(0,1) cut at 2 sigma
    other, _ = _init(fluid.initializer.Uniform(-0.5, 0.25), [200, 50], seed=6)
    assert not np.array_equal(a, other)


def test_xavier_and_msra_use_fan_in_and_fan_out():
    x, startup = _init(fluid.initializer.Xavier(), [300, 100])
    limit = math.sqrt(6.0 / 400)
    assert op_summary(startup) == "block0: uniform_random"
    assert startup.global_block().ops[0].attrs["max"] == pytest.approx(limit)
    assert x.max() <= limit and x.max() > 0.95 * limit
    k, _ = _init(paddle.nn.initializer.KaimingNormal(), [8, 4, 3, 3])  # conv filter: fan_in = 4 * 9
    assert abs(k.std() - math.sqrt(2.0 / 36)) < 0.03
    c, _ = _init(fluid.initializer.Constant(0.25), [3])
    assert c.tolist() == [0.25, 0.25, 0.25]


def test_param_attr_names_and_freezes_parameters():
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = fluid.layers.data(name="x", shape=[4])
        fluid.layers.fc(x, 2, param_attr=fluid.ParamAttr(name="my_w", trainable=False), bias_attr=False)
    params = main.all_parameters()
    assert [p.name for p in params] == ["my_w"] and not params[0].trainable and params[0].stop_gradient
    assert op_summary(main) == "block0: mul"


def test_variable_operators_append_elementwise_and_scale_ops():
    main = Program()
    with program_guard(main, Program()):
        a = paddle.static.data(name="a", shape=[2])
        b = paddle.static.data(name="b", shape=[2])
        out = (a + b) * 2.0 - a / b + 1.0 - (-a)
    assert op_summary(main) == (
        "block0: elementwise_add scale elementwise_div elementwise_sub scale scale elementwise_sub"
    )
    (got,) = paddle.static.Executor().run(
        main,
        feed={"a": np.array([1.0, 2.0], "float32"), "b": np.array([4.0, 8.0], "float32")},
        fetch_list=[out],
        scope=paddle.static.Scope(),
    )
    np.testing.assert_allclose(got, [(1 + 4) * 2 - 1 / 4 + 1 + 1, (2 + 8) * 2 - 2 / 8 + 1 + 2])


def test_auc_accumulates_over_batches_and_batch_auc_covers_the_window():
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        predict = paddle.static.data(name="p", shape=[None, 2])
        label = paddle.static.data(name="l", shape=[None, 1], dtype="int64")
        auc, batch_auc, stats = fluid.layers.auc(predict, label, num_thresholds=100, slide_steps=1)
    scope = paddle.static.Scope()
    exe = paddle.static.Executor()
    exe.run(startup, scope=scope)
    rng = np.random.default_rng(0)
    scores, labels = [], []

    def pairwise(s, y):  # share of (positive, negative) pairs ranked right, ties half
        b = np.floor(s * 100)
        pos, neg = b[y == 1], b[y == 0]
        return ((pos[:, None] > neg).sum() + 0.5 * (pos[:, None] == neg).sum()) / (len(pos) * len(neg))

    for _ in range(3):
        y = rng.integers(0, 2, size=32)
        s = np.clip(0.3 * y + rng.uniform(0, 0.7, size=32), 0, 0.999)
        scores.append(s)
        labels.append(y)
        got, got_batch = exe.run(
            main,
            feed={"p": np.stack([1 - s, s], 1).astype("float32"), "l": y.reshape(-1, 1)},
            fetch_list=[auc, batch_auc],
            scope=scope,
        )
        np.testing.assert_allclose(got, [pairwise(np.concatenate(scores), np.concatenate(labels))], rtol=1e-12)
        np.testing.assert_allclose(got_batch, [pairwise(s, y)], rtol=1e-12)
    counted = sum(int(np.array(scope.vars[v.name]).sum()) for v in stats[2:])  # global positives + negatives
    assert counted == 96 == sum(len(y) for y in labels)


def test_reshape_infers_minus_one_past_a_copied_unknown_batch_dim():
    """Regression: [-1, 8, 1, 1] -> [0, -1] used to give [-1, -1], so an fc after flatten failed."""
    main = Program()
    with program_guard(main, Program()):
        x = paddle.static.data(name="x", shape=[None, 8, 1, 1])
        assert fluid.layers.reshape(x, [0, -1]).shape == (-1, 8)
        assert paddle.flatten(x, start_axis=1).shape == (-1, 8)
        assert fluid.layers.reshape(x, [-1, 4]).shape == (-1, 4)
        assert fluid.layers.reshape(x, [0, 2, -1]).shape == (-1, 2, 4)


@pytest.mark.parametrize("op_type", ["uniform_random", "gaussian_random", "truncated_gaussian_random"])
def test_any_rows_of_a_random_init_equal_the_whole_draw(op_type):
    """A pserver or a lazily grown table draws only some rows; they must be the single process's."""
    from fleetgraph.ops.counter_rng import draw_full, draw_rows
    from fleetgraph.ops.rng import generator_for

    attrs = {"min": -0.5, "max": 0.5, "mean": 1.0, "std": 0.5}
    whole = draw_full(op_type, attrs, generator_for(7, "emb"), (3000, 4), "float32")
    rows = np.array([2999, 0, 1234, 1234])
    np.testing.assert_array_equal(draw_rows(op_type, attrs, generator_for(7, "emb"), rows, 4, "float32"), whole[rows])
    assert not np.array_equal(whole, draw_full(op_type, attrs, generator_for(7, "emb2"), (3000, 4), "float32"))
