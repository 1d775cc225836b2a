"""Tensor arrays and rank tables beyond the registry harness: the ops and variable types the layer
functions build, writes that grow an array, Paddle's unit-test values for splitting a batch of
sequences into time steps and back (one, two and three LoD levels, empty sequences), memories
shrinking with the batch, reordering by rank, gradients through them, arrays as Python lists in
eager mode, and the ops inside a While loop as DynamicRNN builds them."""

from __future__ import annotations

import numpy as np
import pytest

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.ir import FleetgraphError, KernelError, Program, program_guard, unique_name
from fleetgraph.ir.program import VarType
from fleetgraph.ops.lod_tensor import create_lod_tensor
from fleetgraph.transpiler import gradients

layers = fluid.layers


@pytest.fixture
def programs():
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        yield main, startup


def _index(k: int):
    return layers.fill_constant([1], "int64", k)


def _run(main, feed, fetch, scope=None):
    return fluid.Executor().run(
        main, feed=feed, fetch_list=fetch, scope=scope or paddle.static.Scope(), return_numpy=False
    )


def _ops(main) -> list[str]:
    return [op.type for op in main.global_block().ops]


# -- arrays: write, read, length ------------------------------------------------------------------


def test_array_layers_build_paddles_ops_on_a_tensor_array_variable(programs):
    main, _ = programs
    x = layers.data(name="x", shape=[3], dtype="float32")
    i = _index(0)
    array = layers.create_array("float32")
    assert array.type == VarType.LOD_TENSOR_ARRAY and array.name == "array_0.out"
    assert layers.array_write(x, i, array=array) is array
    out = layers.array_read(array, i)
    n = layers.array_length(array)
    assert _ops(main) == ["fill_constant", "write_to_array", "read_from_array", "lod_array_length"]
    write, read, length = main.global_block().ops[1:]
    assert (write.inputs, write.outputs) == ({"X": ["x"], "I": [i.name]}, {"Out": [array.name]})
    assert (read.inputs, read.outputs) == ({"X": [array.name], "I": [i.name]}, {"Out": [out.name]})
    assert (length.inputs, length.outputs) == ({"X": [array.name]}, {"Out": [n.name]})
    assert (out.shape, out.dtype, n.shape, n.dtype) == ((-1, 3), "float32", (1,), "int64")
    assert "LOD_TENSOR_ARRAY" in str(array)


def test_array_write_without_an_array_makes_one_named_after_the_layer(programs):
    x = layers.data(name="x", shape=[2], dtype="float32")
    array = layers.array_write(x, _index(0))
    assert array.type == VarType.LOD_TENSOR_ARRAY and array.name == "array_write_0.out"


def test_writes_grow_the_array_and_reads_give_each_element_back(programs):
    main, _ = programs
    rows = [layers.data(name=f"x{k}", shape=[2], dtype="float32") for k in range(3)]
    array = layers.create_array("float32")
    i = _index(0)
    for k, x in enumerate(rows):
        layers.array_write(x, i, array=array)
        if k < 2:
            i = layers.increment(i)
    layers.array_write(rows[0], _index(1), array=array)  # overwrite element 1
    reads = [layers.array_read(array, _index(k)) for k in range(3)]
    feed = {f"x{k}": np.full((k + 1, 2), float(k), "float32") for k in range(3)}
    *got, n = _run(main, feed, [*reads, layers.array_length(array)])
    for g, want in zip(got, [feed["x0"], feed["x0"], feed["x2"]]):
        np.testing.assert_array_equal(np.array(g), want)
    np.testing.assert_array_equal(np.array(n), [3])


def test_an_element_keeps_its_lod_through_the_array(programs):
    main, _ = programs
    x = layers.data(name="x", shape=[1], dtype="float32", lod_level=1)
    array = layers.array_write(x, _index(0))
    out = layers.array_read(array, _index(0))
    assert out.lod_level == 1
    (got,) = _run(main, {"x": create_lod_tensor(np.arange(5.0).reshape(5, 1).astype("float32"), [[2, 3]])}, [out])
    assert got.recursive_sequence_lengths() == [[2, 3]]


def test_reading_past_the_end_of_an_array_names_the_index_and_length(programs):
    main, _ = programs
    x = layers.data(name="x", shape=[2], dtype="float32")
    out = layers.array_read(layers.array_write(x, _index(0)), _index(2))
    with pytest.raises(KernelError, match=r"read_from_array: element I = 2 is past the end \(1 elements\)"):
        _run(main, {"x": np.zeros((1, 2), "float32")}, [out])


def test_reading_an_element_never_written_says_so(programs):
    main, _ = programs
    x = layers.data(name="x", shape=[2], dtype="float32")
    hole = layers.array_read(layers.array_write(x, _index(2)), _index(1))
    with pytest.raises(KernelError, match="read_from_array: element I = 1 was never written"):
        _run(main, {"x": np.zeros((1, 2), "float32")}, [hole])


