"""Distributed tables: the lazily grown SparseTable, its ops, the optimizers on it, and the
parameter-server rewrite that keeps a sparsely looked-up table on the pservers only."""

from __future__ import annotations

import numpy as np
import pytest
from models import SPARSE_SLOTS, SPARSE_VOCAB, SPARSE_WIDTH, global_batches, sparse_ctr
from ps_helpers import TWO_PSERVERS, check_golden, role_dump, transpile

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.ir import FleetgraphError, KernelError, Program, program_guard, unique_name
from fleetgraph.ops.counter_rng import draw_full
from fleetgraph.ops.rng import generator_for
from fleetgraph.ops.selected_rows import SelectedRows
from fleetgraph.ops.sparse_table import IdIndex, RowInit, SparseTable

UNIFORM = RowInit("uniform_random", (("max", 0.5), ("min", -0.5)), seed=7, key_name="emb")


def _dense_init(height, width):
    return draw_full("uniform_random", {"min": -0.5, "max": 0.5}, generator_for(7, "emb"), (height, width), "float32")


# -- the index and the table -----------------------------------------------------------------------


def test_id_index_gives_positions_in_first_seen_order_through_collisions_and_growth():
    index = IdIndex(capacity=8)
    ids = np.random.default_rng(0).choice(10**12, size=5000, replace=False)
    for chunk in np.array_split(ids, 7):
        assert (index.find(chunk) == -1).all()
        index.add(chunk)
    np.testing.assert_array_equal(index.find(ids), np.arange(5000))
    np.testing.assert_array_equal(index.find(np.array([ids[42], -5, ids[7]])), [42, -1, 7])


def test_a_lazy_table_grows_rows_equal_to_the_dense_init():
    table = SparseTable(1000, 3, "float32", UNIFORM)
    rows = table.lookup([999, 5, 5, 17])
    assert len(table) == 3  # three distinct ids, three rows
    np.testing.assert_array_equal(rows, _dense_init(1000, 3)[[999, 5, 5, 17]])
    np.testing.assert_array_equal(table.to_dense(), _dense_init(1000, 3))


def test_a_table_block_draws_the_rows_of_the_whole_variable_at_its_offset():
    block = SparseTable(400, 3, "float32", UNIFORM, offset=600)
    np.testing.assert_array_equal(block.lookup([0, 399]), _dense_init(1000, 3)[[600, 999]])


def test_a_table_memory_grows_with_the_ids_seen_not_its_height():
    table = SparseTable(10_000_001, 10, "float32", UNIFORM)
    table.lookup(np.arange(0, 10_000_000, 10_000))
    assert len(table) == 1000 and table.nbytes < 1_000_000


@pytest.mark.parametrize("ids", [100_000, 131_073])  # a typical count and one just past a doubling
def test_an_index_costs_at_most_48_bytes_per_id_and_the_rows_twice_their_size(ids):
    table = SparseTable(10_000_001, 10, "float32", UNIFORM)
    table.lookup(np.random.default_rng(0).choice(10_000_001, size=ids, replace=False))
    assert table.index.nbytes <= 48 * ids + 8  # ids, then slots at most half full: no key copies
    assert table.nbytes - table.index.nbytes <= 2 * 40 * ids


def test_an_id_outside_the_table_is_one_clear_error():
    with pytest.raises(FleetgraphError, match=r"id 1000 is outside the table; expected ids in \[0, 1000\)"):
        SparseTable(1000, 3, "float32", UNIFORM).lookup([3, 1000])


def test_optimizer_state_follows_its_table_rows_in_the_same_positions():
    table = SparseTable(100, 2, "float32", UNIFORM)
    moment = SparseTable(100, 2, "float32", RowInit("fill_constant", (("value", 0.5),)))
    table.lookup([4, 9])
    moment.follow(table)
    table.lookup([11])
    moment.follow(table)
    assert moment.index is table.index and len(moment) == 3
    np.testing.assert_array_equal(moment.values, np.full((3, 2), 0.5))


def test_fake_init_gives_a_shape_without_memory():
    main, startup = Program(), Program()
    with program_guard(main, startup):
        w = startup.global_block().create_var("w", [10_000_001, 10], "float32", persistable=True)
        startup.global_block().append_op("fake_init", outputs={"Out": [w]}, attrs={"shape": [10_000_001, 10]})
    scope = paddle.static.Scope()
    fluid.Executor().run(startup, scope=scope)
    assert scope.vars["w"].shape == (10_000_001, 10) and scope.vars["w"].strides == (0, 0)


# -- optimizers on a table equal the dense parameter's -------------------------------------------------

