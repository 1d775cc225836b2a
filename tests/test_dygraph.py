"""Dynamic-graph mode: eager Tensors over the op registry, backward over the tape, and dynamic
training equal to static training of the same model with the same seed."""

from __future__ import annotations

import numpy as np
import pytest
from dygraph_helpers import fresh_mode_and_names  # noqa: F401  (autouse)

import fleetgraph as paddle
import fleetgraph.nn as nn
import fleetgraph.nn.functional as F
from fleetgraph.dygraph import mode
from fleetgraph.ir import unique_name


class ConvNet(nn.Layer):
    def __init__(self, classes: int = 4) -> None:
        super().__init__()
        self.conv = nn.Conv2D(2, 3, 3, padding=1)
        self.bn = nn.BatchNorm2D(3)
        self.pool = nn.MaxPool2D(2, 2)
        self.fc = nn.Linear(3 * 2 * 2, classes)

    def forward(self, x):
        y = self.pool(F.relu(self.bn(self.conv(x))))
        return self.fc(paddle.reshape(y, [-1, 12]))


def _batches(steps: int, batch: int = 6):
    rng = np.random.default_rng(0)
    for _ in range(steps):
        yield rng.normal(size=(batch, 2, 4, 4)).astype("float32"), rng.integers(0, 4, (batch, 1)).astype("int64")


def _optimizer(kind: str, params=None):
    if kind == "momentum_schedule_clip":  # a scheduler stepped each batch, clipping by global norm
        lr = paddle.optimizer.lr.StepDecay(0.1, step_size=5, gamma=0.5)
        clip = paddle.nn.ClipGradByGlobalNorm(0.5)
        return paddle.optimizer.Momentum(learning_rate=lr, momentum=0.9, parameters=params, grad_clip=clip)
    if kind == "sgd":
        return paddle.optimizer.SGD(learning_rate=0.1, parameters=params)
    if kind == "momentum":
        return paddle.optimizer.Momentum(
            learning_rate=0.05, momentum=0.9, parameters=params, weight_decay=paddle.regularizer.L2Decay(1e-3)
        )
    return paddle.optimizer.Adam(learning_rate=0.01, parameters=params)


def _train_dynamic(kind: str, steps: int, seed: int = 7) -> dict[str, np.ndarray]:
    paddle.seed(seed)
    with unique_name.guard():
        model = ConvNet()
    opt = _optimizer(kind, model.parameters())
    for x, y in _batches(steps):
        loss = paddle.mean(F.cross_entropy(model(paddle.to_tensor(x)), paddle.to_tensor(y)))
        loss.backward()
        opt.step()
        opt.clear_grad()
        _step_schedule(opt)
    return {p.name: p.numpy() for p in model.parameters()}


def _step_schedule(opt) -> None:
    if isinstance(opt._learning_rate, paddle.optimizer.lr.LRScheduler):
        opt._learning_rate.step()


def _train_static(kind: str, steps: int, seed: int = 7) -> dict[str, np.ndarray]:
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    main.random_seed = startup.random_seed = seed
    with paddle.static.program_guard(main, startup), unique_name.guard():
        model = ConvNet()
        x = paddle.static.data("x", [None, 2, 4, 4], "float32")
        y = paddle.static.data("y", [None, 1], "int64")
        loss = paddle.mean(F.cross_entropy(model(x), y))
        opt = _optimizer(kind)
        opt.minimize(loss)
    exe = paddle.static.Executor(paddle.CPUPlace())
    scope = paddle.static.Scope()
    exe.run(startup, scope=scope)
    for xv, yv in _batches(steps):
        exe.run(main, feed={"x": xv, "y": yv}, fetch_list=[loss], scope=scope)
        _step_schedule(opt)
    return {p.name: np.asarray(scope.vars[p.name]) for p in model.parameters()}


@pytest.mark.parametrize("kind", ["sgd", "momentum", "adam", "momentum_schedule_clip"])
def test_dynamic_training_equals_static_training_after_20_steps(kind):
    static = _train_static(kind, 20)
    mode._mode = None
    dynamic = _train_dynamic(kind, 20)
    assert sorted(dynamic) == sorted(static)
    for name in static:
        np.testing.assert_allclose(dynamic[name], static[name], rtol=1e-6, atol=1e-6, err_msg=name)


def test_parameters_start_equal_in_both_modes_with_one_seed():
    static = _train_static("sgd", 0, seed=11)
    mode._mode = None
    dynamic = _train_dynamic("sgd", 0, seed=11)
    for name in static:
        np.testing.assert_array_equal(dynamic[name], static[name])


