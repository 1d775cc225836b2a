"""Every op kernel, forward and gradient, run with `xp = array_api_strict` on the op registry's
cases: a kernel reaching for a NumPy-only function or method fails here, since CuPy (the GPU's
array module) is held to the array API, not to NumPy. The values must equal the NumPy run's.
The kernels that cannot be written in the array API are listed in NUMPY_ONLY, with the reason."""

from __future__ import annotations

import numpy as np
import pytest
from models import mlp
from op_cases import Case
from test_op_registry import ALL_CASES, GRAD_CASES, _build, _input_names

import fleetgraph as paddle
from fleetgraph.executor import Executor, Scope
from fleetgraph.executor.plan import Plans, RunContext
from fleetgraph.ir import KernelError, registered_ops
from fleetgraph.ops.lod_tensor import LoDTensor
from fleetgraph.transpiler import gradients

xps = pytest.importorskip("array_api_strict")

# Kernels that need what the array API does not have, each with the reason: on a GPU a
# device-specific path (cuDNN through CuPy, CuPy's own scatter and random streams) stands in.
NUMPY_ONLY: dict[str, str] = {
    "batch_norm": "batch norm: cuDNN on a GPU",
    "batch_norm_grad": "batch norm: cuDNN on a GPU",
    "sync_batch_norm": "batch_norm's kernel, its statistics all-reduced",
    "sync_batch_norm_grad": "batch_norm_grad's kernel, its sums all-reduced",
    "dropout": "its mask comes from the per-variable NumPy Generator streams (ops/rng.py)",
    "dropout_grad": "follows dropout's mask",
    "lookup_table_grad": "the dense gradient is a scatter-add (np.add.at), which the standard lacks",
    "lookup_table_v2_grad": "the dense gradient is a scatter-add (np.add.at), which the standard lacks",
    "auc": "a histogram of score buckets (np.bincount), which the standard lacks; its state stays on the host",
    "sequence_pool": "a segment reduction over LoD offsets (np.ufunc.reduceat), which the standard lacks",
    "sequence_pool_grad": "a segment reduction over LoD offsets (np.ufunc.reduceat)",
    "sequence_expand_grad": "sums the repeats of each row back by scatter-add (np.add.at)",
    "grid_sampler_grad": "the X gradient is a scatter-add (np.add.at), which the standard lacks",
}
# Kernels the standard could express, not ported yet.
NOT_PORTED_YET: dict[str, str] = {}
# Cases of a listed op whose path needs nothing NumPy-only: they run, and are checked, as any other.
NO_NUMPY_ONLY_PATH = {
    "forward": set(),
    "gradient": set(),
}
# Kernels no test here runs, and why.
NOT_RUN_HERE = {
    **dict.fromkeys(
        ["conditional_block", "conditional_block_grad", "while", "while_grad"],
        "runs a sub-block: test_control_flow.py::test_loops_and_branches_train_on_the_strict_array_api",
    ),
    **dict.fromkeys(
        ["recurrent", "recurrent_grad"],
        "runs a step block: test_static_rnn.py::test_static_rnn_trains_on_the_strict_array_api",
    ),
    **dict.fromkeys(
        ["uniform_random", "gaussian_random", "truncated_gaussian_random"],
        "draws from the counter-based NumPy streams (ops/counter_rng.py): a GPU draws its own",
    ),
    **dict.fromkeys(
        [
            "c_allreduce_sum",
            "c_broadcast",
            "c_comm_init",
            "c_sync_calc_stream",
            "c_sync_comm_stream",
            "c_allgather",
            "c_reducescatter",
        ],  # fmt: skip
        "communication: the ring moves host NumPy arrays (NCCL's path on a GPU); tests/test_overlap.py",
    ),
    **dict.fromkeys(
        ["send", "recv", "send_barrier", "fetch_barrier", "listen_and_serv", "distributed_lookup_table"],
        "parameter-server traffic: host arrays on the wire",
    ),
    **dict.fromkeys(
        ["split_selected_rows", "fake_init", "lookup_sparse_table_init"],
        "sparse tables and rows live on the host (pserver side)",
    ),
    **dict.fromkeys(["create_py_reader", "create_double_buffer_reader", "read"], "readers hand over host batches"),
    "average_accumulates": "ModelAverage's window sums: tests/test_optimizers.py",
}


