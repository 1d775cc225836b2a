"""The executor runs a CTR model's embedding chains (lookup -> SUM sequence_pool per slot, one table)
as one step each way; every value is bit for bit what the ops one by one give, and a batch the fused
step does not cover runs the ops one by one."""

from __future__ import annotations

import numpy as np
import pytest

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.executor import plan as plan_module
from fleetgraph.executor.steps import run_steps
from fleetgraph.ir import KernelError, Program, program_guard, unique_name
from fleetgraph.ops.lod_tensor import LoDTensor
from fleetgraph.ops.selected_rows import SelectedRows

SLOTS, VOCAB, WIDTH, ROWS = 4, 40, 3, 6


def _model(optimizer, fluid_embedding=False):
    """Seed 000's shape: SLOTS one-level LoD slots looked up in one table and sum-pooled; with
    `fluid_embedding`, Fluid's embedding (lookup_table, [n, 1] ids) instead of 2.x's (lookup_table_v2)."""
    main, startup = Program(), Program()
    main.random_seed = startup.random_seed = 11
    with program_guard(main, startup), unique_name.guard():
        slots = [paddle.static.data(name=f"C{i}", shape=[-1, 1], lod_level=1, dtype="int64") for i in range(SLOTS)]
        label = paddle.static.data(name="label", shape=[-1, 1], dtype="int64")
        attr = paddle.ParamAttr(name="table", initializer=paddle.nn.initializer.Uniform())
        embed = fluid.layers.embedding if fluid_embedding else paddle.static.nn.embedding
        pooled = [
            paddle.static.nn.sequence_pool(
                embed(s, size=[VOCAB, WIDTH], is_sparse=True, param_attr=attr), pool_type="sum"
            )
            for s in slots
        ]
        hidden = paddle.concat([paddle.reshape(p, [-1, WIDTH]) for p in pooled], axis=1)
        predict = paddle.static.nn.fc(hidden, size=2, activation="softmax")
        loss = paddle.mean(paddle.nn.functional.cross_entropy(predict, label, use_softmax=False))
        optimizer().minimize(loss)
    return main, startup, loss, pooled


def _feed(rng, lengths=None):
    feed = {"label": rng.integers(0, 2, size=(ROWS, 1))}
    for i in range(SLOTS):
        lens = [1] * ROWS if lengths is None or i != 1 else lengths
        ids = rng.integers(0, VOCAB, size=(sum(lens), 1))
        feed[f"C{i}"] = fluid.create_lod_tensor(ids, [lens])
    return feed


def _train(monkeypatch, fused: bool, optimizer, feeds, extra_fetch=(), return_numpy=True, fluid_embedding=False):
    if not fused:
        monkeypatch.setattr(plan_module, "fuse_lookup_chains", lambda steps, block: steps)
    main, startup, loss, pooled = _model(optimizer, fluid_embedding)
    scope = paddle.static.Scope()
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup, scope=scope)
    fetch = [loss, *pooled, *extra_fetch]
    fetched = [exe.run(main, feed=f, fetch_list=fetch, scope=scope, return_numpy=return_numpy) for f in feeds]
    monkeypatch.undo()
    plan = exe.plans.get(main)
    return fetched, {n: np.array(scope.vars[n]) for n in ("table", "fc_0.w_0")}, plan


OPTIMIZERS = {
    "sgd": lambda: paddle.optimizer.SGD(learning_rate=0.5),
    "adam": lambda: paddle.optimizer.Adam(learning_rate=0.05),
    "lazy_adam": lambda: paddle.optimizer.Adam(learning_rate=0.05, lazy_mode=True),
}


