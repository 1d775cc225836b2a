"""Fluid 1.8's LarsMomentumOptimizer and DpsgdOptimizer: their ops (lars_momentum, dpsgd) against the
NumPy formulas of Paddle's kernels and unit tests (test_momentum_op.py's TestLarsMomentumOp,
test_dpsgd_op.py), several steps of each optimizer in static and eager mode, Paddle's signatures,
and dpsgd's noise: one gaussian draw per step, N(0, sigma) / batch_size, on every element."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from models import fit_a_line_2x
from test_optimizers import X, Y, _fleetgraph_steps, _numpy_steps

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.ir import KernelError


def _run_op(op_type, state: dict, inputs: dict, attrs: dict, steps: int = 1, outputs=("ParamOut",)):
    """`steps` runs of one `op_type` op updating the persistable `state` (slot -> array) in place,
    its other inputs fed; returns the state after each step."""
    main = paddle.static.Program()
    block = main.global_block()
    names = {}
    for slot, value in {**state, **inputs}.items():
        names[slot] = slot.lower()
        block.create_var(
            names[slot], value.shape, value.dtype.name, persistable=slot in state, is_data=slot not in state
        )
    ins = {slot: [name] for slot, name in names.items()}
    outs = {out: [names[out[: -len("Out")]]] for out in outputs}
    block.append_op(op_type, ins, outs, attrs)
    scope, exe = paddle.static.Scope(), paddle.static.Executor()
    for slot, value in state.items():
        scope.var(names[slot]).get_tensor().set(value.copy(), paddle.CPUPlace())
    feed = {names[slot]: value for slot, value in inputs.items()}
    history = []
    for _ in range(steps):
        exe.run(main, feed=feed, scope=scope)
        history.append({slot: np.array(scope.vars[names[slot]]) for slot in state})
    return history


# -- lars_momentum ---------------------------------------------------------------------------------


def lars_step(p, g, v, lr, mu, lars_coeff, lars_weight_decay):
    """Paddle's LarsMomentumOpKernel: the layer's rate from the norms (plain lr if either is 0)."""
    p_norm, g_norm = np.sqrt(np.square(p).sum()), np.sqrt(np.square(g).sum())
    local_lr = lr * lars_coeff * p_norm / (g_norm + lars_weight_decay * p_norm) if p_norm > 0 and g_norm > 0 else lr
    v = mu * v + local_lr * (g + lars_weight_decay * p)
    return p - v, v


LARS_CASES = {  # name: (param, grad, velocity, lr, attrs)
    "paddles_test": (  # test_momentum_op.py TestLarsMomentumOp's shapes and attrs
        np.random.default_rng(0).random((123, 321)).astype("float32"),
        np.random.default_rng(1).random((123, 321)).astype("float32"),
        np.zeros((123, 321), "float32"),
        0.001,
        {"mu": 0.0001, "lars_coeff": 0.001, "lars_weight_decay": 0.0005},
    ),
    "large_coeff_with_velocity": (
        np.random.default_rng(2).normal(size=(6, 5)),
        np.random.default_rng(3).normal(size=(6, 5)),
        np.random.default_rng(4).normal(size=(6, 5)),
        0.1,
        {"mu": 0.9, "lars_coeff": 0.5, "lars_weight_decay": 0.01},
    ),
    "zero_param_keeps_lr": (
        np.zeros((3, 4)),
        np.random.default_rng(5).normal(size=(3, 4)),
        np.zeros((3, 4)),
        0.5,
        {"mu": 0.5, "lars_coeff": 0.01, "lars_weight_decay": 0.1},
    ),
}


@pytest.mark.parametrize("name", sorted(LARS_CASES))
def test_lars_momentum_op_matches_paddles_formula_step_by_step(name):
    p, g, v, lr, attrs = LARS_CASES[name]
    state = {"Param": p, "Velocity": v}
    inputs = {"Grad": g, "LearningRate": np.array([lr], p.dtype)}
    history = _run_op("lars_momentum", state, inputs, attrs, steps=3, outputs=("ParamOut", "VelocityOut"))
    tol = 1e-5 if p.dtype == np.float32 else 1e-12
    for got in history:
        p, v = lars_step(p.astype(np.float64), g, v, lr, **attrs)
        np.testing.assert_allclose(got["Param"], p, rtol=tol, atol=tol)
        np.testing.assert_allclose(got["Velocity"], v, rtol=tol, atol=tol)


def test_lars_momentum_and_dpsgd_ops_give_paddles_numbers():
    """The first elements Paddle's own kernels give for these inputs (run in Paddle, pasted here)."""
    rng = np.random.default_rng(2)
    p, g, v = (rng.normal(size=(6, 5)).astype("float32") for _ in range(3))
    lr = np.array([0.1], "float32")
    attrs = {"mu": 0.9, "lars_coeff": 0.5, "lars_weight_decay": 0.01}
    state, inputs = {"Param": p, "Velocity": v}, {"Grad": g, "LearningRate": lr}
    (lars,) = _run_op("lars_momentum", state, inputs, attrs, outputs=("ParamOut", "VelocityOut"))
    np.testing.assert_allclose(
        lars["Param"].ravel()[:5], [-0.4364651, -0.35187942, -0.30602074, -2.3817112, 1.203371], rtol=1e-6
    )
    np.testing.assert_allclose(
        lars["Velocity"].ravel()[:5], [0.6255185, -0.17086905, -0.1070428, -0.05975609, 0.5963363], rtol=1e-6
    )
    attrs = {"clip": 0.5, "batch_size": 16.0, "sigma": 0.0, "seed": 1}
    (dp,) = _run_op("dpsgd", {"Param": p}, {"Grad": g, "LearningRate": lr}, attrs)
    np.testing.assert_allclose(
        dp["Param"].ravel()[:5], [0.18132688, -0.5239304, -0.4229652, -2.4481008, 1.7977738], rtol=1e-6
    )


