"""The array module comes from the place, in both modes: an MLP trained a few SGD steps eagerly and
as a static program, on a place whose module is `array_api_strict`, holds strict arrays throughout
and ends with the parameters and losses of the NumPy run. Eager calls and plan steps call kernels
through one bound kernel (ops/bound.py), so one place serves both."""

import numpy as np
import pytest

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.dygraph.mode import guard  # guard(place), which comes with the Fluid 1.8 surface
from fleetgraph.executor.place import Place

xps = pytest.importorskip("array_api_strict", reason="pip install array-api-strict (the test extra)")

STEPS = 3
_rng = np.random.default_rng(7)
X = _rng.normal(size=(16, 4)).astype("float32")
Y = _rng.normal(size=(16, 1)).astype("float32")
INIT = {
    "w1": _rng.normal(size=(4, 8)).astype("float32"),
    "b1": _rng.normal(size=(8,)).astype("float32"),
    "w2": _rng.normal(size=(8, 1)).astype("float32"),
    "b2": _rng.normal(size=(1,)).astype("float32"),
}


class StrictPlace(Place):
    """A place whose array module is the strict array API: a kernel that reaches for NumPy fails."""

    def array_module(self):
        return xps


def _attr(name: str):
    return paddle.ParamAttr(name=name)


def _is_strict(value) -> bool:
    return type(value).__module__.startswith("array_api_strict")


def _train_static(place) -> tuple[list[float], dict]:
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = paddle.static.data("x", [-1, 4], "float32")
        y = paddle.static.data("y", [-1, 1], "float32")
        h = fluid.layers.fc(x, 8, act="relu", param_attr=_attr("w1"), bias_attr=_attr("b1"))
        pred = fluid.layers.fc(h, 1, param_attr=_attr("w2"), bias_attr=_attr("b2"))
        loss = fluid.layers.mean(fluid.layers.square_error_cost(pred, y))
        fluid.optimizer.SGD(0.1).minimize(loss)
    exe, scope = fluid.Executor(place), fluid.Scope()
    exe.run(startup, scope=scope)
    for name in INIT:  # both places start from the same values, as arrays of the place's module
        scope.vars[name] = place.array_module().asarray(INIT[name].copy())
    losses = [float(exe.run(main, feed={"x": X, "y": Y}, fetch_list=[loss], scope=scope)[0]) for _ in range(STEPS)]
    assert all(_is_strict(scope.vars[n]) for n in INIT) == (place.array_module() is xps)
    return losses, {n: np.asarray(scope.vars[n]) for n in INIT}


def _train_eager(place) -> tuple[list[float], dict]:
    with guard(place):
        first = paddle.nn.Linear(4, 8, weight_attr=_attr("w1"), bias_attr=_attr("b1"))
        second = paddle.nn.Linear(8, 1, weight_attr=_attr("w2"), bias_attr=_attr("b2"))
        params = first.parameters() + second.parameters()
        for name, param in zip(INIT, params):
            param.value = place.array_module().asarray(INIT[name].copy())
        opt = paddle.optimizer.SGD(0.1, parameters=params)
        x, y = paddle.to_tensor(X), paddle.to_tensor(Y)
        losses = []
        for _ in range(STEPS):
            pred = second(paddle.nn.functional.relu(first(x)))
            loss = paddle.mean((pred - y) * (pred - y))
            loss.backward()
            opt.step()
            opt.clear_grad()
            losses.append(float(loss.numpy()))
        assert all(_is_strict(p.value) for p in params) == (place.array_module() is xps)
        return losses, {n: p.numpy() for n, p in zip(INIT, params)}


@pytest.mark.parametrize("train", [_train_static, _train_eager], ids=["static", "eager"])
def test_mlp_training_on_the_strict_array_api_matches_numpy(train):
    want_losses, want_params = train(paddle.CPUPlace())
    got_losses, got_params = train(StrictPlace())
    np.testing.assert_allclose(got_losses, want_losses, rtol=1e-6)
    assert want_losses[-1] < want_losses[0]  # it trained
    for name, want in want_params.items():
        np.testing.assert_allclose(got_params[name], want, rtol=1e-6, err_msg=name)


def test_eager_and_static_training_agree():
    """The two modes are one computation: the same losses and parameters."""
    eager_losses, eager_params = _train_eager(paddle.CPUPlace())
    static_losses, static_params = _train_static(paddle.CPUPlace())
    np.testing.assert_allclose(eager_losses, static_losses, rtol=1e-5)
    for name, want in static_params.items():
        np.testing.assert_allclose(eager_params[name], want, rtol=1e-5, err_msg=name)


def test_guard_restores_the_place_it_found():
    with guard(StrictPlace()):
        assert _is_strict(paddle.to_tensor([1.0]).value)
    assert isinstance(paddle.to_tensor([1.0]).value, np.ndarray)


def test_set_value_and_gradient_on_the_strict_place():
    """set_value keeps the value on the place; gradient() hands back a NumPy array, as Paddle's."""
    with guard(StrictPlace()):
        w = paddle.to_tensor(np.ones((2, 2), "float32"), stop_gradient=False)
        w.set_value(np.full((2, 2), 3.0, "float32"))
        assert _is_strict(w.value) and w.shape == [2, 2]
        paddle.mean(w * w).backward()
        np.testing.assert_allclose(w.gradient(), np.full((2, 2), 1.5, "float32"))


def test_guard_refuses_what_is_not_a_place():
    with pytest.raises(TypeError, match="expected a Place"):
        with guard("tpu"):
            pass