@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
def test_fused_chains_train_bit_for_bit_as_the_ops_one_by_one(monkeypatch, optimizer):
    rng = np.random.default_rng(0)
    feeds = [_feed(rng) for _ in range(5)]
    fused, fused_params, plan = _train(monkeypatch, True, OPTIMIZERS[optimizer], feeds)
    alone, alone_params, alone_plan = _train(monkeypatch, False, OPTIMIZERS[optimizer], feeds)
    types = [s.op.type for s in plan.steps]
    assert types.count("lookup_table_v2") == 1 and "sequence_pool" not in types  # one forward step
    assert "sequence_pool_grad" not in types and "lookup_table_v2_grad" not in types  # one backward step
    assert len(alone_plan.steps) - len(plan.steps) == 4 * SLOTS - 1
    for a, b in zip(fused, alone):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(np.array(x), np.array(y))
    for name in fused_params:
        np.testing.assert_array_equal(fused_params[name], alone_params[name])
    assert not np.array_equal(fused_params["table"], _train(monkeypatch, True, OPTIMIZERS[optimizer], [])[1]["table"])


def test_the_fused_step_writes_every_intermediate_a_user_may_fetch(monkeypatch):
    rng = np.random.default_rng(1)
    feeds = [_feed(rng)]
    names = ["embedding_2.tmp_0", "embedding_2.tmp_0@GRAD", "table@GRAD"]
    fused, _, _ = _train(monkeypatch, True, OPTIMIZERS["sgd"], feeds, names, return_numpy=False)
    alone, _, _ = _train(monkeypatch, False, OPTIMIZERS["sgd"], feeds, names, return_numpy=False)
    for x, y in zip(fused[0][-3:], alone[0][-3:]):
        assert _parts(x) and len(_parts(x)) == len(_parts(y))
        for a, b in zip(_parts(x), _parts(y)):
            np.testing.assert_array_equal(a, b)


def _parts(value) -> list[np.ndarray]:
    """A fetched value's arrays: a LoDTensor's rows and offsets, a SelectedRows' rows and values."""
    if isinstance(value, np.ndarray) and value.dtype == object and value.ndim == 0:  # a fetched SelectedRows
        return _parts(value.item())
    if isinstance(value, LoDTensor):
        return [*_parts(value.data), *value.levels]
    if isinstance(value, SelectedRows):
        return [value.rows, value.value, np.array(value.height)]
    return [np.asarray(value)]


def test_a_batch_with_longer_or_empty_sequences_runs_the_ops_one_by_one(monkeypatch):
    rng = np.random.default_rng(2)
    feeds = [_feed(rng), _feed(rng, lengths=[2, 0, 1, 3, 1, 1]), _feed(rng)]
    fused, fused_params, _ = _train(monkeypatch, True, OPTIMIZERS["adam"], feeds)
    alone, alone_params, _ = _train(monkeypatch, False, OPTIMIZERS["adam"], feeds)
    for a, b in zip(fused, alone):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(np.array(x), np.array(y))
    np.testing.assert_array_equal(fused_params["table"], alone_params["table"])


def _error(monkeypatch, fused: bool, feed) -> str:
    with pytest.raises(KernelError) as e:
        _train(monkeypatch, fused, OPTIMIZERS["sgd"], [feed])
    monkeypatch.undo()
    return str(e.value)


def test_an_id_outside_the_table_is_named_by_the_op_of_its_slot(monkeypatch):
    feed = _feed(np.random.default_rng(3))
    feed["C2"] = fluid.create_lod_tensor(np.full((ROWS, 1), VOCAB + 5), [[1] * ROWS])
    message = _error(monkeypatch, True, feed)
    assert message == _error(monkeypatch, False, feed)
    assert "Ids='C2'" in message and f"ids must lie in [0, {VOCAB})" in message


def test_a_slot_left_out_of_the_feed_is_named(monkeypatch):
    feed = _feed(np.random.default_rng(4))
    del feed["C3"]
    message = _error(monkeypatch, True, feed)
    assert message == _error(monkeypatch, False, feed)
    assert "'C3' has no value" in message