def _to_strict(value):
    if isinstance(value, LoDTensor):
        return LoDTensor(_to_strict(value.data), value.levels)
    if isinstance(value, np.ndarray):
        return xps.asarray(value)
    return value


def _to_numpy(value):
    if isinstance(value, LoDTensor):
        return _to_numpy(value.data)
    return np.asarray(value)


def _run_strict(prog, feed: dict, fetch: list[str]) -> list[np.ndarray]:
    """Run block 0 of `prog` with every array an array_api_strict array and `xp = array_api_strict`."""
    from fleetgraph.executor.feed_fetch import check_feed

    block = prog.global_block()
    env = {n: _to_strict(check_feed(block.var(n), v)) for n, v in feed.items()}
    _run_plan(prog, env)
    return [_to_numpy(env[n]) for n in fetch]


def _run_plan(prog, env: dict) -> None:
    """Block 0 on `env` with `xp = array_api_strict`, kernels that need the run's context given one."""
    plans = Plans()
    plans.get(prog).run(env, xps, RunContext(plans, prog, Scope(), env, xps))


def _run_block_strict(prog, values: dict, fetch: list[str]) -> list[np.ndarray]:
    env = {n: _to_strict(v) for n, v in values.items()}
    _run_plan(prog, env)
    return [_to_numpy(env[n]) for n in fetch]


def _run_numpy(prog, feed: dict, fetch: list[str]) -> list[np.ndarray]:
    return [_to_numpy(v) for v in Executor().run(prog, feed=feed, fetch_list=fetch, scope=Scope(), return_numpy=False)]


def _cases(cases: list[Case], grad: bool) -> list:
    """Each case; one that runs a kernel listed above, and is not in NO_NUMPY_ONLY_PATH, must fail
    with the KernelError of a kernel that cannot run on the array API: a wrong value (an
    AssertionError) or a case that passes fails the test."""
    params = []
    for c in cases:
        kernels = (c.op_type, c.op_type + "_grad") if grad else (c.op_type,)
        why = [f"{k}: {r[k]}" for k in kernels for r in (NUMPY_ONLY, NOT_PORTED_YET) if k in r]
        if c.id in NO_NUMPY_ONLY_PATH["gradient" if grad else "forward"]:
            why = []
        marks = [pytest.mark.xfail(reason="; ".join(why), strict=True, raises=KernelError)] if why else []
        params.append(pytest.param(c, id=c.id, marks=marks))
    return params


@pytest.mark.parametrize("case", _cases(ALL_CASES, grad=False))
def test_forward_kernel_runs_on_the_strict_array_api(case: Case):
    prog, _, _, feed, outs = _build(case)
    names = [n for slot in outs.values() for n in slot]
    for name, got, want in zip(names, _run_strict(prog, feed, names), _run_numpy(prog, feed, names)):
        np.testing.assert_array_equal(got, want, err_msg=f"{case.id} {name}")


@pytest.mark.parametrize("case", _cases(GRAD_CASES, grad=True))
def test_gradient_kernel_runs_on_the_strict_array_api(case: Case):
    prog, block, op, feed, outs = _build(case)
    loss_vars = [n for s in (case.loss_outputs or tuple(outs)) for n in outs[s]]
    values = dict(zip(loss_vars, _run_numpy(prog, feed, loss_vars)))
    loss_vars = [n for n in loss_vars if values[n].dtype.kind == "f"]  # indices and masks carry no gradient
    terms = []
    for n in loss_vars:
        total = block.create_var(n + "_sum", dtype="float64")
        block.append_op("reduce_sum", {"X": [n]}, {"Out": [total.name]}, {"reduce_all": True})
        terms.append(total.name)
    loss = block.create_var("loss", (1,), "float64")
    block.append_op("sum", {"X": terms}, {"Out": [loss.name]})
    wrt = [
        n
        for slot, names in _input_names(case).items()  # fed variables: an array's elements
        if slot not in case.no_grad
        for n in names
        if np.asarray(feed[n]).dtype.kind == "f"
    ]
    names = [g.name for g in gradients([loss], [block.var(n) for n in wrt])]
    for name, got, want in zip(names, _run_strict(prog, feed, names), _run_numpy(prog, feed, names)):
        np.testing.assert_array_equal(got, want, err_msg=f"{case.id} {name}")