# -- dpsgd -----------------------------------------------------------------------------------------


def dpsgd_step(p, g, lr, clip):
    """Paddle's DpsgdOpKernel with sigma 0: the gradient scaled down to L2 norm `clip` when above it."""
    norm = np.sqrt(np.square(g).sum())
    return p - lr * g / (norm / clip if norm > clip else 1.0)


@pytest.mark.parametrize("clip", [10000.0, 3.0, 0.5], ids=["paddles_test_unclipped", "clipped", "clipped_hard"])
def test_dpsgd_op_clips_the_gradient_as_paddles(clip):
    rng = np.random.default_rng(6)
    p, g = rng.uniform(-1, 1, (102, 105)).astype("float32"), rng.uniform(-1, 1, (102, 105)).astype("float32")
    attrs = {"clip": clip, "batch_size": 16.0, "sigma": 0.0}
    inputs = {"Grad": g, "LearningRate": np.array([0.001], "float32")}
    history = _run_op("dpsgd", {"Param": p}, inputs, attrs, steps=2)
    want = p.astype(np.float64)
    for got in history:
        want = dpsgd_step(want, g, 0.001, clip)
        np.testing.assert_allclose(got["Param"], want, rtol=1e-5, atol=1e-6)


def _noise_draws(steps: int, sigma: float, batch_size: float, seed: int) -> np.ndarray:
    """The noise of each of `steps` dpsgd runs with a zero gradient and lr 1, as batch_size * shift,
    one row per step, one column per element."""
    p = np.zeros((2, 3))
    attrs = {"clip": 1.0, "batch_size": batch_size, "sigma": sigma, "seed": seed}
    inputs = {"Grad": np.zeros((2, 3)), "LearningRate": np.array([1.0])}
    history = _run_op("dpsgd", {"Param": p}, inputs, attrs, steps=steps)
    params = np.stack([np.zeros((2, 3))] + [h["Param"] for h in history])
    return -(params[1:] - params[:-1]).reshape(steps, -1) * batch_size


def test_dpsgd_noise_is_one_gaussian_draw_per_step_scaled_by_sigma_over_batch_size():
    paddle.seed(11)
    sigma, steps = 2.0, 1500
    draws = _noise_draws(steps, sigma, batch_size=4.0, seed=0)
    np.testing.assert_allclose(draws, draws[:, :1].repeat(draws.shape[1], axis=1), atol=1e-12)  # one scalar
    noise = draws[:, 0]
    assert abs(noise.mean()) < 4 * sigma / np.sqrt(steps)
    assert abs(noise.std() / sigma - 1) < 0.08
    assert abs(np.mean(np.abs(noise) < sigma) - 0.6827) < 0.05  # gaussian, not merely of that variance
    assert len(np.unique(noise)) == steps  # a fresh draw each step