OPTIMIZER_OPS = {
    "sgd": lambda: fluid.optimizer.SGD(0.1),
    "momentum": lambda: fluid.optimizer.Momentum(0.1, momentum=0.9),
    "adagrad": lambda: fluid.optimizer.Adagrad(0.1),
    "adam": lambda: fluid.optimizer.Adam(0.05),
    "lazy_adam": lambda: paddle.optimizer.Adam(0.05, lazy_mode=True),
    "rmsprop": lambda: fluid.optimizer.RMSProp(0.05, momentum=0.5, centered=True),
    "adadelta": lambda: fluid.optimizer.Adadelta(1.0),
    "decayed_adagrad": lambda: fluid.optimizer.DecayedAdagrad(0.1),
    "ftrl": lambda: fluid.optimizer.Ftrl(0.1, l1=0.001, l2=0.01),
}


def _train_table(make_optimizer, lazy_table: bool):
    """A few steps of an embedding; with `lazy_table` its table (and state) are SparseTables."""
    main, startup = Program(), Program()
    main.random_seed = startup.random_seed = 7
    with program_guard(main, startup), unique_name.guard():
        ids = fluid.layers.data(name="ids", shape=[1], dtype="int64")
        attr = fluid.ParamAttr(name="emb", initializer=fluid.initializer.Uniform(-0.5, 0.5))
        emb = fluid.layers.embedding(ids, size=[50, 3], is_sparse=True, param_attr=attr)
        loss = fluid.layers.mean(fluid.layers.square(emb))
        make_optimizer().minimize(loss)
    scope = paddle.static.Scope()
    exe = fluid.Executor()
    exe.run(startup, scope=scope)
    if lazy_table:
        for name, value in list(scope.vars.items()):
            if isinstance(value, np.ndarray) and value.shape == (50, 3):
                init = UNIFORM if name == "emb" else RowInit("fill_constant", (("value", float(value.flat[0])),))
                scope.vars[name] = SparseTable(50, 3, "float32", init)
    for step in range(4):
        exe.run(main, feed={"ids": np.array([[1], [7], [7], [20 + step]])}, scope=scope)
    value = scope.vars["emb"]
    return value.to_dense() if lazy_table else value


@pytest.mark.parametrize("optimizer", sorted(OPTIMIZER_OPS))
def test_every_optimizer_trains_a_lazy_table_as_the_dense_parameter(optimizer):
    make = OPTIMIZER_OPS[optimizer]
    np.testing.assert_allclose(_train_table(make, True), _train_table(make, False), atol=1e-6)


@pytest.mark.parametrize("name", ["Adamax", "Lamb"])
def test_an_optimizer_that_needs_every_row_refuses_a_lazy_table(name):
    with pytest.raises(KernelError, match=f"{name.lower()} cannot update a sparse table"):
        _train_table(lambda: getattr(fluid.optimizer, name)(0.01), True)


def test_weight_decay_of_a_table_applies_at_the_rows_a_batch_touches():
    from fleetgraph.ops.math import _scale_kernel, sum_values

    table = SparseTable(50, 2, "float32", UNIFORM)
    decay = _scale_kernel(np, table, scale=0.1, bias=0.0, bias_after_scale=True)
    grad = sum_values(np, [SelectedRows(np.array([3, 3, 8]), np.ones((3, 2), "float32"), 50), decay])
    np.testing.assert_array_equal(grad.rows, [3, 8])
    np.testing.assert_allclose(grad.value, [[2, 2], [1, 1]] + 0.1 * table.lookup([3, 8]), rtol=1e-6)
    assert len(table) == 2


# -- the parameter-server rewrite ----------------------------------------------------------------------


def _ctr(optimizer=lambda: fluid.optimizer.SGD(0.1)):
    return sparse_ctr(optimizer)


def test_sparse_table_roles_match_golden():
    check_golden("sparse_ctr_sync", role_dump(_ctr))
    check_golden("sparse_ctr_geo", role_dump(_ctr, sync_mode=False, geo_sgd_mode=True, geo_sgd_need_push_nums=5))


def test_every_lookup_of_a_table_becomes_one_prefetch_from_the_pservers():
    t = transpile(_ctr)
    ops = t.get_trainer_program().global_block().ops
    lookups = [op for op in ops if op.type == "distributed_lookup_table"]
    assert len(lookups) == 1 and not [op for op in ops if op.type == "lookup_table"]
    (op,) = lookups
    assert op.input("Ids") == [f"C{i}" for i in range(SPARSE_SLOTS)] and op.input("W") == ["table"]
    assert op.attrs["table_names"] == ["table.block0", "table.block1"]
    assert op.attrs["height_sections"] == [2500, 2500] and op.attrs["endpoints"] == TWO_PSERVERS.split(",")
    assert not [op for op in ops if op.type == "recv" and "table.block0" in op.output_arg_names]


