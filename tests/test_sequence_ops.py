"""Sequence layers and ops beyond the registry harness: the ops and attrs the layer functions build,
LoD errors at build and run time, LoD carried through pooling and gradients, and a sparse
embedding pooled per sequence and trained as Paddle's CTR models do."""

from __future__ import annotations

import numpy as np
import pytest

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.ir import FleetgraphError, KernelError, Program, ShapeError, program_guard, unique_name
from fleetgraph.ops.lod_tensor import create_lod_tensor


@pytest.fixture
def programs():
    """Fresh main and startup programs as the default ones, with fresh unique names."""
    main, startup = Program(), Program()
    main.random_seed = startup.random_seed = 7
    with program_guard(main, startup), unique_name.guard():
        yield main, startup


def _data(name, width=3, lod_level=1, dtype="float32"):
    return fluid.layers.data(name=name, shape=[width], dtype=dtype, lod_level=lod_level, stop_gradient=False)


def _only_op(program, op_type):
    (op,) = [op for op in program.global_block().ops if op.type == op_type]
    return op


def _run(main, feed, fetch):
    return fluid.Executor().run(main, feed=feed, fetch_list=fetch, scope=paddle.static.Scope(), return_numpy=False)


# -- the layer functions build Paddle's ops -------------------------------------------------------


def test_sequence_pool_builds_paddles_op_with_max_index_and_upper_cased_pool_type(programs):
    main, _ = programs
    x = _data("x")
    out = fluid.layers.sequence_pool(x, "Sum", pad_value=1)
    op = _only_op(main, "sequence_pool")
    assert op.inputs == {"X": ["x"]}
    assert op.outputs == {"Out": [out.name], "MaxIndex": ["sequence_pool_0.tmp_1"]}
    assert {k: op.attrs[k] for k in ("pooltype", "is_test", "pad_value")} == {
        "pooltype": "SUM",
        "is_test": False,
        "pad_value": 1.0,
    }
    assert out.name == "sequence_pool_0.tmp_0" and out.shape == (-1, 3) and out.lod_level == 0
    index = main.global_block().var("sequence_pool_0.tmp_1")
    assert index.dtype == "int32" and index.stop_gradient


def test_first_and_last_step_are_first_and_last_pooling(programs):
    main, _ = programs
    x = _data("x")
    paddle.static.nn.sequence_first_step(x)
    paddle.static.nn.sequence_last_step(x)
    assert [op.attrs["pooltype"] for op in main.global_block().ops] == ["FIRST", "LAST"]


def test_concat_reshape_and_expand_build_paddles_ops_and_lod_levels(programs):
    main, _ = programs
    a, b, y = _data("a"), _data("b"), _data("y", width=1, lod_level=2)
    dense = fluid.layers.data(name="dense", shape=[3], dtype="float32")
    joined = fluid.layers.sequence_concat([a, b])
    reshaped = fluid.layers.sequence_reshape(a, new_dim=6)
    expanded = fluid.layers.sequence_expand(a, y, ref_level=0)
    expanded_rows = paddle.static.nn.sequence_expand(dense, y)
    # shapes and lod levels as Paddle 2.6 infers them at build time
    assert (joined.shape, joined.lod_level) == ((-1, 3), 1)
    assert (reshaped.shape, reshaped.lod_level) == ((-1, 6), 1)
    assert (expanded.shape, expanded.lod_level) == ((-1, 3), 1)
    assert (expanded_rows.shape, expanded_rows.lod_level) == ((-1, 3), 0)
    assert _only_op(main, "sequence_concat").inputs == {"X": ["a", "b"]}
    assert _only_op(main, "sequence_reshape").attrs["new_dim"] == 6
    ops = [op for op in main.global_block().ops if op.type == "sequence_expand"]
    assert [(op.inputs, op.attrs["ref_level"]) for op in ops] == [
        ({"X": ["a"], "Y": ["y"]}, 0),
        ({"X": ["dense"], "Y": ["y"]}, -1),
    ]