def test_dpsgd_seed_attr_fixes_the_noise_as_paddles_seeded_engine():
    """Paddle reseeds its engine with `seed` at every step: a nonzero seed adds the same noise each step."""
    draws = _noise_draws(4, sigma=1.0, batch_size=1.0, seed=45)
    np.testing.assert_allclose(draws, np.full_like(draws, draws[0, 0]), rtol=1e-12)
    assert draws[0, 0] != 0
    assert np.array_equal(_noise_draws(4, sigma=1.0, batch_size=1.0, seed=45), draws)


def test_dpsgd_unseeded_noise_is_reproducible_with_paddle_seed():
    paddle.seed(5)
    first = _noise_draws(3, sigma=1.0, batch_size=1.0, seed=0)
    paddle.seed(5)
    np.testing.assert_array_equal(_noise_draws(3, sigma=1.0, batch_size=1.0, seed=0), first)


# -- the optimizer classes -------------------------------------------------------------------------


def test_fluid_names_and_signatures_are_paddle_1_8s():
    assert fluid.optimizer.LarsMomentum is fluid.optimizer.LarsMomentumOptimizer
    assert fluid.optimizer.Dpsgd is fluid.optimizer.DpsgdOptimizer
    assert {"Dpsgd", "DpsgdOptimizer", "LarsMomentum", "LarsMomentumOptimizer"} <= set(fluid.optimizer.__all__)
    lars = inspect.signature(fluid.optimizer.LarsMomentumOptimizer).parameters
    assert [(n, p.default) for n, p in lars.items()] == [
        ("learning_rate", inspect.Parameter.empty),
        ("momentum", inspect.Parameter.empty),
        ("lars_coeff", 0.001),
        ("lars_weight_decay", 0.0005),
        ("parameter_list", None),
        ("regularization", None),
        ("grad_clip", None),
        ("name", None),
    ]
    dpsgd = inspect.signature(fluid.optimizer.DpsgdOptimizer).parameters
    assert [(n, p.default) for n, p in dpsgd.items()] == [
        ("learning_rate", 0.001),
        ("clip", 0.9),
        ("batch_size", 0.999),
        ("sigma", 1e-8),
        ("parameter_list", None),
    ]
    with pytest.raises(TypeError, match="momentum"):
        fluid.optimizer.LarsMomentumOptimizer(0.1)


def test_minimize_appends_one_op_per_parameter_with_paddles_attrs():
    """test_optimizer.py TestDpsgdOptimizer: a parameter's own learning rate adds a scale op before dpsgd."""
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        x = fluid.layers.data(name="x", shape=[10], dtype="float32")
        w = fluid.ParamAttr(name="w", learning_rate=1.1)
        loss = fluid.layers.mean(fluid.layers.fc(x, size=8, param_attr=w, bias_attr=False))
        opt = fluid.optimizer.DpsgdOptimizer(learning_rate=0.01, clip=100.0, batch_size=16.0, sigma=0.0)
        opts, _ = opt.minimize(loss, startup)
    assert [op.type for op in opts] == ["scale", "dpsgd"]
    assert opts[1].attrs["clip"] == 100.0 and opts[1].attrs["batch_size"] == 16.0 and opts[1].attrs["seed"] == 0
    with fluid.program_guard(fluid.Program(), fluid.Program()), fluid.unique_name.guard():
        x = fluid.layers.data(name="x", shape=[10], dtype="float32")
        loss = fluid.layers.mean(fluid.layers.fc(x, size=8))
        opts, _ = fluid.optimizer.LarsMomentum(0.1, 0.9, lars_coeff=0.02, lars_weight_decay=0.001).minimize(loss)
    assert [op.type for op in opts] == ["lars_momentum", "lars_momentum"]
    assert {k: opts[0].attrs[k] for k in ("mu", "lars_coeff", "lars_weight_decay")} == {
        "mu": 0.9,
        "lars_coeff": 0.02,
        "lars_weight_decay": 0.001,
    }
    assert opts[0].input("Velocity") == opts[0].output("VelocityOut")


def _lars(lr, mu, coeff, decay):
    def update(p, g, s, t):
        p, s["v"] = lars_step(p, g, s.get("v", np.zeros_like(p)), lr, mu, coeff, decay)
        return p

    return update


