"""Parameters that were accepted and ignored now do what Paddle's do: sums(out=), the comparison
layers' cond=, softmax(dtype=), Conv2D(padding_mode=); NumPy is the oracle."""

from __future__ import annotations

import numpy as np
import pytest

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.dygraph.mode import guard
from fleetgraph.ir import FleetgraphError, Program, program_guard


def _run(main, fetch):
    return fluid.Executor(fluid.CPUPlace()).run(main, fetch_list=fetch)


def test_sums_and_comparisons_write_the_variable_they_are_given():
    main = Program()
    with program_guard(main, Program()):
        a = fluid.layers.fill_constant([2], "float32", 1.5)
        b = fluid.layers.fill_constant([2], "float32", 2.0)
        out = fluid.layers.create_global_var([2], 0.0, "float32", persistable=True, name="total")
        got = fluid.layers.sums([a, b], out=out)
        flag = fluid.layers.create_global_var([2], False, "bool", persistable=True, name="flag")
        same = fluid.layers.greater_than(b, a, cond=flag)
    assert got is out and same is flag
    total, bigger = _run(main, [out, flag])
    np.testing.assert_allclose(total, [3.5, 3.5])
    assert bigger.tolist() == [True, True]
    assert [op.output("Out") for op in main.global_block().ops[-2:]] == [["total"], ["flag"]]


def test_softmax_with_dtype_casts_first():
    with guard():
        x = paddle.to_tensor(np.array([[1.0, 2.0, 3.0]], np.float32))
        out = paddle.nn.functional.softmax(x, dtype="float64")
        assert out.numpy().dtype == np.float64
        e = np.exp(np.array([1.0, 2.0, 3.0]) - 3.0)
        np.testing.assert_allclose(out.numpy()[0], e / e.sum(), rtol=1e-12)


def _conv_reference(x, w, pad, mode):
    padded = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)), mode=mode)
    n, c, h, wd = padded.shape
    o, _, k, _ = w.shape
    out = np.zeros((n, o, h - k + 1, wd - k + 1))
    for i in range(h - k + 1):
        for j in range(wd - k + 1):
            out[:, :, i, j] = np.einsum("nchw,ochw->no", padded[:, :, i : i + k, j : j + k], w)
    return out


@pytest.mark.parametrize("mode, numpy_mode", [("zeros", "constant"), ("reflect", "reflect"), ("replicate", "edge")])
def test_conv2d_pads_by_its_padding_mode(mode, numpy_mode):
    x = np.random.default_rng(0).normal(size=(2, 3, 5, 5)).astype(np.float32)
    with guard():
        conv = paddle.nn.Conv2D(3, 4, 3, padding=1, padding_mode=mode, bias_attr=False)
        out = conv(paddle.to_tensor(x)).numpy()
        w = conv.weight.numpy()
    np.testing.assert_allclose(out, _conv_reference(x, w, 1, numpy_mode), rtol=1e-4, atol=1e-5)


def test_conv2d_refuses_padding_it_cannot_honour():
    with guard():
        with pytest.raises(ValueError, match="padding_mode"):
            paddle.nn.Conv2D(3, 4, 3, padding_mode="mirror")
        with pytest.raises(NotImplementedError, match="circular"):
            paddle.nn.Conv2D(3, 4, 3, padding=1, padding_mode="circular")
        with pytest.raises(TypeError, match="int padding"):
            paddle.nn.Conv2D(3, 4, 3, padding=[1, 2], padding_mode="reflect")


def test_backward_takes_a_1x_backward_strategy():
    with guard():
        x = paddle.to_tensor(np.array([1.0, 2.0, 3.0], np.float32), stop_gradient=False)
        strategy = fluid.dygraph.BackwardStrategy()
        strategy.sort_sum_gradient = True
        (x * x).sum().backward(strategy)
        np.testing.assert_allclose(x.gradient(), [2.0, 4.0, 6.0])


def test_a_1x_decay_as_learning_rate_keeps_the_rate_a_scalar():
    with guard():
        linear = fluid.dygraph.Linear(2, 1)
        decay = fluid.dygraph.ExponentialDecay(learning_rate=0.5, decay_steps=1, decay_rate=0.5)
        sgd = fluid.optimizer.SGD(learning_rate=decay, parameter_list=linear.parameters())
        weights = [linear.weight.numpy().copy()]
        for _ in range(3):
            loss = fluid.layers.reduce_sum(linear(paddle.to_tensor(np.ones((1, 2), np.float32))))
            loss.backward()
            sgd.minimize(loss)
            linear.clear_gradients()
            weights.append(linear.weight.numpy().copy())
    steps = -np.diff(np.stack(weights), axis=0)[:, 0, 0]  # the gradient is 1: each step moves by the rate
    np.testing.assert_allclose(steps, [0.5, 0.25, 0.125], rtol=1e-6)