def test_fluid_embeddings_lookup_table_chains_fuse_too(monkeypatch):
    rng = np.random.default_rng(5)
    feeds = [_feed(rng) for _ in range(3)]
    fused, fused_params, plan = _train(monkeypatch, True, OPTIMIZERS["adam"], feeds, fluid_embedding=True)
    alone, alone_params, _ = _train(monkeypatch, False, OPTIMIZERS["adam"], feeds, fluid_embedding=True)
    assert [s.op.type for s in plan.steps].count("lookup_table") == 1
    for a, b in zip(fused, alone):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(np.array(x), np.array(y))
    np.testing.assert_array_equal(fused_params["table"], alone_params["table"])


def test_a_pserver_trainers_table_gradients_are_one_step_bit_for_bit_as_its_ops():
    """A parameter-server trainer looks the rows up with distributed_lookup_table; its 4 pool grads, 4
    lookup grads and their sum become one step, which gives what those ops give."""
    main, startup, loss, _ = _model(OPTIMIZERS["sgd"])
    t = fluid.DistributeTranspiler()
    t.transpile(0, program=main, startup_program=startup, pservers="127.0.0.1:6170,127.0.0.1:6171", trainers=2)
    trainer = t.get_trainer_program()
    assert [op.type for op in trainer.global_block().ops].count("distributed_lookup_table") == 1
    plan = plan_module.Plan(trainer.global_block())
    fused = [s for s in plan.steps if getattr(s, "originals", None) and s.op.type != "sequence_pool"]
    assert len(fused) == 1 and [s.op.type for s in fused[0].originals].count("lookup_table_v2_grad") == SLOTS
    rng = np.random.default_rng(6)
    env = {"table": np.broadcast_to(np.zeros((), "float32"), (VOCAB, WIDTH))}  # the trainer's fake_init
    for name in fused[0].ins:
        if name.startswith("C"):
            env[name] = _feed(rng)[name]
        elif name.endswith("@GRAD"):
            env[name] = rng.normal(size=(ROWS, WIDTH)).astype("float32")
        elif name not in env:  # the pools' inputs: only their LoD is read
            env[name] = fluid.create_lod_tensor(np.zeros((ROWS, WIDTH), "float32"), [[1] * ROWS])
    alone = dict(env)
    run_steps(fused[0].originals, alone, np)
    run_steps(fused, env, np)
    for name in fused[0].outs[0]:
        assert _parts(env[name]) and len(_parts(env[name])) == len(_parts(alone[name]))
        for a, b in zip(_parts(env[name]), _parts(alone[name])):
            np.testing.assert_array_equal(a, b)


def _pserver_trainer_pools():
    main, startup, loss, _ = _model(OPTIMIZERS["sgd"])
    t = fluid.DistributeTranspiler()
    t.transpile(0, program=main, startup_program=startup, pservers="127.0.0.1:6170,127.0.0.1:6171", trainers=2)
    plan = plan_module.Plan(t.get_trainer_program().global_block())
    (pools,) = [s for s in plan.steps if getattr(s, "originals", None) and s.op.type == "sequence_pool"]
    return plan, pools


@pytest.mark.parametrize("lengths", [[1] * ROWS, [2] + [1] * (ROWS - 2) + [0]])
def test_a_pserver_trainers_pools_of_looked_up_rows_are_one_step_as_its_ops(lengths):
    """The SUM pools of the rows distributed_lookup_table gave (one per slot) run as one step; a batch
    whose sequences do not hold one id each runs them one by one: the same values either way."""
    plan, pools = _pserver_trainer_pools()
    assert [s.op.type for s in pools.originals] == ["sequence_pool"] * SLOTS
    assert [s.op.type for s in plan.steps].count("sequence_pool") == 1
    rng = np.random.default_rng(7)
    env = {n: fluid.create_lod_tensor(rng.normal(size=(ROWS, WIDTH)).astype("float32"), [lengths]) for n in pools.ins}
    alone = dict(env)
    run_steps(pools.originals, alone, np)
    run_steps([pools], env, np)
    for name in pools.outs[0]:
        if name is not None:
            np.testing.assert_array_equal(np.array(_parts(env[name])[0]), np.array(_parts(alone[name])[0]))