# -- errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda x, s: fluid.layers.sequence_pool(x, "sum"), "sequence_pool: X 'x' has lod_level 0"),
        (lambda x, s: fluid.layers.sequence_concat([s, x]), "sequence_concat: X 'x' has lod_level 0"),
        (lambda x, s: fluid.layers.sequence_reshape(x, 1), "sequence_reshape: X 'x' has lod_level 0"),
        (lambda x, s: fluid.layers.sequence_expand(s, x), "sequence_expand: Y 'x' has lod_level 0"),
    ],
)
def test_a_variable_without_lod_is_refused_when_the_program_is_built(programs, build, message):
    x, s = fluid.layers.data(name="x", shape=[3], dtype="float32"), _data("s")
    with pytest.raises(ShapeError, match=f"{message}; expected a sequence \\(lod_level >= 1\\)"):
        build(x, s)


def test_an_unknown_pool_type_is_refused_when_the_program_is_built(programs):
    with pytest.raises(ShapeError, match="sequence_pool: pooltype 'MEDIAN' is unknown; expected one of AVERAGE, SUM"):
        fluid.layers.sequence_pool(_data("x"), "median")


def test_an_array_fed_to_a_sequence_variable_is_refused_at_run_time_with_a_hint(programs):
    main, _ = programs
    out = fluid.layers.sequence_pool(_data("x"), "sum")
    with pytest.raises(KernelError) as info:
        _run(main, {"x": np.ones((4, 3), "float32")}, [out])
    message = str(info.value)
    assert "(sequence_pool)" in message and "X='x' [4, 3] float32" in message
    assert "sequence_pool: X carries no LoD; feed it as a LoDTensor (fluid.create_lod_tensor, nested lists" in message


def test_a_reshape_that_does_not_fill_whole_rows_names_the_sequence(programs):
    main, _ = programs
    out = fluid.layers.sequence_reshape(_data("x", width=2), new_dim=4)
    with pytest.raises(
        KernelError, match=r"sequence 0 holds 2 values \(1 row\(s\) of width 2\); expected a multiple of"
    ):
        _run(main, {"x": create_lod_tensor(np.zeros((6, 2), "float32"), [[1, 5]])}, [out])


def test_concat_of_different_numbers_of_sequences_is_refused(programs):
    main, _ = programs
    out = fluid.layers.sequence_concat([_data("a"), _data("b")])
    feed = {"a": create_lod_tensor(np.zeros((3, 3), "float32"), [[2, 1]]), "b": [[[1, 2, 3]]] * 3}
    with pytest.raises(KernelError, match=r"sequence_concat: X\[1\] holds 3 sequences; expected 2, as X\[0\]"):
        _run(main, feed, [out])


def test_expand_of_rows_needs_one_row_per_sequence_of_y(programs):
    main, _ = programs
    x = fluid.layers.data(name="x", shape=[1], dtype="float32")
    out = fluid.layers.sequence_expand(x, _data("y", width=1))
    feed = {"x": np.zeros((2, 1), "float32"), "y": create_lod_tensor(np.zeros((6, 1), "float32"), [[2, 1, 3]])}
    with pytest.raises(KernelError, match="one row per sequence of level 0 of Y; expected 3 rows, got 2"):
        _run(main, feed, [out])


# -- values as Paddle gives them ------------------------------------------------------------------

# Paddle's sequence_pool docstring: sequences [1, 3], [2, 4, 6], [5, 1]; then an empty sequence
_DOC_X = create_lod_tensor(np.array([[1], [3], [2], [4], [6], [5], [1]], "float32"), [[2, 3, 2, 0]])


@pytest.mark.parametrize(
    "pool_type, expected",
    [
        ("average", [2, 4, 3, -1]),
        ("sum", [4, 12, 6, -1]),
        ("sqrt", [4 / np.sqrt(2), 12 / np.sqrt(3), 6 / np.sqrt(2), -1]),
        ("max", [3, 6, 5, -1]),
        ("last", [3, 6, 1, -1]),
        ("first", [1, 2, 5, -1]),
    ],
)
def test_each_pool_type_gives_paddles_values_and_pads_an_empty_sequence(programs, pool_type, expected):
    main, _ = programs
    out = fluid.layers.sequence_pool(_data("x", width=1), pool_type, pad_value=-1.0)
    (got,) = _run(main, {"x": _DOC_X}, [out])
    assert got.lod() == []
    np.testing.assert_allclose(got.data[:, 0], expected, rtol=1e-6)


