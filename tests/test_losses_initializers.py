"""The binary losses (log_loss, binary_cross_entropy) against values taken from Paddle 2.6.2, and the
initializers in their 2.x (`paddle.nn.initializer`) and Fluid (`fluid.initializer`) spellings."""

from __future__ import annotations

import numpy as np
import pytest

import fleetgraph as paddle
import fleetgraph.fluid as fluid
import fleetgraph.nn.functional as F
from fleetgraph.ir import KernelError, Program, ShapeError, op_summary, program_guard, unique_name

# Probabilities at and near the edges, where Paddle's epsilon (log_loss) and clipping (bce_loss) show.
EDGE_P = np.array([[0.0], [1e-50], [0.3], [1.0]])
EDGE_LABEL = np.array([[1.0], [1.0], [0.0], [0.0]])


def _run_loss(build, dtype="float64", weight=None, shape=(4, 1)):
    """Build `loss = build(p, label, w)` over data p, label, w; return (program, loss, d sum(loss) / d p)."""
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        p = paddle.static.data("p", list(shape), dtype)
        p.stop_gradient = False
        label = paddle.static.data("label", list(shape), dtype)
        w = paddle.static.data("w", list(shape), dtype)
        out = build(p, label, w)
        (grad,) = paddle.static.gradients([paddle.sum(out)], [p])
    feed = {"p": EDGE_P.astype(dtype), "label": EDGE_LABEL.astype(dtype), "w": np.full(shape, 2.0, dtype)}
    got = paddle.static.Executor().run(main, feed=feed, fetch_list=[out, grad], scope=paddle.static.Scope())
    return main, got[0], got[1]


def _forward_ops(program) -> str:
    ops = program.global_block().ops
    return " ".join(op.type for op in ops[: next(i for i, op in enumerate(ops) if op.type == "fill_constant")])


def test_log_loss_adds_epsilon_inside_both_logs_as_paddle():
    main, loss, grad = _run_loss(lambda p, label, w: F.log_loss(p, label), dtype="float32")
    assert _forward_ops(main) == "log_loss reduce_sum"
    # Paddle 2.6.2 on the same feed: -log(1e-4) at the edges, and gradients of 1 / 1e-4
    np.testing.assert_allclose(loss.ravel(), [9.21034, 9.21034, 0.3565321, 9.21034], rtol=1e-5)
    np.testing.assert_allclose(grad.ravel(), [-10000.0, -10000.0, 1.4283674, 10000.0], rtol=1e-5)


def test_log_loss_epsilon_is_an_argument():
    _, loss, _ = _run_loss(lambda p, label, w: F.log_loss(p, label, epsilon=0.5))
    np.testing.assert_allclose(loss[2, 0], -np.log(1 - 0.3 + 0.5))


def test_bce_clips_each_log_at_minus_100_as_paddle():
    main, loss, grad = _run_loss(lambda p, label, w: F.binary_cross_entropy(p, label, reduction="none"))
    assert _forward_ops(main) == "bce_loss reduce_sum"
    np.testing.assert_allclose(loss.ravel(), [100.0, 100.0, 0.35667494393873245, 100.0])
    # the gradient divides by max(p * (1 - p), 1e-12)
    np.testing.assert_allclose(grad.ravel(), [-1e12, -1e12, 1.4285714285714286, 1e12])


@pytest.mark.parametrize(
    "reduction, weighted, ops, value",
    [
        ("mean", False, "bce_loss reduce_mean", [75.08916873598469]),
        ("sum", False, "bce_loss reduce_sum", [300.35667494393874]),
        ("mean", True, "bce_loss elementwise_mul reduce_mean", [150.17833747196937]),
        ("none", True, "bce_loss elementwise_mul", [200.0, 200.0, 0.7133498878774649, 200.0]),
    ],
)
def test_binary_cross_entropy_weights_then_reduces_as_paddle(reduction, weighted, ops, value):
    def build(p, label, w):
        return F.binary_cross_entropy(p, label, weight=w if weighted else None, reduction=reduction)

    main, loss, _ = _run_loss(build)
    assert _forward_ops(main) == ops + " reduce_sum"  # the test's own sum follows
    np.testing.assert_allclose(loss.ravel(), value)


def test_binary_cross_entropy_names_its_last_output():
    main = Program()
    with program_guard(main, Program()), unique_name.guard():
        p = paddle.static.data("p", [-1, 1], "float32")
        out = F.binary_cross_entropy(p, p, reduction="sum", name="bce_total")
    assert out.name.startswith("bce_total")


