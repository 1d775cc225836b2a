"""LoD (variable-length) tensors: built, fed, carried through ops by the executor and fetched."""

from __future__ import annotations

import numpy as np
import pytest

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.ir import FleetgraphError, Program, program_guard, unique_name
from fleetgraph.ops.lod_tensor import LoDError, LoDTensor, create_lod_tensor


def test_create_lod_tensor_turns_lengths_into_offsets():
    t = create_lod_tensor(np.arange(5).reshape(5, 1), [[2, 3]])
    assert t.lod() == [[0, 2, 5]]
    assert t.recursive_sequence_lengths() == [[2, 3]]
    assert t.shape() == [5, 1] and t.has_valid_recursive_sequence_lengths()
    np.testing.assert_array_equal(np.array(t), np.arange(5).reshape(5, 1))


def test_create_lod_tensor_from_a_list_of_sequences_stores_one_value_per_row():
    t = create_lod_tensor([[1, 2], [3]], [[2, 1]])
    np.testing.assert_array_equal(np.array(t), [[1], [2], [3]])
    assert t.lod() == [[0, 2, 3]]


def test_two_level_lod_offsets_index_the_level_below():
    t = create_lod_tensor(np.zeros((6, 2)), [[2, 1], [1, 3, 2]])
    assert t.lod() == [[0, 2, 3], [0, 1, 4, 6]]


@pytest.mark.parametrize(
    "lengths, message",
    [
        ([[2, 2]], "LoD level 0 ends at 4, but the data has 3 rows"),
        ([[2, -1, 2]], r"expected lengths >= 0"),
        ([[1, 1], [1, 1, 1]], "LoD level 0 ends at 2, but level 1 has 3 rows"),
    ],
)
def test_a_lod_that_does_not_describe_its_data_is_one_clear_error(lengths, message):
    with pytest.raises(LoDError, match=message):
        create_lod_tensor(np.zeros((3, 1)), lengths)


def test_create_lod_tensor_checks_the_sequences_against_the_lengths():
    with pytest.raises(LoDError, match=r"lengths \[2, 1\] but recursive_seq_lens is \[\[1, 2\]\]"):
        create_lod_tensor([[1, 2], [3]], [[1, 2]])


@pytest.fixture
def embedding_program():
    main, startup = Program(), Program()
    main.random_seed = startup.random_seed = 1
    with program_guard(main, startup), unique_name.guard():
        ids = fluid.layers.data(name="ids", shape=[1], dtype="int64", lod_level=1)
        emb = fluid.layers.embedding(ids, size=[10, 3])
        hidden = fluid.layers.fc(emb, size=2, act="relu")
    scope = paddle.static.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup, scope=scope)
    return exe, main, scope, emb, hidden


def test_ops_that_map_rows_to_rows_keep_the_lod_of_their_input(embedding_program):
    exe, main, scope, emb, hidden = embedding_program
    assert emb.lod_level == 1 and hidden.lod_level == 1
    ids = create_lod_tensor(np.array([[1], [4], [7]], "int64"), [[2, 1]])
    out_emb, out_hidden = exe.run(main, feed={"ids": ids}, fetch_list=[emb, hidden], scope=scope, return_numpy=False)
    assert out_emb.lod() == out_hidden.lod() == [[0, 2, 3]]
    table = np.array(scope.vars["embedding_0.w_0"])
    np.testing.assert_allclose(np.array(out_emb), table[[1, 4, 7]])


def test_nested_lists_feed_a_lod_variable_one_list_per_sample(embedding_program):
    exe, main, scope, emb, _ = embedding_program
    (out,) = exe.run(main, feed={"ids": [[1, 4], [7]]}, fetch_list=[emb], scope=scope, return_numpy=False)
    assert out.lod() == [[0, 2, 3]]


def test_fetching_a_lod_value_as_an_array_asks_for_return_numpy_false(embedding_program):
    exe, main, scope, emb, _ = embedding_program
    with pytest.raises(FleetgraphError, match="holds LoD .*return_numpy=False"):
        exe.run(main, feed={"ids": [[1, 4], [7]]}, fetch_list=[emb], scope=scope)


def test_return_numpy_false_gives_lod_tensors_for_plain_values_too(embedding_program):
    exe, main, scope, _, _ = embedding_program
    (weights,) = exe.run(main, feed={"ids": [[1]]}, fetch_list=["embedding_0.w_0"], scope=scope, return_numpy=False)
    assert isinstance(weights, LoDTensor) and weights.lod() == [] and weights.shape() == [10, 3]


def test_a_fed_lod_that_does_not_match_the_rows_names_the_feed(embedding_program):
    exe, main, scope, emb, _ = embedding_program
    bad = LoDTensor(np.array([[1], [2]], "int64"), [[0, 1, 3]])
    with pytest.raises(LoDError, match="feed 'ids': LoD level 0 ends at 3, but the data has 2 rows"):
        exe.run(main, feed={"ids": bad}, fetch_list=[emb], scope=scope)


def test_a_lod_tensor_fed_to_a_plain_variable_gives_its_rows():
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = paddle.static.data(name="x", shape=[None, 2], dtype="float32")
        y = paddle.scale(x, 2.0)
    (out,) = fluid.Executor().run(
        main, feed={"x": create_lod_tensor(np.ones((3, 2), "float32"), [[1, 2]])}, fetch_list=[y]
    )
    np.testing.assert_array_equal(out, np.full((3, 2), 2.0))


def test_scope_tensors_report_the_lod_of_their_value():
    scope = paddle.static.Scope()
    scope.vars["t"] = create_lod_tensor(np.zeros((3, 1)), [[1, 2]])
    assert scope.find_var("t").get_tensor().lod() == [[0, 1, 3]]
    assert scope.find_var("t").get_tensor().recursive_sequence_lengths() == [[1, 2]]