def test_an_index_that_is_not_int64_is_refused(programs):
    x = layers.data(name="x", shape=[2], dtype="float32")
    with pytest.raises(TypeError, match="array_write: the index i must be an int64 Variable"):
        layers.array_write(x, layers.fill_constant([1], "int32", 0))
    with pytest.raises(TypeError, match="array_read: array must be a tensor array"):
        layers.array_read(x, _index(0))


def test_gradients_flow_from_a_read_back_to_the_written_element_only(programs):
    main, _ = programs
    a = layers.data(name="a", shape=[2], dtype="float64", stop_gradient=False)
    b = layers.data(name="b", shape=[2], dtype="float64", stop_gradient=False)
    array = layers.array_write(a, _index(0))
    layers.array_write(b, _index(1), array=array)
    loss = layers.reduce_sum(layers.elementwise_mul(layers.array_read(array, _index(1)), b))
    grad_a, grad_b = gradients([loss], [a, b])
    assert "read_from_array" in _ops(main) and "write_to_array" in _ops(main)[_ops(main).index("reduce_sum") :]
    feed = {"a": np.ones((2, 2)), "b": np.array([[1.0, 2.0], [3.0, 4.0]])}
    da, db = _run(main, feed, [grad_a, grad_b])
    np.testing.assert_array_equal(np.array(da), np.zeros((2, 2)))  # a was never read
    np.testing.assert_array_equal(np.array(db), 2 * feed["b"])


def test_tensor_array_to_tensor_concatenates_and_stacks_as_paddle(programs):
    main, _ = programs
    x = layers.data(name="x", shape=[2, 3], dtype="float32", append_batch_size=False)
    y = layers.data(name="y", shape=[2, 1], dtype="float32", append_batch_size=False)
    array = layers.array_write(x, _index(0))
    layers.array_write(y, _index(1), array=array)
    out, index = layers.tensor_array_to_tensor(array, axis=1)
    feed = {"x": np.arange(6.0, dtype="float32").reshape(2, 3), "y": np.array([[7.0], [8.0]], "float32")}
    got, sizes = _run(main, feed, [out, index])
    np.testing.assert_array_equal(np.array(got), np.concatenate([feed["x"], feed["y"]], axis=1))
    np.testing.assert_array_equal(np.array(sizes), np.array([3, 1], dtype=np.int32))


# -- rank tables: Paddle's test_lod_tensor_array_ops.py values ------------------------------------


def _split_and_join(lengths, expect, expect_lod, max_len, level=0):
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = layers.data(name="x", shape=[1], dtype="int32", lod_level=len(lengths))
        table = layers.lod_rank_table(x, level=level)
        longest = layers.max_sequence_len(table)
        array = layers.lod_tensor_to_array(x, table)
        array.persistable = True
        result = layers.array_to_lod_tensor(array, table)
    rows = int(sum(lengths[-1]))
    tensor = create_lod_tensor(np.arange(rows, dtype="int32").reshape(rows, 1), lengths)
    scope = paddle.static.Scope()
    got, n = _run(main, {"x": tensor}, [result, longest], scope)
    np.testing.assert_array_equal(got.data, tensor.data)
    assert got.recursive_sequence_lengths() == lengths
    assert int(np.array(n)[0]) == max_len
    if expect is not None:
        elements = scope.vars[array.name]
        assert len(elements) == len(expect)
        for element, want, lod in zip(elements, expect, expect_lod):
            np.testing.assert_array_equal(np.asarray(element).ravel(), want)
            levels = element.recursive_sequence_lengths() if hasattr(element, "levels") else []
            assert levels == lod