def test_an_id_outside_a_distributed_table_is_refused_before_any_request_naming_its_input():
    feed = next(global_batches("sparse", 1, 4))
    feed["C1"] = feed["C1"].copy()
    feed["C1"][2, 0] = SPARSE_VOCAB
    scope = paddle.static.Scope()
    scope.vars["table"] = np.broadcast_to(np.zeros(1, "float32"), (SPARSE_VOCAB, SPARSE_WIDTH))  # fake_init's
    message = rf"id {SPARSE_VOCAB} of Ids\[1\] \(element 2\) is outside the table of {SPARSE_VOCAB} rows"
    with pytest.raises(FleetgraphError, match=message) as raised:  # no pserver runs: nothing was sent
        paddle.static.Executor().run(transpile(_ctr).get_trainer_program(), feed=feed, scope=scope)
    assert "(distributed_lookup_table)" in str(raised.value) and "'C1'" in str(raised.value)


def test_the_trainer_startup_holds_a_placeholder_of_the_table_appended_last():
    t = transpile(_ctr)
    startup = t.get_trainer_startup_program().global_block().ops
    assert startup[-1].type == "fake_init" and startup[-1].output("Out") == ["table"]
    assert startup[-1].attrs["shape"] == [SPARSE_VOCAB, SPARSE_WIDTH]
    assert not [op for op in startup if op.type == "uniform_random" and op.output("Out") == ["table"]]


def test_each_pserver_grows_its_block_and_the_state_shaped_like_it_lazily():
    t = transpile(lambda: _ctr(lambda: fluid.optimizer.Adam(0.01)))
    main, startup = t.get_pserver_programs("127.0.0.1:6175")
    inits = {op.output("Out")[0]: op for op in startup.global_block().ops}
    block = inits["table.block1"]
    assert block.type == "lookup_sparse_table_init"
    assert (block.attrs["shape"], block.attrs["offset"]) == ([2500, SPARSE_WIDTH], 2500)
    assert (block.attrs["init_type"], block.attrs["rng_key"], block.attrs["min"]) == ("uniform_random", "table", -0.1)
    moment = inits["table_moment1_0.block1"]
    assert (moment.type, moment.attrs["init_type"], moment.attrs["value"]) == (
        "lookup_sparse_table_init",
        "fill_constant",
        0.0,
    )
    assert main.global_block().var("table.block1").type == "selected_rows"
    assert inits["table_beta1_pow_acc_0"].type == "fill_constant"


def test_a_geo_trainer_keeps_a_lazy_local_copy_and_pushes_its_touched_rows():
    t = transpile(_ctr, sync_mode=False, geo_sgd_mode=True, geo_sgd_need_push_nums=5)
    startup = {op.output_arg_names[0]: op for op in t.get_trainer_startup_program().global_block().ops if op.outputs}
    assert startup["table"].type == "lookup_sparse_table_init" and startup["table"].attrs["offset"] == 0
    ops = t.get_trainer_program().global_block().ops
    send = next(op for op in ops if op.type == "send" and op.input("X")[0] == "table")
    assert send.input("X") == ["table", "table@GRAD"] and send.attrs["is_sparse"]
    assert send.attrs["send_varnames"] == ["table.block0.delta", "table.block1.delta"]


def test_the_plan_reports_a_table_traffic_per_id_not_at_its_dense_size():
    plan = str(transpile(_ctr).plan)
    assert "table.block0: rows 0:2500 of table [5000, 4] -> [2500, 4] float32, distributed table" in plan
    assert "+ 32 B/step to it" in plan and "+ 16 B/step from it" in plan


def test_is_distributed_without_is_sparse_is_refused():
    def model():
        main, startup = Program(), Program()
        with program_guard(main, startup), unique_name.guard():
            ids = fluid.layers.data(name="ids", shape=[1], dtype="int64")
            emb = fluid.layers.embedding(ids, size=[100, 2], is_distributed=True)
            fluid.optimizer.SGD(0.1).minimize(fluid.layers.mean(emb))
        return main, startup

    with pytest.raises(FleetgraphError, match="is_distributed=True but is_sparse=False"):
        transpile(model)


def test_ids_computed_slot_after_slot_move_up_before_the_one_prefetch():
    """A model that reshapes each slot's ids, looks them up and pools them, slot after slot: the
    id ops move up so one distributed_lookup_table fetches every slot's rows."""

    def model():
        main, startup = Program(), Program()
        with program_guard(main, startup), unique_name.guard():
            pooled = []
            for i in range(3):
                ids = fluid.layers.reshape(fluid.layers.data(name=f"s{i}", shape=[1], dtype="int64"), [-1, 1])
                emb = fluid.layers.embedding(ids, size=[100, 2], is_sparse=True, param_attr=fluid.ParamAttr(name="t"))
                pooled.append(fluid.layers.scale(emb, 2.0))
            fluid.optimizer.SGD(0.1).minimize(fluid.layers.mean(fluid.layers.concat(pooled, axis=1)))
        return main, startup

    ops = [op.type for op in transpile(model).get_trainer_program().global_block().ops]
    assert ops[:5] == ["reshape2", "reshape2", "reshape2", "distributed_lookup_table", "scale"]