OPTIMIZERS = {  # name: (Fluid optimizer of a parameter list, its NumPy update)
    "lars_momentum": (
        lambda params=None: fluid.optimizer.LarsMomentum(0.1, 0.9, parameter_list=params),
        _lars(0.1, 0.9, 0.001, 0.0005),
    ),
    "lars_momentum_strong": (
        lambda params=None: fluid.optimizer.LarsMomentumOptimizer(
            0.05, momentum=0.5, lars_coeff=0.5, lars_weight_decay=0.01, parameter_list=params
        ),
        _lars(0.05, 0.5, 0.5, 0.01),
    ),
    "dpsgd": (
        lambda params=None: fluid.optimizer.Dpsgd(0.1, clip=0.5, batch_size=8.0, sigma=0.0, parameter_list=params),
        lambda p, g, s, t: dpsgd_step(p, g, 0.1, 0.5),
    ),
}


def _eager_steps(make, steps=3):
    """fit_a_line's (w, b) after `steps` eager updates, from the static model's initial values."""
    main, startup, *_ = fit_a_line_2x()
    scope = paddle.static.Scope()
    paddle.static.Executor().run(startup, scope=scope)
    with fluid.dygraph.guard():
        fc = paddle.nn.Linear(13, 1)
        fc.weight.set_value(np.array(scope.vars["fc_0.w_0"]))
        fc.bias.set_value(np.array(scope.vars["fc_0.b_0"]))
        opt = make(fc.parameters())
        for _ in range(steps):
            loss = paddle.mean(paddle.nn.functional.square_error_cost(fc(paddle.to_tensor(X)), paddle.to_tensor(Y)))
            loss.backward()
            opt.minimize(loss)
            opt.clear_grad()
        return fc.weight.numpy(), fc.bias.numpy()


@pytest.mark.parametrize("mode", ["static", "eager"])
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_three_steps_match_numpy(name, mode):
    make, update = OPTIMIZERS[name]
    w, b = _fleetgraph_steps(make()) if mode == "static" else _eager_steps(make)
    want_w, want_b = _numpy_steps(update)
    np.testing.assert_allclose(w, want_w, atol=1e-6, rtol=1e-5)
    np.testing.assert_allclose(b, want_b, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("make", [lambda: fluid.optimizer.LarsMomentum(0.1, 0.9), lambda: fluid.optimizer.Dpsgd(0.1)])
def test_a_sparse_gradient_is_refused_as_paddles_kernels_do(make):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        ids = fluid.layers.data(name="ids", shape=[1], dtype="int64")
        emb = fluid.layers.embedding(ids, size=[10, 4], is_sparse=True)
        make().minimize(fluid.layers.mean(emb))
    exe = fluid.Executor(fluid.CPUPlace())
    scope = paddle.static.Scope()
    exe.run(startup, scope=scope)
    with pytest.raises(KernelError, match="dense parameter and gradient"):
        exe.run(main, feed={"ids": np.array([[1], [3]], "int64")}, scope=scope)


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_a_training_step_runs_on_the_strict_array_api(name):
    """The kernels hold to the array API (CuPy's): the strict run equals the NumPy one to the bit."""
    pytest.importorskip("array_api_strict")
    from test_array_api import _run_block_strict

    main, startup, *_ = fit_a_line_2x(optimizer=OPTIMIZERS[name][0]())
    scope = paddle.static.Scope()
    paddle.static.Executor().run(startup, scope=scope)
    state = sorted(n for n, v in scope.vars.items() if isinstance(v, np.ndarray))
    before = {n: np.array(scope.vars[n]) for n in state}
    got = _run_block_strict(main, {**before, "x": X, "y": Y}, state)
    want = paddle.static.Executor().run(main, feed={"x": X, "y": Y}, fetch_list=state, scope=scope)
    for n, g, w in zip(state, got, want):
        np.testing.assert_array_equal(g, w, err_msg=f"{name}: {n}")


def test_dpsgd_seed_field_is_paddles_debugging_hook():
    """Paddle's DpsgdOptimizer keeps `_seed` (None: the op's seed 0) for deterministic debugging runs."""
    opt = fluid.optimizer.Dpsgd(0.1, clip=1e6, batch_size=1.0, sigma=1.0)
    opt._seed = 45
    main, *_ = fit_a_line_2x(optimizer=opt)
    assert [op.attrs["seed"] for op in main.global_block().ops if op.type == "dpsgd"] == [45, 45]