@pytest.mark.parametrize(
    "lengths, expect, expect_lod, max_len",
    [
        ([[3, 6, 1]], [[3, 0, 9], [4, 1], [5, 2], [6], [7], [8]], [[]] * 6, 6),
        ([[3, 6, 0, 1]], [[3, 0, 9], [4, 1], [5, 2], [6], [7], [8]], [[]] * 6, 6),
        (
            [[2, 3], [3, 6, 2, 6, 3]],
            [[9, 10, 0, 1, 2], [*range(11, 17), *range(3, 9)], [17, 18, 19]],
            [[[2, 3]], [[6, 6]], [[3]]],
            3,
        ),
        (
            [[3, 2, 4, 2], [3, 4, 4, 0, 1, 5, 2, 2, 2, 7, 1]],
            [
                [12, 13, 14, 15, 16, 0, 1, 2, 23, 24, 25, 26, 27, 28, 29],
                [17, 18, 3, 4, 5, 6, 11, 30],
                [19, 20, 7, 8, 9, 10],
                [21, 22],
            ],
            [[[5, 3, 0, 7]], [[2, 4, 1, 1]], [[2, 4]], [[2]]],
            4,
        ),
        (
            [[2, 3, 1], [2, 3, 1, 4, 2, 1], [3, 4, 4, 6, 4, 1, 1, 4, 4, 8, 6, 1, 4]],
            [[21, 0, 1, 2, 3, 4, 5, 6, 46, 47, 48, 49], [*range(22, 39), *range(7, 21)], list(range(39, 46))],
            [[[1, 2, 1], [1, 3, 4, 4]], [[4, 3], [1, 4, 4, 8, 4, 6, 4]], [[2], [6, 1]]],
            3,
        ),
    ],
    ids=["level_0", "level_0_empty_seq", "level_1", "level_1_empty_seq", "level_2"],
)
def test_lod_tensor_to_array_splits_steps_as_paddles_unit_test(lengths, expect, expect_lod, max_len):
    _split_and_join(lengths, expect, expect_lod, max_len)


def test_ranking_a_lower_level_keeps_the_levels_above_it():
    lengths = [[2, 3, 1], [2, 3, 1, 4, 2, 1], [3, 4, 4, 6, 4, 1, 1, 4, 4, 8, 6, 1, 4]]
    _split_and_join(lengths, None, None, 4, level=1)  # Paddle's level_2_skip_level


def test_the_split_and_join_gradient_is_one_per_row_as_paddles(programs):
    main, _ = programs
    x = layers.data(name="x", shape=[1], dtype="float32", lod_level=1, stop_gradient=False)
    table = layers.lod_rank_table(x)
    mean = layers.mean(layers.array_to_lod_tensor(layers.lod_tensor_to_array(x, table), table))
    (grad,) = gradients([mean], [x])
    feed = create_lod_tensor(np.arange(10, dtype="float32").reshape(10, 1), [[3, 6, 1]])
    (got,) = _run(main, {"x": feed}, [grad])
    np.testing.assert_allclose(np.array(got), np.full((10, 1), 0.1), rtol=1e-6)


def test_a_rank_table_ranks_longest_first_keeping_the_order_of_ties(programs):
    main, _ = programs
    x = layers.data(name="x", shape=[1], dtype="float32", lod_level=1)
    table = layers.lod_rank_table(x)
    assert table.type == VarType.LOD_RANK_TABLE and "LOD_RANK_TABLE" in str(table)
    (got,) = _run(main, {"x": create_lod_tensor(np.zeros((8, 1), "float32"), [[2, 3, 0, 3]])}, [table])
    np.testing.assert_array_equal(np.array(got), [[1, 3], [3, 3], [0, 2], [2, 0]])


# -- shrink_memory and reorder: Paddle's test_shrink_rnn_memory.py and test_reorder_lod_tensor.py --


@pytest.mark.parametrize("with_lod", [True, False], ids=["refer_lod", "no_lod"])
def test_memories_shrink_with_the_running_sequences_as_paddles_unit_test(programs, with_lod):
    main, _ = programs
    x = layers.data("x", shape=[100], dtype="float32", lod_level=1 if with_lod else 0, stop_gradient=False)
    ranked = layers.data("rank_table_tensor", shape=[1], dtype="float32", lod_level=1)
    table = layers.lod_rank_table(ranked)
    i = layers.zeros(shape=[1], dtype="int64")
    mem1 = layers.shrink_memory(x, i, table)
    i = layers.increment(i)
    mem2 = layers.shrink_memory(mem1, i, table)
    i = layers.increment(i)
    mem3 = layers.shrink_memory(mem2, i, table)
    (grad,) = gradients([layers.mean(mem3)], [x])
    rows = np.random.default_rng(0).random((6 if with_lod else 3, 100)).astype("float32")
    feed = {
        "x": create_lod_tensor(rows, [[2, 3, 1]]) if with_lod else rows,
        "rank_table_tensor": create_lod_tensor(np.zeros((6, 1), "float32"), [[1, 2, 3]]),
    }
    got = _run(main, feed, [mem1, mem2, mem3, grad])
    kept = (6, 5, 2) if with_lod else (3, 2, 1)
    for g, n in zip(got, kept):
        np.testing.assert_array_equal(np.array(g), rows[:n])
    np.testing.assert_allclose(np.array(got[3]).sum(), 1.0, rtol=1e-5)
    np.testing.assert_allclose(np.array(got[3])[kept[2] :], 0.0)


