"""Sparse (SelectedRows) gradients in one process: they train exactly as dense ones, and each
optimizer touches the rows Paddle's touches."""

from __future__ import annotations

import numpy as np
import pytest

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.ir import Program, program_guard, unique_name
from fleetgraph.ops import SelectedRows

VOCAB, WIDTH = 50, 4
OPTIMIZERS = {
    "sgd": lambda: fluid.optimizer.SGD(learning_rate=0.1),
    "momentum": lambda: fluid.optimizer.Momentum(learning_rate=0.1, momentum=0.9),
    "adagrad": lambda: fluid.optimizer.Adagrad(learning_rate=0.1),
    "adam": lambda: fluid.optimizer.Adam(learning_rate=0.01),
    "lazy_adam": lambda: paddle.optimizer.Adam(learning_rate=0.01, lazy_mode=True),
    "sgd_l2": lambda: fluid.optimizer.SGD(learning_rate=0.1, regularization=fluid.regularizer.L2Decay(0.01)),
    "rmsprop": lambda: fluid.optimizer.RMSProp(learning_rate=0.01, momentum=0.5, centered=True),
    "adamax": lambda: fluid.optimizer.Adamax(learning_rate=0.01),
    "adadelta": lambda: fluid.optimizer.Adadelta(learning_rate=1.0),
    "decayed_adagrad": lambda: fluid.optimizer.DecayedAdagrad(learning_rate=0.1),
    "lamb": lambda: fluid.optimizer.Lamb(learning_rate=0.01),
    "ftrl": lambda: fluid.optimizer.Ftrl(learning_rate=0.1, l1=0.001, l2=0.01),
}


def _model(is_sparse: bool, optimizer: str):
    """Two id columns looked up in one table (their sparse gradients meet in a sum), then fc."""
    main, startup = Program(), Program()
    main.random_seed = startup.random_seed = 3
    with program_guard(main, startup), unique_name.guard():
        a = fluid.layers.data(name="a", shape=[1], dtype="int64")
        b = fluid.layers.data(name="b", shape=[1], dtype="int64")
        y = fluid.layers.data(name="y", shape=[1], dtype="float32")
        attr = fluid.ParamAttr(name="table")
        ea = fluid.layers.embedding(a, size=[VOCAB, WIDTH], is_sparse=is_sparse, param_attr=attr)
        eb = fluid.layers.embedding(b, size=[VOCAB, WIDTH], is_sparse=is_sparse, param_attr=attr)
        pred = fluid.layers.fc(fluid.layers.concat([ea, eb], axis=1), size=1)
        loss = fluid.layers.mean(fluid.layers.square_error_cost(pred, y))
        OPTIMIZERS[optimizer]().minimize(loss)
    return main, startup, loss


def _batches(steps=6, rows=8):
    rng = np.random.default_rng(0)
    for _ in range(steps):
        ids = rng.integers(0, VOCAB // 2, size=(2, rows, 1))  # the upper half of the table is never touched
        yield {"a": ids[0], "b": ids[1], "y": rng.normal(size=(rows, 1)).astype("float32")}


def _train(is_sparse: bool, optimizer: str):
    main, startup, loss = _model(is_sparse, optimizer)
    scope = paddle.static.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup, scope=scope)
    start = {n: np.array(v) for n, v in scope.vars.items() if v is not None}
    for feed in _batches():
        exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
    return start, {n: np.array(v) for n, v in scope.vars.items() if v is not None}, main


@pytest.mark.parametrize(
    "optimizer",
    ["sgd", "momentum", "adagrad", "adam", "sgd_l2", "rmsprop", "adamax", "adadelta", "decayed_adagrad", "lamb"],
)
def test_sparse_and_dense_embedding_train_to_the_same_parameters(optimizer):
    _, dense, _ = _train(False, optimizer)
    _, sparse, program = _train(True, optimizer)
    assert program.global_block().var("table@GRAD").type == "selected_rows"
    for name in ("table", "fc_0.w_0", "fc_0.b_0"):
        np.testing.assert_allclose(sparse[name], dense[name], atol=1e-6, err_msg=name)


