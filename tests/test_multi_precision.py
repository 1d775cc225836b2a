"""Paddle 2.0's `multi_precision=True` on Momentum, Adam and AdamW: bfloat16 parameters are updated
through float32 master weights exactly as `paddle.amp.decorate(level='O2')` has them updated, and
float32 parameters are updated as without it."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from dygraph_helpers import fresh_mode_and_names  # noqa: F401  (autouse)

import fleetgraph as paddle
import fleetgraph.nn.functional as F

_RNG = np.random.RandomState(7)
_X = _RNG.randn(32, 8).astype("float32")
_Y = (_X @ _RNG.randn(8, 3).astype("float32")).argmax(1).astype("int64").reshape(-1, 1)
_INIT = [_RNG.uniform(-0.4, 0.4, shape).astype("float32") for shape in ((8, 16), (16,), (16, 3), (3,))]
_OPTIMIZERS = {
    "Momentum": lambda params, **kw: paddle.optimizer.Momentum(0.05, parameters=params, **kw),
    "Adam": lambda params, **kw: paddle.optimizer.Adam(0.01, parameters=params, **kw),
    "AdamW": lambda params, **kw: paddle.optimizer.AdamW(0.01, parameters=params, weight_decay=0.05, **kw),
}


def _train(make_opt, bfloat16: bool, decorate_opt: bool, steps: int = 15, **kw):
    """(the parameters, the optimizer's state) after `steps` full-batch steps of a small MLP from
    _INIT; `bfloat16`: parameters cast by decorate(O2), the optimizer decorated too when `decorate_opt`."""
    model = paddle.nn.Sequential(paddle.nn.Linear(8, 16), paddle.nn.ReLU(), paddle.nn.Linear(16, 3))
    for p, v in zip(model.parameters(), _INIT):
        p.set_value(v)
    opt = make_opt(model.parameters(), **kw)
    if bfloat16 and decorate_opt:
        model, opt = paddle.amp.decorate(model, opt, level="O2", dtype="bfloat16")
    elif bfloat16:
        model = paddle.amp.decorate(model, level="O2", dtype="bfloat16")
    x, y = paddle.to_tensor(_X), paddle.to_tensor(_Y)
    for _ in range(steps):
        with paddle.amp.auto_cast(enable=bfloat16, level="O2", dtype="bfloat16"):
            loss = F.cross_entropy(model(x).astype("float32"), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
    return [p.numpy() for p in model.parameters()], opt.state_dict()


@pytest.mark.parametrize("name", sorted(_OPTIMIZERS))
def test_multi_precision_on_bfloat16_parameters_keeps_decorates_master_weights(name):
    make = _OPTIMIZERS[name]
    params, state = _train(make, bfloat16=True, decorate_opt=False, multi_precision=True)
    decorated, decorated_state = _train(make, bfloat16=True, decorate_opt=True)
    reference, _ = _train(make, bfloat16=False, decorate_opt=False)
    masters = state["master_weights"]
    for p, want, master, fp32 in zip(params, decorated, masters.values(), reference):
        assert p.dtype == want.dtype == np.dtype("bfloat16")
        assert p.view(np.uint16).tolist() == want.view(np.uint16).tolist()
        assert master.dtype == "float32"
        np.testing.assert_array_equal(p, master.numpy().astype(p.dtype))  # each parameter is its master rounded
        np.testing.assert_allclose(master.numpy(), fp32, atol=0.03)  # bfloat16 forward, float32 updates
    for master, want in zip(masters.values(), decorated_state["master_weights"].values()):  # models named apart
        np.testing.assert_array_equal(master.numpy(), want.numpy())


@pytest.mark.parametrize("name", sorted(_OPTIMIZERS))
def test_multi_precision_changes_nothing_for_float32_parameters(name):
    make = _OPTIMIZERS[name]
    params, state = _train(make, bfloat16=False, decorate_opt=False, steps=4, multi_precision=True)
    plain, _ = _train(make, bfloat16=False, decorate_opt=False, steps=4)
    assert "master_weights" not in state
    for p, want in zip(params, plain):
        assert p.dtype == np.float32
        np.testing.assert_array_equal(p, want)


def test_without_master_weights_adams_small_steps_are_lost_in_bfloat16():
    kept, _ = _train(_OPTIMIZERS["Adam"], bfloat16=True, decorate_opt=False, multi_precision=True)
    lost, state = _train(_OPTIMIZERS["Adam"], bfloat16=True, decorate_opt=False)
    reference, _ = _train(_OPTIMIZERS["Adam"], bfloat16=False, decorate_opt=False)
    assert "master_weights" not in state
    error = [np.abs(p.astype(np.float32) - r).max() for p, r in zip(kept, reference)]
    error_lost = [np.abs(p.astype(np.float32) - r).max() for p, r in zip(lost, reference)]
    assert max(error_lost) > 5 * max(error)


def test_multi_precision_takes_paddle_2_0s_place_in_each_signature():
    def names(cls):
        return list(inspect.signature(cls).parameters)

    momentum = ["learning_rate", "momentum", "parameters", "use_nesterov", "weight_decay", "grad_clip"]
    assert names(paddle.optimizer.Momentum)[:7] == [*momentum, "multi_precision"]
    adam = ["learning_rate", "beta1", "beta2", "epsilon", "parameters", "weight_decay", "grad_clip", "lazy_mode"]
    assert names(paddle.optimizer.Adam)[:10] == [*adam, "multi_precision", "name"]
    adamw = [*adam[:6], "apply_decay_param_fun", "grad_clip", "lazy_mode", "multi_precision", "name"]
    assert names(paddle.optimizer.AdamW)[:11] == adamw


def test_a_static_program_with_bfloat16_parameters_refuses_multi_precision():
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            w = paddle.static.create_parameter([3, 2], "bfloat16", name="w")
            x = paddle.static.data("x", [4, 3], "float32")
            loss = paddle.mean(paddle.cast(paddle.matmul(paddle.cast(x, "bfloat16"), w), "float32"))
            with pytest.raises(NotImplementedError, match=r"multi_precision=True .* \['w'\]"):
                paddle.optimizer.Adam(0.1, multi_precision=True).minimize(loss)
    finally:
        paddle.disable_static()