def test_reorder_by_rank_puts_sequences_in_the_tables_order_and_back_in_its_gradient(programs):
    main, _ = programs
    x = layers.data("x", shape=[2], dtype="float64", lod_level=1, stop_gradient=False)
    ranked = layers.data("ranked", shape=[1], dtype="float32", lod_level=1)
    out = layers.reorder_lod_tensor_by_rank(x, layers.lod_rank_table(ranked))
    weights = layers.data("w", shape=[2], dtype="float64", lod_level=1)
    (grad,) = gradients([layers.reduce_sum(layers.elementwise_mul(out, weights))], [x])
    rows = np.arange(12.0).reshape(6, 2)
    # the table ranks [1, 3, 2] as sequence 1 (3), 2 (2), 0 (1): x's sequences [a, b b, c c c] -> [b b, c c c, a]
    feed = {
        "x": create_lod_tensor(rows, [[1, 2, 3]]),
        "ranked": create_lod_tensor(np.zeros((6, 1), "float32"), [[1, 3, 2]]),
        "w": create_lod_tensor(np.arange(1.0, 13.0).reshape(6, 2), [[2, 3, 1]]),
    }
    got, dx = _run(main, feed, [out, grad])
    np.testing.assert_array_equal(got.data, rows[[1, 2, 3, 4, 5, 0]])
    assert got.recursive_sequence_lengths() == [[2, 3, 1]]
    np.testing.assert_array_equal(np.array(dx), np.arange(1.0, 13.0).reshape(6, 2)[[5, 0, 1, 2, 3, 4]])


# -- eager mode: Paddle 2.0's dygraph arrays are Python lists -------------------------------------


def test_eager_arrays_are_python_lists_as_paddles_dygraph():
    paddle.disable_static()
    try:
        array = layers.create_array("float32")
        assert array == []
        x, y = paddle.to_tensor(np.ones((2, 2), "float32")), paddle.to_tensor(np.zeros((1, 2), "float32"))
        zero, one = paddle.to_tensor(np.array([0], "int64")), paddle.to_tensor(np.array([1], "int64"))
        assert layers.array_write(x, zero, array=array) is array
        layers.array_write(y, one, array=array)
        layers.array_write(y, zero, array=array)
        assert len(array) == 2 and layers.array_length(array) == 2
        assert layers.array_read(array, one) is y and layers.array_read(array, zero) is y
        with pytest.raises(FleetgraphError, match="array_write: index 5 is past the array's end"):
            layers.array_write(x, paddle.to_tensor(np.array([5], "int64")), array=array)
    finally:
        paddle.enable_static()


# -- inside a While loop: the pieces DynamicRNN is built from --------------------------------------


def test_a_while_loop_writes_one_element_per_iteration(programs):
    main, _ = programs
    x = layers.data(name="x", shape=[2], dtype="float32")
    i, n = _index(0), _index(3)
    array = layers.create_array("float32")
    cond = layers.less_than(i, n)
    with layers.While(cond).block():
        layers.array_write(layers.scale(x, scale=2.0), i, array=array)
        layers.increment(i, in_place=True)
        layers.less_than(i, n, cond=cond)
    rows, _ = layers.tensor_array_to_tensor(array, axis=0)
    got, length = _run(main, {"x": np.ones((1, 2), "float32")}, [rows, layers.array_length(array)])
    np.testing.assert_array_equal(np.array(got), np.full((3, 2), 2.0))
    np.testing.assert_array_equal(np.array(length), [3])


def test_a_dynamic_rnn_built_from_a_while_loop_sums_each_sequence(programs):
    """DynamicRNN's own construction: steps split by rank, the memory shrunk to the sequences still
    running at each step, the step outputs joined back into the batch's order."""
    main, _ = programs
    x = layers.data(name="x", shape=[1], dtype="float32", lod_level=1)
    table = layers.lod_rank_table(x)
    steps, longest = layers.lod_tensor_to_array(x, table), layers.max_sequence_len(table)
    i = _index(0)
    memory = layers.scale(layers.array_read(steps, i), scale=0.0)
    outputs = layers.create_array("float32")
    cond = layers.less_than(i, longest)
    with layers.While(cond).block():
        total = layers.elementwise_add(layers.array_read(steps, i), layers.shrink_memory(memory, i, table))
        layers.array_write(total, i, array=outputs)
        layers.assign(total, output=memory)
        layers.increment(i, in_place=True)
        layers.less_than(i, longest, cond=cond)
    result = layers.array_to_lod_tensor(outputs, table)
    rows = np.arange(1, 11, dtype="float32").reshape(10, 1)
    (got,) = _run(main, {"x": create_lod_tensor(rows, [[3, 1, 2, 4]])}, [result])
    assert got.recursive_sequence_lengths() == [[3, 1, 2, 4]]
    np.testing.assert_array_equal(got.data.ravel(), [1, 3, 6, 4, 5, 11, 7, 15, 24, 34])  # running sums