def test_ftrl_with_a_sparse_gradient_updates_only_the_rows_a_batch_touches():
    """Dense FTRL sets every row from its linear accumulator, so a row no batch touched becomes zero;
    Paddle's sparse kernel updates the (merged) touched rows only, as the dense update of those rows."""
    start, sparse, _ = _train(True, "ftrl")
    _, dense, _ = _train(False, "ftrl")
    touched = np.unique(np.concatenate([np.concatenate([f["a"], f["b"]]).reshape(-1) for f in _batches()]))
    untouched = np.setdiff1d(np.arange(VOCAB), touched)
    np.testing.assert_array_equal(sparse["table"][untouched], start["table"][untouched])
    assert not dense["table"][untouched].any()

    from fleetgraph.ops.optimizer import _ftrl
    from fleetgraph.ops.selected_rows import SelectedRows

    rng = np.random.default_rng(1)
    param, sq, lin = (rng.normal(size=(6, 2)).astype("float32") for _ in range(3))
    sq = np.abs(sq)
    rows, values = np.array([4, 1, 4]), rng.normal(size=(3, 2)).astype("float32")
    want = [a[[1, 4]].copy() for a in (param, sq, lin)]
    merged = np.stack([values[1], values[0] + values[2]])
    _ftrl(np, want[0], merged, want[1], want[2], np.array([0.1], "float32"), l1=0.01, l2=0.1, lr_power=-0.5)
    before = param.copy()
    lr = np.array([0.1], "float32")
    _ftrl(np, param, SelectedRows(rows, values, 6), sq, lin, lr, l1=0.01, l2=0.1, lr_power=-0.5)
    np.testing.assert_allclose(param[[1, 4]], want[0], atol=1e-6)
    np.testing.assert_array_equal(param[[0, 2, 3, 5]], before[[0, 2, 3, 5]])


def test_regularizing_a_sparse_gradient_makes_a_dense_new_gradient_as_paddle():
    _, _, program = _train(True, "sgd_l2")
    block = program.global_block()
    sgd = next(op for op in block.ops if op.type == "sgd" and op.input("Param") == ["table"])
    assert sgd.input("Grad") == ["table@GRAD@NEWGRAD"] and block.var("table@GRAD@NEWGRAD").type == "dense_tensor"


def test_lazy_adam_leaves_untouched_rows_and_their_moments_bit_unchanged():
    start, end, _ = _train(True, "lazy_adam")
    untouched = slice(VOCAB // 2, VOCAB)
    for name in ("table", "table_moment1_0", "table_moment2_0"):
        np.testing.assert_array_equal(end[name][untouched], start[name][untouched], err_msg=name)
    assert not np.array_equal(end["table"][: VOCAB // 2], start["table"][: VOCAB // 2])


@pytest.mark.parametrize("lazy", [False, True])
def test_a_row_left_out_of_a_batch_keeps_moving_under_adam_unless_lazy(lazy):
    """Paddle's non-lazy Adam decays the moments of every row, so a row touched once keeps moving."""
    main, startup, loss = _model(True, "lazy_adam" if lazy else "adam")
    scope = paddle.static.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup, scope=scope)
    y = np.ones((1, 1), "float32")
    exe.run(main, feed={"a": [[7]], "b": [[8]], "y": y}, fetch_list=[loss], scope=scope)
    before = np.array(scope.vars["table"][7])
    exe.run(main, feed={"a": [[1]], "b": [[2]], "y": y}, fetch_list=[loss], scope=scope)
    assert np.array_equal(scope.vars["table"][7], before) == lazy


@pytest.mark.parametrize("distinct", [1, 3, 40, 2_000, 1_000_000])
def test_merging_sparse_rows_sums_each_row_as_one_segmented_sum_bit_for_bit(distinct):
    """merged() sums repeated rows only, when most rows are single: the values are those of one
    segmented sum over every row (float32 sums in the same order), the rows sorted and unique."""
    rng = np.random.default_rng(distinct)
    rows = rng.integers(0, distinct, 2_600)
    value = (rng.standard_normal((2_600, 10)) * 100).astype("float32")
    got = SelectedRows(rows, value, 1_000_000).merged(np)
    order = np.argsort(rows, kind="stable")
    unique, starts = np.unique(rows[order], return_index=True)
    np.testing.assert_array_equal(got.rows, unique)
    np.testing.assert_array_equal(got.value, np.add.reduceat(value[order], starts, axis=0))