def test_max_pool_index_names_the_first_row_holding_the_maximum(programs):
    main, _ = programs
    out = fluid.layers.sequence_pool(_data("x", width=1), "max")
    index = _only_op(main, "sequence_pool").outputs["MaxIndex"][0]
    feed = {"x": create_lod_tensor(np.array([[9], [1], [3], [3], [2]], "float32"), [[1, 0, 4]])}
    got, got_index = _run(main, feed, [out, index])
    np.testing.assert_array_equal(got.data, [[9], [0], [3]])
    assert got_index.data.dtype == np.int32 and got_index.data[:, 0].tolist() == [0, -1, 2]


def test_pooling_a_two_level_lod_keeps_the_upper_level(programs):
    main, _ = programs
    out = fluid.layers.sequence_pool(_data("x", width=2, lod_level=2), "sum")
    assert out.lod_level == 1
    rows = np.arange(14, dtype="float32").reshape(7, 2)
    (got,) = _run(main, {"x": create_lod_tensor(rows, [[2, 1, 2], [2, 0, 3, 1, 1]])}, [out])
    assert got.lod() == [[0, 2, 3, 5]]
    np.testing.assert_array_equal(got.data, [rows[0:2].sum(0), [0, 0], rows[2:5].sum(0), rows[5], rows[6]])


def test_the_gradient_of_a_sequence_input_carries_its_lod(programs):
    main, _ = programs
    x = _data("x", width=2)
    loss = fluid.layers.mean(fluid.layers.sequence_pool(fluid.layers.sequence_reshape(x, new_dim=1), "average"))
    (grad,) = fluid.gradients([loss], [x])
    feed = {"x": create_lod_tensor(np.ones((3, 2), "float32"), [[1, 2]])}
    (got,) = _run(main, feed, [grad])
    assert got.lod() == [[0, 1, 3]]
    # mean over 2 sequences of averages over 2 and 4 values
    np.testing.assert_allclose(got.data, [[1 / 4, 1 / 4], [1 / 8, 1 / 8], [1 / 8, 1 / 8]])


def test_concat_gradient_reaches_the_input_that_needs_it_when_another_stops_gradients(programs):
    main, _ = programs
    a, b = fluid.layers.data(name="a", shape=[2], dtype="float32", lod_level=1), _data("b", width=2)
    loss = fluid.layers.mean(fluid.layers.sequence_pool(fluid.layers.sequence_concat([a, b]), "sum"))
    (grad,) = fluid.gradients([loss], [b])
    feed = {
        "a": create_lod_tensor(np.ones((3, 2), "float32"), [[2, 1]]),
        "b": create_lod_tensor(np.ones((5, 2), "float32"), [[1, 4]]),
    }
    (got,) = _run(main, feed, [grad])
    assert got.lod() == [[0, 1, 5]]


# -- a sparse embedding pooled per sequence, trained -------------------------------------------------

_IDS = create_lod_tensor(np.array([[1], [4], [4], [7], [0], [4]], "int64"), [[3, 0, 1, 2]])
_LR = 0.1


def _ctr_tower(is_sparse: bool):
    """ids -> embedding -> sum per sequence -> fc -> mean, with SGD; returns (main, startup, loss)."""
    main, startup = Program(), Program()
    main.random_seed = startup.random_seed = 7
    with program_guard(main, startup), unique_name.guard():
        ids = fluid.layers.data(name="ids", shape=[1], dtype="int64", lod_level=1)
        emb = fluid.layers.embedding(ids, size=[10, 4], is_sparse=is_sparse)
        pred = fluid.layers.fc(fluid.layers.sequence_pool(emb, "sum"), size=1)
        loss = fluid.layers.mean(pred)
        fluid.optimizer.SGD(learning_rate=_LR).minimize(loss)
    return main, startup, loss


def _train(is_sparse: bool, steps: int):
    """The embedding table before and after each step, the fc weight at the start, the losses."""
    main, startup, loss = _ctr_tower(is_sparse)
    scope, exe = paddle.static.Scope(), fluid.Executor(fluid.CPUPlace())
    exe.run(startup, scope=scope)
    tables = [np.array(scope.vars["embedding_0.w_0"])]
    fc_w = np.array(scope.vars["fc_0.w_0"])
    losses = []
    for _ in range(steps):
        losses.append(float(exe.run(main, feed={"ids": _IDS}, fetch_list=[loss], scope=scope)[0]))
        tables.append(np.array(scope.vars["embedding_0.w_0"]))
    return tables, fc_w, losses