def test_binary_cross_entropy_refuses_an_unknown_reduction_before_adding_ops():
    main = Program()
    with program_guard(main, Program()), unique_name.guard():
        p = paddle.static.data("p", [-1, 1], "float32")
        with pytest.raises(
            ValueError, match=r"binary_cross_entropy: reduction expected 'mean', 'sum' or 'none', got 'avg'"
        ):
            F.binary_cross_entropy(p, p, reduction="avg")
        with pytest.raises(paddle.FleetgraphError, match=r"weight expected a Variable or None, got ndarray"):
            F.binary_cross_entropy(p, p, weight=np.ones((2, 1)))
    assert op_summary(main) == "block0: "


def test_bce_refuses_values_outside_zero_one_at_run_time():
    main = Program()
    with program_guard(main, Program()), unique_name.guard():
        p = paddle.static.data("p", [-1, 1], "float32")
        label = paddle.static.data("label", [-1, 1], "float32")
        out = F.binary_cross_entropy(p, label, reduction="none")
    feed = {"p": np.array([[0.2], [1.5]], "float32"), "label": np.ones((2, 1), "float32")}
    with pytest.raises(KernelError, match=r"bce_loss: X is not a probability; expected values in \[0, 1\], got 1.5"):
        paddle.static.Executor().run(main, feed=feed, fetch_list=[out], scope=paddle.static.Scope())


@pytest.mark.parametrize(
    "p_shape, label_shape, label_dtype, message",
    [
        ([-1], [-1], "float32", r"Predicted 'p': expected shape \[N, 1\] \(one probability per row\), got \[-1\]"),
        ([-1, 3], [-1, 3], "float32", r"expected shape \[N, 1\]"),
        ([-1, 1], [-1, 2], "float32", r"Labels 'label' \[-1, 2\] differs from Predicted 'p' \[-1, 1\]"),
        ([-1, 1], [-1, 1], "int64", r"Labels 'label' is int64 and Predicted 'p' is float32; expected the same float"),
    ],
)
def test_log_loss_checks_shapes_and_dtypes_when_built(p_shape, label_shape, label_dtype, message):
    with program_guard(Program(), Program()), unique_name.guard():
        p = paddle.static.data("p", p_shape, "float32")
        label = paddle.static.data("label", label_shape, label_dtype)
        with pytest.raises(ShapeError, match=message):
            F.log_loss(p, label)


def test_log_loss_of_a_sigmoid_trains_as_the_wide_and_deep_model_uses_it():
    """mean(log_loss(sigmoid(x @ w), float(label))): one SGD step against the NumPy gradient."""
    rng = np.random.default_rng(3)
    x_val = rng.normal(size=(6, 3)).astype("float32")
    y_val = rng.integers(0, 2, size=(6, 1)).astype("int64")
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = paddle.static.data("x", [-1, 3], "float32")
        y = paddle.static.data("y", [-1, 1], "int64")
        w_init = paddle.nn.initializer.Constant(0.1)
        pred = F.sigmoid(
            paddle.static.nn.fc(x, 1, weight_attr=paddle.ParamAttr(name="w", initializer=w_init), bias_attr=False)
        )
        cost = paddle.mean(F.log_loss(pred, paddle.cast(y, "float32")))
        paddle.optimizer.SGD(learning_rate=0.5).minimize(cost)
    scope = paddle.static.Scope()
    exe = paddle.static.Executor()
    exe.run(startup, scope=scope)
    exe.run(main, feed={"x": x_val, "y": y_val}, fetch_list=[cost], scope=scope)

    w = np.full((3, 1), 0.1)
    p = 1 / (1 + np.exp(-(x_val @ w)))
    label = y_val.astype("float64")
    dp = (-label / (p + 1e-4) + (1 - label) / (1 - p + 1e-4)) / len(p)
    expected = w - 0.5 * x_val.T @ (dp * p * (1 - p))
    np.testing.assert_allclose(np.array(scope.vars["w"]), expected, rtol=1e-4)


@pytest.mark.skipif(
    not hasattr(fluid.layers, "log_loss"), reason="fleetgraph/layers/__init__.py does not export log_loss yet"
)
def test_fluid_layers_log_loss_is_the_same_op():
    main = Program()
    with program_guard(main, Program()), unique_name.guard():
        p = fluid.data("p", [-1, 1], "float32")
        loss = fluid.layers.log_loss(p, p, epsilon=0.01)
    op = main.global_block().ops[-1]
    assert (op.type, op.input("Predicted"), op.attrs["epsilon"]) == ("log_loss", ["p"], 0.01)
    assert loss.shape == (-1, 1)


# -- initializers ----------------------------------------------------------------------------------