def test_backward_gives_numpy_gradients_of_a_small_expression():
    x = paddle.to_tensor([[1.0, 2.0], [3.0, 4.0]], stop_gradient=False)
    w = paddle.to_tensor([[0.5], [-1.0]], stop_gradient=False)
    loss = paddle.mean(F.relu(paddle.matmul(x * x, w) + 1.0))
    loss.backward()
    xv, wv = x.numpy(), w.numpy()
    pre = (xv * xv) @ wv + 1.0
    live = (pre > 0).astype("float32") / 2
    np.testing.assert_allclose(float(loss), np.mean(np.maximum(pre, 0)), rtol=1e-6)
    np.testing.assert_allclose(w.grad.numpy(), (xv * xv).T @ live, rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), 2 * xv * (live @ wv.T), rtol=1e-6)


def test_a_tensor_used_twice_gets_both_gradients():
    x = paddle.to_tensor([3.0], stop_gradient=False)
    (x * x + x).backward()
    np.testing.assert_allclose(x.grad.numpy(), [7.0])


def test_two_parameters_of_one_name_get_their_own_gradients():
    """Models built in separate unique_name guards share parameter names; the tape tells the
    tensors apart (Paddle gives [1, 2] and [3, 6] here)."""
    with unique_name.guard():
        a = nn.Linear(2, 1, bias_attr=False)
    with unique_name.guard():
        b = nn.Linear(2, 1, bias_attr=False)
    assert a.weight.name == b.weight.name
    x = paddle.to_tensor([[1.0, 2.0]])
    (a(x) + 3.0 * b(x)).sum().backward()
    np.testing.assert_allclose(a.weight.grad.numpy().ravel(), [1.0, 2.0])
    np.testing.assert_allclose(b.weight.grad.numpy().ravel(), [3.0, 6.0])


def test_gradients_accumulate_until_cleared():
    x = paddle.to_tensor([2.0], stop_gradient=False)
    (x * 3.0).backward()
    (x * 3.0).backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0])
    x.clear_gradient()
    assert x.grad is None


def test_no_grad_records_nothing():
    x = paddle.to_tensor([2.0], stop_gradient=False)
    with paddle.no_grad():
        y = x * 3.0
    assert y.stop_gradient
    assert (x * 3.0).stop_gradient is False


def test_data_tensors_stop_gradient_and_ops_on_them_too():
    x = paddle.to_tensor(np.ones((2, 2), "float32"))
    y = x + x
    assert x.stop_gradient and y.stop_gradient
    assert y.shape == [2, 2] and y.dtype == "float32"
    np.testing.assert_array_equal(y.numpy(), 2 * np.ones((2, 2)))


def test_to_tensor_takes_paddles_default_dtypes():
    assert paddle.to_tensor([1.5]).dtype == "float32"
    assert paddle.to_tensor([1]).dtype == "int64"
    assert paddle.to_tensor(np.ones(2, "float64")).dtype == "float64"


def test_arithmetic_operators_match_numpy():
    a = np.array([[1.0, -2.0], [3.0, 4.0]], "float32")
    b = np.array([[0.5, 2.0], [1.0, -1.0]], "float32")
    x, y = paddle.to_tensor(a), paddle.to_tensor(b)
    for got, want in [
        (x + y, a + b),
        (x - y, a - b),
        (x * y, a * b),
        (x / y, a / b),
        (2.0 - x, 2.0 - a),
        (-x, -a),
        (x @ y, a @ b),
        (x * 0.5 + 1, a * 0.5 + 1),
        (x**2.0, a**2),
        (2.0 / y, 2.0 / b),
    ]:
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


def test_tensor_methods_are_the_paddle_functions():
    a = np.arange(6, dtype="float32").reshape(2, 3)
    x = paddle.to_tensor(a)
    assert x.reshape([3, 2]).shape == [3, 2]
    np.testing.assert_allclose(float(x.mean()), a.mean())
    np.testing.assert_allclose(x.sum(axis=1).numpy(), a.sum(axis=1))
    np.testing.assert_allclose(x.transpose([1, 0]).numpy(), a.T)


def test_iterating_a_tensor_gives_its_rows():
    a, b = paddle.to_tensor(np.array([[1.0, 2.0], [3.0, 4.0]], "float32"))
    np.testing.assert_array_equal(b.numpy(), [3.0, 4.0])


def test_numpy_is_a_copy_that_an_optimizer_step_leaves_alone():
    lin = nn.Linear(2, 2)
    opt = paddle.optimizer.SGD(0.1, parameters=lin.parameters())
    before = lin.weight.numpy()
    lin(paddle.ones([1, 2])).sum().backward()
    opt.step()
    np.testing.assert_allclose(before - lin.weight.numpy(), np.full((2, 2), 0.1), rtol=1e-5)