@pytest.mark.parametrize("dim", [None, 1])
def test_weight_norm_param_attr_trains_g_and_v_of_w_equal_g_v_over_norm(dim):
    """Paddle's test_weight_normalization: w = g * v / ||v||, the norm over every axis but dim; w starts
    as the initializer's value, and g and v get the chain rule's gradients."""
    x = np.random.default_rng(0).normal(size=(3, 4)).astype(np.float32)
    v0 = np.random.default_rng(1).normal(size=(4, 5)).astype(np.float32)
    main, startup = Program(), Program()
    with program_guard(main, startup), fluid.unique_name.guard():
        data = fluid.data("x", [None, 4])
        attr = fluid.WeightNormParamAttr(dim=dim, name="w", initializer=fluid.initializer.NumpyArrayInitializer(v0))
        out = fluid.layers.fc(data, 5, param_attr=attr, bias_attr=False)
        loss = fluid.layers.reduce_sum(out)
        grads = dict((p.name, g) for p, g in fluid.backward.append_backward(loss))
    assert sorted(grads) == ["w_g", "w_v"]
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    exe.run(startup, scope=scope)
    g0 = np.array(scope.vars["w_g"])
    got_out, got_g, got_v = exe.run(main, feed={"x": x}, fetch_list=[out, grads["w_g"], grads["w_v"]], scope=scope)
    axes = (0, 1) if dim is None else (0,)
    norm = np.sqrt((v0.astype(np.float64) ** 2).sum(axis=axes, keepdims=True))
    np.testing.assert_allclose(g0, norm, rtol=1e-5)
    np.testing.assert_allclose(got_out, x @ v0, rtol=1e-4, atol=1e-5)  # w starts as v
    dw = np.repeat(x.sum(axis=0, keepdims=True).T, 5, axis=1)  # d sum(x @ w) / dw
    unit = v0 / norm
    np.testing.assert_allclose(got_g, (dw * unit).sum(axis=axes, keepdims=True), rtol=1e-4, atol=1e-5)
    dv = g0 / norm * (dw - unit * (dw * unit).sum(axis=axes, keepdims=True))
    np.testing.assert_allclose(got_v, dv, rtol=1e-4, atol=1e-5)


def test_weight_norm_param_attr_is_refused_in_dynamic_mode():
    with guard():
        with pytest.raises(NotImplementedError, match="WeightNormParamAttr"):
            fluid.layers.fc(paddle.to_tensor(np.ones((1, 2), np.float32)), 3, param_attr=fluid.WeightNormParamAttr())


def test_an_optimizer_state_that_does_not_name_an_accumulator_is_an_error():
    """Paddle's set_dict asserts each accumulator is in the state: a state saved from parameters of
    other names (a model built again in the same process) is refused, not dropped."""
    with guard():
        first = fluid.dygraph.Linear(2, 1)
        adam = fluid.optimizer.Adam(0.1, parameter_list=first.parameters())
        first(paddle.to_tensor(np.ones((1, 2), np.float32))).sum().backward()
        adam.step()
        state = adam.state_dict()
        second = fluid.dygraph.Linear(2, 1)  # named linear_1: its accumulators are not in `state`
        other = fluid.optimizer.Adam(0.1, parameter_list=second.parameters())
        other.set_dict(state)
        second(paddle.to_tensor(np.ones((1, 2), np.float32))).sum().backward()
        with pytest.raises(FleetgraphError, match="should in state dict"):
            other.step()


def test_set_global_initializer_takes_the_place_of_layer_defaults_not_of_param_attrs():
    """Paddle 2.0's documented use: a global Uniform/Constant for conv1; conv2's own attrs win; None resets."""
    init = paddle.nn.initializer
    with guard():
        try:
            init.set_global_initializer(init.Constant(0.25), init.Constant(-1.0))
            conv1 = paddle.nn.Conv2D(4, 6, (3, 3))
            conv2 = paddle.nn.Conv2D(4, 6, (3, 3), weight_attr=init.Constant(2.0), bias_attr=init.Constant(3.0))
        finally:
            init.set_global_initializer(None)
        conv3 = paddle.nn.Conv2D(4, 6, (3, 3))
    assert np.all(conv1.weight.numpy() == 0.25) and np.all(conv1.bias.numpy() == -1.0)
    assert np.all(conv2.weight.numpy() == 2.0) and np.all(conv2.bias.numpy() == 3.0)
    assert len(np.unique(conv3.weight.numpy())) > 1 and np.all(conv3.bias.numpy() == 0.0)
    with pytest.raises(TypeError, match="weight_init"):
        init.set_global_initializer("uniform")


def test_nonzero_as_tuple_gives_one_column_per_axis_at_any_rank():
    x = np.zeros((2, 3, 4), np.float32)
    x[0, 1, 2] = x[1, 2, 3] = 1.0
    with guard():
        cols = fluid.layers.nonzero(paddle.to_tensor(x), as_tuple=True)
        assert [c.numpy().ravel().tolist() for c in cols] == [[0, 1], [1, 2], [2, 3]]