def _init_op(initializer, shape=(4, 3)):
    """The init op an initializer appends for a parameter of `shape`."""
    startup = Program()
    with program_guard(Program(), startup), unique_name.guard():
        fluid.layers.create_parameter(list(shape), "float32", attr=fluid.ParamAttr(name="p", initializer=initializer))
    (op,) = startup.global_block().ops
    return op


@pytest.mark.parametrize(
    "initializer, op_type, attrs",
    [
        (paddle.nn.initializer.Normal(0.5, 2.0), "gaussian_random", {"mean": 0.5, "std": 2.0}),
        (paddle.nn.initializer.Normal(std=0.1), "gaussian_random", {"mean": 0.0, "std": 0.1}),
        (paddle.nn.initializer.TruncatedNormal(0.5, 2.0), "truncated_gaussian_random", {"mean": 0.5, "std": 2.0}),
        (paddle.nn.initializer.TruncatedNormal(mean=1.0), "truncated_gaussian_random", {"mean": 1.0, "std": 1.0}),
        (paddle.nn.initializer.Uniform(-0.5, 0.25), "uniform_random", {"min": -0.5, "max": 0.25}),
        (paddle.nn.initializer.Uniform(), "uniform_random", {"min": -1.0, "max": 1.0}),
        (paddle.nn.initializer.Constant(0.25), "fill_constant", {"value": 0.25}),
        (paddle.nn.initializer.Constant(), "fill_constant", {"value": 0.0}),
    ],
)
def test_nn_initializers_take_paddle_2x_arguments(initializer, op_type, attrs):
    op = _init_op(initializer)
    assert op.type == op_type
    assert {k: op.attrs[k] for k in attrs} == attrs


@pytest.mark.parametrize(
    "initializer, op_type, attrs",
    [
        (fluid.initializer.Normal(0.5, 2.0, 7), "gaussian_random", {"mean": 0.5, "std": 2.0, "seed": 7}),
        (fluid.initializer.NormalInitializer(loc=1.0, scale=3.0), "gaussian_random", {"mean": 1.0, "std": 3.0}),
        (
            fluid.initializer.TruncatedNormal(0.5, 2.0, 9),
            "truncated_gaussian_random",
            {"mean": 0.5, "std": 2.0, "seed": 9},
        ),
        (fluid.initializer.Uniform(-0.5, 0.25, 3), "uniform_random", {"min": -0.5, "max": 0.25, "seed": 3}),
        (fluid.initializer.ConstantInitializer(0.25, True), "fill_constant", {"value": 0.25}),
    ],
)
def test_fluid_initializers_keep_the_fluid_arguments(initializer, op_type, attrs):
    op = _init_op(initializer)
    assert op.type == op_type
    assert {k: op.attrs[k] for k in attrs} == attrs


def test_each_namespace_refuses_the_other_spelling():
    with pytest.raises(TypeError, match="mean"):
        fluid.initializer.Normal(mean=0.0)
    with pytest.raises(TypeError, match="loc"):
        paddle.nn.initializer.Normal(loc=0.0)
    with pytest.raises(TypeError, match="scale"):
        paddle.nn.initializer.TruncatedNormal(scale=1.0)


def test_nn_initializers_are_the_fluid_kinds_as_in_paddle():
    assert isinstance(paddle.nn.initializer.Normal(), fluid.initializer.NormalInitializer)
    assert isinstance(paddle.nn.initializer.Uniform(), fluid.initializer.UniformInitializer)
    assert isinstance(paddle.nn.initializer.Constant(), fluid.initializer.ConstantInitializer)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: paddle.nn.initializer.Normal(std=None), "Normal: std expected a number, got None"),
        (lambda: paddle.nn.initializer.Uniform(1.0, 0.0), r"Uniform: high expected >= low, got low=1.0, high=0.0"),
        (lambda: paddle.nn.initializer.Constant(None), "Constant: value expected a number, got None"),
        (lambda: fluid.initializer.Uniform(0.0, 1.0, 0, 2), "diag_num and diag_step are not supported"),
    ],
)
def test_initializer_arguments_are_checked(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_truncated_normal_from_a_param_attr_draws_within_two_std():
    startup = Program()
    startup.random_seed = 4
    with program_guard(Program(), startup), unique_name.guard():
        x = paddle.static.data("x", [-1, 13], "float32")
        attr = paddle.ParamAttr(name="wide_w", initializer=paddle.nn.initializer.TruncatedNormal(mean=0.0, std=0.5))
        paddle.static.nn.fc(x, 200, weight_attr=attr)
    scope = paddle.static.Scope()
    paddle.static.Executor().run(startup, scope=scope)
    w = np.array(scope.vars["wide_w"])
    assert np.abs(w).max() <= 1.0 and 0.4 < w.std() < 0.5