def test_an_optimizer_step_leaves_a_retained_graph_its_forward_values():
    lin = nn.Linear(2, 2, bias_attr=False)
    opt = paddle.optimizer.SGD(1.0, parameters=lin.parameters())
    x = paddle.to_tensor([[1.0, 2.0]], stop_gradient=False)
    w = lin.weight.numpy()
    loss = (lin(x) ** 2.0).sum()
    loss.backward(retain_graph=True)
    opt.step()
    x.clear_gradient()
    loss.backward()  # through the graph of the weight before the step: x's gradient reads it
    xv = x.numpy()
    np.testing.assert_allclose(x.grad.numpy(), 2 * (xv @ w) @ w.T, rtol=1e-5)


def test_a_loss_kept_after_backward_keeps_no_activations():
    """Keeping the step's loss (to log it) must not keep the step's forward values alive."""
    import gc
    import weakref

    lin = nn.Linear(2, 2)
    hidden = lin(paddle.to_tensor([[1.0, 2.0]]))
    kept = weakref.ref(hidden)
    loss = (hidden * hidden).sum()
    del hidden
    loss.backward()
    gc.collect()
    assert kept() is None
    assert float(loss) > 0


def test_backward_takes_a_seed_gradient_of_the_losss_shape_only():
    x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    (x * 3.0).backward(paddle.to_tensor([1.0, 0.5]))
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 1.5])
    with pytest.raises(paddle.FleetgraphError, match=r"expected shape \[2\], got \[1\]"):
        (x * 3.0).backward(paddle.to_tensor([1.0]))


def test_backward_twice_without_retain_graph_is_a_clear_error():
    x = paddle.to_tensor([1.0], stop_gradient=False)
    y = x * 2.0
    y.backward()
    with pytest.raises(paddle.FleetgraphError, match="retain_graph"):
        y.backward()


def test_layer_functions_on_static_variables_still_build_a_program():
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [None, 3], "float32")
        y = F.relu(paddle.fluid.layers.fc(x, 2))
        paddle.fluid.layers.fill_constant([1], "float32", 1.0)
    assert not isinstance(y, paddle.Tensor)
    assert [op.type for op in main.global_block().ops] == ["mul", "elementwise_add", "relu", "fill_constant"]


def test_fluid_layers_run_eagerly_after_disable_static():
    paddle.disable_static()
    assert paddle.in_dynamic_mode() and paddle.fluid.framework.in_dygraph_mode()
    x = paddle.to_tensor(np.ones((2, 3), "float32"))
    y = paddle.fluid.layers.fc(x, 2, bias_attr=False)
    c = paddle.fluid.layers.fill_constant([2], "float32", 3.0)
    assert isinstance(y, paddle.Tensor) and y.shape == [2, 2]
    np.testing.assert_array_equal(c.numpy(), [3.0, 3.0])


def test_paddle_2_creation_functions_are_eager_unless_static_was_enabled():
    z = paddle.zeros([2, 3])
    assert isinstance(z, paddle.Tensor)
    np.testing.assert_array_equal(paddle.full([2], 7.0).numpy(), [7.0, 7.0])
    paddle.enable_static()
    main = paddle.static.Program()
    with paddle.static.program_guard(main, paddle.static.Program()):
        o = paddle.ones([2])
    assert not isinstance(o, paddle.Tensor) and main.global_block().ops[0].type == "fill_constant"


def test_mode_functions_follow_paddle_2_and_fluid_defaults():
    assert paddle.in_dynamic_mode()  # Paddle 2.x: dynamic unless enable_static()
    assert not paddle.fluid.framework.in_dygraph_mode()  # Fluid 1.x: static unless disable_static()
    paddle.enable_static()
    assert not paddle.in_dynamic_mode()
    paddle.disable_static()
    assert paddle.in_dynamic_mode()


def test_mixing_tensors_and_static_variables_in_one_op_is_a_clear_error():
    main = paddle.static.Program()
    with paddle.static.program_guard(main, paddle.static.Program()):
        x = paddle.static.data("x", [None, 2], "float32")
        with pytest.raises(paddle.FleetgraphError, match="mix eager Tensors and static Variables"):
            paddle.add(x, paddle.to_tensor(np.ones((1, 2), "float32")))


def test_a_one_element_integer_tensor_is_an_index_as_paddles():
    paddle.disable_static()
    n = paddle.to_tensor(np.array([3], "int64"))
    assert list(range(n)) == [0, 1, 2] and [10, 20, 30, 40][n] == 40
    with pytest.raises(TypeError, match="only a one-element integer tensor is an index"):
        range(paddle.to_tensor(np.array([1.5], "float32")))