def test_every_excluded_kernel_is_a_registered_op():
    assert not (set(NUMPY_ONLY) | set(NOT_PORTED_YET) | set(NOT_RUN_HERE)) - set(registered_ops())


def test_every_case_said_to_need_nothing_numpy_only_is_a_case_of_a_listed_op():
    listed = set(NUMPY_ONLY) | set(NOT_PORTED_YET)
    for how, cases in (("forward", ALL_CASES), ("gradient", GRAD_CASES)):
        of_listed = {c.id for c in cases if {c.op_type, c.op_type + "_grad"} & listed}
        assert NO_NUMPY_ONLY_PATH[how] <= of_listed, how


def test_every_kernel_runs_here_or_is_listed_with_its_reason():
    ran = {c.op_type for c in ALL_CASES} | {c.op_type + "_grad" for c in GRAD_CASES}
    for optimizer in OPTIMIZERS.values():
        main = mlp(optimizer, hidden=(4,))[0]
        ran |= {op.type for op in main.global_block().ops}
    with_kernel = {t for t, d in registered_ops().items() if d.kernel is not None}
    assert sorted(with_kernel - ran - set(NOT_RUN_HERE)) == []


OPTIMIZERS = {  # the optimizer kernels, which the op cases leave to tests/test_optimizers.py
    "sgd": lambda: paddle.optimizer.SGD(0.1),
    "momentum": lambda: paddle.optimizer.Momentum(0.1, momentum=0.9, use_nesterov=True),
    "adam": lambda: paddle.optimizer.Adam(0.01),
    "adagrad": lambda: paddle.optimizer.Adagrad(0.1),
    "rmsprop": lambda: paddle.optimizer.RMSProp(0.01, momentum=0.5, centered=True),
    "adamax": lambda: paddle.optimizer.Adamax(0.01),
    "adadelta": lambda: paddle.optimizer.Adadelta(1.0),
    "decayed_adagrad": lambda: paddle.fluid.optimizer.DecayedAdagradOptimizer(0.1),
    "ftrl": lambda: paddle.fluid.optimizer.Ftrl(0.1, l1=0.001, l2=0.01),
    "lamb": lambda: paddle.optimizer.Lamb(0.01, lamb_weight_decay=0.01),
    "lars_momentum": lambda: paddle.fluid.optimizer.LarsMomentum(0.1, 0.9),
    # no noise: the test compares two runs exactly, and unseeded noise differs between them
    "dpsgd": lambda: paddle.fluid.optimizer.Dpsgd(0.1, clip=1.0, batch_size=16.0, sigma=0.0),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_a_training_step_runs_on_the_strict_array_api(name):
    main, startup, _, _, loss, _ = mlp(OPTIMIZERS[name], hidden=(4,))
    scope = Scope()
    Executor().run(startup, scope=scope)
    rng = np.random.default_rng(0)
    feed = {"image": rng.standard_normal((3, 784)).astype("float32"), "label": np.array([[1], [7], [3]])}
    state = sorted(n for n, v in scope.vars.items() if isinstance(v, np.ndarray))
    before = {n: np.array(scope.vars[n]) for n in state}
    got = _run_block_strict(main, {**before, **feed}, state + [loss.name])
    want = Executor().run(main, feed=feed, fetch_list=state + [loss.name], scope=scope)
    for n, g, w in zip(state + [loss.name], got, want):
        np.testing.assert_array_equal(g, w, err_msg=f"{name}: {n}")