def test_sparse_embedding_under_sum_pooling_gets_the_dense_gradient_and_trains_alike():
    sparse_tables, fc_w, sparse_losses = _train(is_sparse=True, steps=3)
    dense_tables, _, dense_losses = _train(is_sparse=False, steps=3)
    # d mean(fc(sum_pool(emb))) / d emb[r] = (times r occurs) * fc_w / (4 sequences; the empty one counts)
    counts = np.bincount(np.array(_IDS)[:, 0], minlength=10)
    want = counts[:, None] * fc_w[:, 0][None, :] / 4
    for tables in (sparse_tables, dense_tables):
        np.testing.assert_allclose((tables[0] - tables[1]) / _LR, want, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(sparse_tables[-1], dense_tables[-1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sparse_losses, dense_losses, rtol=1e-5)
    assert sparse_losses[-1] < sparse_losses[0]


@pytest.mark.parametrize("pool_type", ["sum", "average", "sqrt", "max", "first", "last"])
def test_pooling_sequences_of_one_row_gives_the_rows_and_their_gradient_back(programs, pool_type):
    """A CTR slot holds one id per sample: every pooling is the row itself (a fast path)."""
    main, _ = programs
    x = _data("x", width=3)
    pooled = fluid.layers.sequence_pool(x, pool_type)
    (grad,) = fluid.gradients([fluid.layers.reduce_sum(fluid.layers.scale(pooled, 2.0))], [x])
    rows = np.arange(12, dtype="float32").reshape(4, 3)
    out, dx = _run(main, {"x": create_lod_tensor(rows, [[1, 1, 1, 1]])}, [pooled, grad])
    np.testing.assert_array_equal(np.array(out), rows)
    np.testing.assert_array_equal(np.array(dx), np.full((4, 3), 2.0))


# -- sequence_softmax, sequence_reverse, sequence_mask ----------------------------------------------


def test_softmax_reverse_and_mask_build_paddles_ops_slots_and_attrs(programs):
    main, _ = programs
    x = _data("x", width=1)
    lengths = fluid.layers.data(name="lengths", shape=[-1], dtype="int64", append_batch_size=False)
    soft = fluid.layers.sequence_softmax(x)
    rev = fluid.layers.sequence_reverse(x)
    mask = fluid.layers.sequence_mask(lengths, maxlen=5, dtype="float32")
    op = _only_op(main, "sequence_softmax")
    assert (op.inputs, op.outputs) == ({"X": ["x"]}, {"Out": [soft.name]})
    assert {k: op.attrs[k] for k in ("use_cudnn", "data_format")} == {"use_cudnn": False, "data_format": "AnyLayout"}
    assert _only_op(main, "sequence_reverse").outputs == {"Y": [rev.name]}
    op = _only_op(main, "sequence_mask")
    assert op.inputs == {"X": ["lengths"]} and {k: op.attrs[k] for k in ("maxlen", "out_dtype")} == {
        "maxlen": 5,
        "out_dtype": "float32",
    }
    assert (soft.shape, soft.lod_level, rev.lod_level) == ((-1, 1), 1, 1)
    assert (mask.shape, mask.dtype, mask.lod_level, mask.stop_gradient) == ((-1, 5), "float32", 0, True)


def test_sequence_softmax_normalises_each_sequence_and_keeps_the_lod(programs):
    main, _ = programs
    x = _data("x", width=1, dtype="float64")
    out = fluid.layers.sequence_softmax(x)
    feed = create_lod_tensor(np.array([[1.0], [2.0], [3.0], [0.5], [0.5]]), [[3, 0, 2]])
    (got,) = _run(main, {"x": feed}, [out])
    assert got.recursive_sequence_lengths() == [[3, 0, 2]]
    np.testing.assert_allclose(got.data.ravel(), [0.09003057, 0.24472847, 0.66524096, 0.5, 0.5], rtol=1e-6)


def test_sequence_softmax_of_rows_wider_than_one_value_is_refused(programs):
    with pytest.raises(ShapeError, match=r"expected one value a row, shape \[N, 1\] or \[N\]"):
        fluid.layers.sequence_softmax(_data("x", width=3))


def test_sequence_softmax_gradient_sums_to_zero_over_each_sequence(programs):
    main, _ = programs
    x = _data("x", width=1, dtype="float64")
    weighted = fluid.layers.elementwise_mul(fluid.layers.sequence_softmax(x), _data("w", width=1, dtype="float64"))
    (grad,) = fluid.gradients([fluid.layers.reduce_sum(weighted)], [x])
    rows = np.array([[0.3], [-1.0], [2.0], [0.7]])
    weights = np.array([[2.0], [1.0], [3.0], [5.0]])
    feed = {"x": create_lod_tensor(rows, [[1, 3]]), "w": create_lod_tensor(weights, [[1, 3]])}
    (got,) = _run(main, feed, [grad])
    e = np.exp(rows[1:, 0] - rows[1:, 0].max())
    y = e / e.sum()
    np.testing.assert_allclose(got.data.ravel(), [0.0, *(y * (np.array([1.0, 3.0, 5.0]) - y @ [1.0, 3.0, 5.0]))])
    assert got.recursive_sequence_lengths() == [[1, 3]]


def test_sequence_reverse_reverses_the_rows_of_each_sequence_as_paddles_example(programs):
    main, _ = programs
    x = _data("x", width=4, dtype="float64")
    y = fluid.layers.sequence_reverse(x)
    (grad,) = fluid.gradients([fluid.layers.reduce_sum(fluid.layers.elementwise_mul(y, y))], [x])
    rows = np.arange(1.0, 21.0).reshape(5, 4)
    got, dx = _run(main, {"x": create_lod_tensor(rows, [[2, 3]])}, [y, grad])
    np.testing.assert_array_equal(got.data, rows[[1, 0, 4, 3, 2]])
    assert got.recursive_sequence_lengths() == [[2, 3]]
    np.testing.assert_array_equal(dx.data, 2 * rows)  # reversed twice: each row's gradient lands on itself


def test_sequence_reverse_needs_one_lod_level_at_run_time(programs):
    main, _ = programs
    y = fluid.layers.sequence_reverse(_data("x", width=1, lod_level=2))
    feed = create_lod_tensor(np.zeros((3, 1), "float32"), [[1, 1], [2, 1]])
    with pytest.raises(KernelError, match="sequence_reverse: X has 2 LoD levels; expected 1"):
        _run(main, {"x": feed}, [y])


@pytest.mark.parametrize(
    "maxlen, expected",
    [
        (4, [[1, 1, 1, 0], [1, 0, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0]]),  # Paddle's docstring: x = [3, 1, 1, 0]
        (None, [[1, 1, 1], [1, 0, 0], [1, 0, 0], [0, 0, 0]]),  # no maxlen: the longest length
    ],
)
def test_sequence_mask_marks_the_first_length_steps_as_paddles(programs, maxlen, expected):
    main, _ = programs
    lengths = fluid.layers.data(name="lengths", shape=[-1], dtype="int64", append_batch_size=False)
    mask = fluid.layers.sequence_mask(lengths, maxlen=maxlen)
    (got,) = _run(main, {"lengths": np.array([3, 1, 1, 0])}, [mask])
    assert got.data.dtype == np.int64
    np.testing.assert_array_equal(got.data, expected)


def test_sequence_mask_takes_maxlen_from_a_variable(programs):
    main, _ = programs
    lengths = fluid.layers.data(name="lengths", shape=[-1], dtype="int64", append_batch_size=False)
    maxlen = fluid.layers.fill_constant([1], "int32", 10)
    mask = fluid.layers.sequence_mask(lengths, maxlen=maxlen, dtype="float32")
    assert _only_op(main, "sequence_mask").inputs == {"X": ["lengths"], "MaxLenTensor": [maxlen.name]}
    (got,) = _run(main, {"lengths": np.array([10, 9, 8])}, [mask])
    np.testing.assert_array_equal(got.data, np.arange(10) < np.array([[10], [9], [8]]))


# -- sequence_pad, sequence_unpad -----------------------------------------------------------------


def test_pad_and_unpad_build_paddles_ops_slots_and_attrs(programs):
    main, _ = programs
    x = _data("x", width=2)
    pad_value = fluid.layers.assign(np.array([0.0], "float32"))
    out, length = fluid.layers.sequence_pad(x, pad_value, maxlen=4)
    back = fluid.layers.sequence_unpad(out, length)
    op = _only_op(main, "sequence_pad")
    assert op.inputs == {"X": ["x"], "PadValue": [pad_value.name]}
    assert op.outputs == {"Out": [out.name], "Length": [length.name]} and op.attrs["padded_length"] == 4
    assert _only_op(main, "sequence_unpad").inputs == {"X": [out.name], "Length": [length.name]}
    assert (out.shape, out.lod_level, length.dtype, length.stop_gradient) == ((-1, 4, 2), 0, "int64", True)
    assert (back.shape, back.lod_level) == ((-1, 2), 1)


def test_sequence_pad_pads_each_sequence_as_paddles_example_and_unpad_undoes_it(programs):
    main, _ = programs
    x = _data("x", width=2, dtype="float64")
    pad_value = fluid.layers.assign(np.array([-1.0, -2.0]))  # Paddle's case 3: one value a column
    out, length = fluid.layers.sequence_pad(x, pad_value)
    back = fluid.layers.sequence_unpad(out, length)
    (grad,) = fluid.gradients([fluid.layers.reduce_sum(fluid.layers.elementwise_mul(back, back))], [x])
    rows = np.arange(1.0, 11.0).reshape(5, 2)  # Paddle's x.lod = [[0, 2, 5]]: a, b | c, d, e
    got, lengths, unpadded, dx = _run(main, {"x": create_lod_tensor(rows, [[2, 3]])}, [out, length, back, grad])
    np.testing.assert_array_equal(got.data, [[rows[0], rows[1], [-1, -2]], [rows[2], rows[3], rows[4]]])
    np.testing.assert_array_equal(lengths.data, [2, 3])
    np.testing.assert_array_equal(unpadded.data, rows)
    assert unpadded.recursive_sequence_lengths() == [[2, 3]]
    np.testing.assert_array_equal(dx.data, 2 * rows)


def test_sequence_pad_shorter_than_the_longest_sequence_is_refused(programs):
    main, _ = programs
    out, _ = fluid.layers.sequence_pad(_data("x", width=1), fluid.layers.assign(np.zeros(1, "float32")), maxlen=2)
    with pytest.raises(KernelError, match="sequence_pad: padded_length 2 is shorter than the longest sequence, 3"):
        _run(main, {"x": create_lod_tensor(np.zeros((4, 1), "float32"), [[1, 3]])}, [out])


def test_sequence_unpad_keeps_length_steps_of_each_row_as_paddles_example(programs):
    main, _ = programs
    x = fluid.layers.data(name="x", shape=[3, 5], dtype="float64", append_batch_size=False, stop_gradient=False)
    length = fluid.layers.data(name="length", shape=[3], dtype="int64", append_batch_size=False)
    out = fluid.layers.sequence_unpad(x, length)
    (grad,) = fluid.gradients([fluid.layers.reduce_sum(out)], [x])
    rows = np.arange(1.0, 16.0).reshape(3, 5)
    got, dx = _run(main, {"x": rows, "length": np.array([2, 3, 4])}, [out, grad])
    np.testing.assert_array_equal(got.data.ravel(), [1, 2, 6, 7, 8, 11, 12, 13, 14])
    assert got.data.shape == (9, 1) and got.recursive_sequence_lengths() == [[2, 3, 4]]
    np.testing.assert_array_equal(np.array(dx), np.arange(5) < np.array([[2], [3], [4]]))


# -- sequence_expand_as ---------------------------------------------------------------------------


def test_sequence_expand_as_repeats_each_row_as_paddles_example(programs):
    main, _ = programs
    x = fluid.layers.data(name="x", shape=[1], dtype="float64", stop_gradient=False)
    y = _data("y", width=1, dtype="float64")
    out = fluid.layers.sequence_expand_as(x, y)
    op = _only_op(main, "sequence_expand_as")
    assert (op.inputs, op.outputs) == ({"X": ["x"], "Y": ["y"]}, {"Out": [out.name]})
    assert (out.shape, out.lod_level) == ((-1, 1), 1)
    (grad,) = fluid.gradients([fluid.layers.reduce_sum(out)], [x])
    rows = np.array([[1.0], [2.0], [3.0], [4.0]])  # Paddle's x = [[a], [b], [c], [d]], y.lod = [[3, 3, 1, 1]]
    feed = {"x": rows, "y": create_lod_tensor(np.zeros((8, 1)), [[3, 3, 1, 1]])}
    got, dx = _run(main, feed, [out, grad])
    np.testing.assert_array_equal(got.data.ravel(), [1, 1, 1, 2, 2, 2, 3, 4])
    assert got.recursive_sequence_lengths() == [[3, 3, 1, 1]]
    np.testing.assert_array_equal(np.array(dx).ravel(), [3, 3, 1, 1])  # each row's repeats summed back


def test_sequence_expand_as_needs_a_row_of_x_per_sequence_of_y(programs):
    main, _ = programs
    out = fluid.layers.sequence_expand_as(fluid.layers.data(name="x", shape=[1], dtype="float32"), _data("y", width=1))
    feed = {"x": np.zeros((2, 1), "float32"), "y": create_lod_tensor(np.zeros((3, 1), "float32"), [[1, 1, 1]])}
    with pytest.raises(KernelError, match="sequence_expand_as: X has 2 rows; expected one per sequence of Y, 3"):
        _run(main, feed, [out])


# -- sequence_enumerate ---------------------------------------------------------------------------


def test_sequence_enumerate_gives_each_rows_window_as_paddles_example(programs):
    main, _ = programs
    x = fluid.layers.data(name="x", shape=[1], dtype="int32", lod_level=1)
    out = fluid.layers.sequence_enumerate(x, win_size=2)
    op = _only_op(main, "sequence_enumerate")
    assert (op.inputs, op.outputs) == ({"X": ["x"]}, {"Out": [out.name]})
    assert {k: op.attrs[k] for k in ("win_size", "pad_value")} == {"win_size": 2, "pad_value": 0}
    assert (out.shape, out.dtype, out.lod_level, out.stop_gradient) == ((-1, 2), "int32", 1, True)
    feed = create_lod_tensor(np.array([[1], [2], [3], [4], [5]], "int32"), [[3, 2]])
    (got,) = _run(main, {"x": feed}, [out])
    np.testing.assert_array_equal(got.data, [[1, 2], [2, 3], [3, 0], [4, 5], [5, 0]])
    assert got.recursive_sequence_lengths() == [[3, 2]]


def test_sequence_enumerate_of_float_ids_is_refused_when_the_program_is_built(programs):
    with pytest.raises(ShapeError, match="sequence_enumerate: X 'x' is float32; expected int32 or int64 ids"):
        fluid.layers.sequence_enumerate(_data("x", width=1), win_size=2)


def test_sequence_conv_pool_is_a_window_convolution_then_a_max_over_each_sequence():
    """fluid.nets.sequence_conv_pool against NumPy with the program's own parameters: a centred
    window of 3 rows (zeros past each end), tanh, then each sequence's maximum."""
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("x", [-1, 2], "float32", lod_level=1)
        pooled = fluid.nets.sequence_conv_pool(x, num_filters=4, filter_size=3, act="tanh", pool_type="max")
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    rows = np.random.default_rng(0).standard_normal((5, 2)).astype("float32")
    feed = {"x": fluid.create_lod_tensor(rows, [[3, 2]], fluid.CPUPlace())}
    (got,) = exe.run(main, feed=feed, fetch_list=[pooled], scope=scope)
    w, b = (np.array(scope.vars[p.name]) for p in main.all_parameters())
    want = []
    for seq in (rows[:3], rows[3:]):
        padded = np.concatenate([np.zeros((1, 2)), seq, np.zeros((1, 2))])
        windows = np.stack([padded[t : t + 3].reshape(-1) for t in range(len(seq))])
        want.append(np.tanh(windows @ w + b).max(axis=0))
    np.testing.assert_allclose(got, np.stack(want), rtol=1e-5)


def test_sequence_conv_refuses_padding_false_and_strides():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.data("x", [-1, 2], "float32", lod_level=1)
        with pytest.raises(FleetgraphError, match="padding=False is not supported"):
            fluid.layers.sequence_conv(x, 4, padding=False)
        with pytest.raises(FleetgraphError, match="filter_stride 2; only 1"):
            fluid.layers.sequence_conv(x, 4, filter_stride=2)
