"""Beam search beyond the registry harness: the ops and attrs the layer functions build, Paddle's
unit-test values for one beam_search step and for beam_search_decode over tensor arrays written
step by step, a decoding loop whose finished source is pruned, gather_tree's documented example
(static and eager), and the dtype checks Paddle's error tests make."""

from __future__ import annotations

import numpy as np
import pytest
from test_tensor_array import _run, programs  # noqa: F401  (programs: a fixture, used by every test here)

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.ops.lod_tensor import LoDTensor

layers = fluid.layers
pytestmark = pytest.mark.usefixtures("programs")  # fresh default programs and unique names


def _beams(prefix: str, dtype: str, width: int = 1):
    return layers.data(name=prefix, shape=[width], dtype=dtype, lod_level=2)


def test_beam_search_builds_paddles_op_and_returns_the_parent_index_on_request():
    main = fluid.default_main_program()
    pre_ids, pre_scores = _beams("pre_ids", "int64"), _beams("pre_scores", "float32")
    ids, scores = _beams("ids", "int64", 3), _beams("scores", "float32", 3)
    selected_ids, selected_scores = layers.beam_search(pre_ids, pre_scores, ids, scores, beam_size=2, end_id=0)
    *_, parent = layers.beam_search(
        pre_ids, pre_scores, None, scores, 4, 1, is_accumulated=False, return_parent_idx=True
    )
    first, second = [op for op in main.global_block().ops if op.type == "beam_search"]
    assert first.inputs == {"pre_ids": ["pre_ids"], "pre_scores": ["pre_scores"], "scores": ["scores"], "ids": ["ids"]}
    assert set(first.outputs) == {"selected_ids", "selected_scores", "parent_idx"}
    assert {k: first.attrs[k] for k in ("level", "beam_size", "end_id", "is_accumulated")} == {
        "level": 0,
        "beam_size": 2,
        "end_id": 0,
        "is_accumulated": True,
    }
    assert "ids" not in second.inputs and second.attrs["is_accumulated"] is False
    assert (selected_ids.dtype, selected_ids.lod_level, selected_scores.dtype, parent.dtype) == (
        "int64",
        2,
        "float32",
        "int32",
    )


def test_one_beam_search_step_selects_as_paddles_unit_test():
    main = fluid.default_main_program()
    pre_ids = layers.data(name="pre_ids", shape=[1, 4], dtype="int64", append_batch_size=False)
    pre_scores = layers.data(name="pre_scores", shape=[1, 4], dtype="float32", append_batch_size=False)
    ids, scores = _beams("ids", "int64", 3), _beams("scores", "float32", 3)
    outs = layers.beam_search(pre_ids, pre_scores, ids, scores, beam_size=2, end_id=0, return_parent_idx=True)
    lod = [[0, 2, 4], [0, 1, 2, 3, 4]]
    feed = {
        "pre_ids": np.array([[1, 2, 3, 4]], dtype="int64"),
        "pre_scores": np.array([[0.1, 0.2, 0.3, 0.4]], dtype="float32"),
        "ids": LoDTensor(np.array([[4, 2, 5], [2, 1, 3], [3, 5, 2], [8, 2, 1]], dtype="int64"), lod),
        "scores": LoDTensor(
            np.array([[0.5, 0.3, 0.2], [0.6, 0.3, 0.1], [0.9, 0.5, 0.1], [0.7, 0.5, 0.1]], dtype="float32"), lod
        ),
    }
    selected_ids, selected_scores, parent = _run(main, feed, list(outs))
    np.testing.assert_array_equal(selected_ids.data, [[4], [2], [3], [8]])
    np.testing.assert_allclose(selected_scores.data, [[0.5], [0.6], [0.9], [0.7]])
    assert selected_ids.lod() == selected_scores.lod() == [[0, 2, 4], [0, 1, 2, 3, 4]]
    np.testing.assert_array_equal(np.array(parent), [0, 1, 2, 3])


def test_a_source_whose_beams_all_ended_is_pruned_one_step_later():
    main = fluid.default_main_program()
    pre_ids, pre_scores = _beams("pre_ids", "int64"), _beams("pre_scores", "float32")
    scores = _beams("scores", "float32", 3)
    selected_ids, selected_scores = layers.beam_search(pre_ids, pre_scores, None, scores, beam_size=2, end_id=0)
    lod = [[0, 2, 4], [0, 1, 2, 3, 4]]
    feed = {  # source 0: both prefixes ended (id 0); source 1 still running
        "pre_ids": LoDTensor(np.array([[0], [0], [5], [6]], dtype="int64"), lod),
        "pre_scores": LoDTensor(np.array([[-1.0], [-2.0], [-0.5], [-0.7]], dtype="float32"), lod),
        "scores": LoDTensor(np.full((4, 3), -0.1, dtype="float32") + np.arange(3, dtype="float32") / 10, lod),
    }
    got_ids, got_scores = _run(main, feed, [selected_ids, selected_scores])
    assert got_ids.lod() == [[0, 2, 4], [0, 0, 0, 1, 2]]  # source 0's prefixes keep nothing
    np.testing.assert_array_equal(got_ids.data.ravel(), [2, 2])  # column 2 of each running prefix
    np.testing.assert_allclose(got_scores.data.ravel(), [0.1, 0.1])


def test_beam_search_decode_traces_sentences_back_as_paddles_unit_test():
    main = fluid.default_main_program()
    steps = [
        ([[0, 1, 2], [0, 1, 2]], [0, 0]),
        ([[0, 1, 2], [0, 2, 4]], [2, 3, 4, 5]),
        ([[0, 2, 4], [0, 2, 2, 4, 4]], [3, 1, 5, 4]),
        ([[0, 2, 4], [0, 1, 2, 3, 4]], [1, 1, 3, 5]),
        ([[0, 2, 4], [0, 0, 0, 2, 2]], [5, 1]),
    ]
    ids_array, scores_array = layers.create_array("int64"), layers.create_array("float32")
    i = layers.fill_constant([1], "int64", 0)
    feed = {}
    for t, (lod, values) in enumerate(steps):
        ids = layers.data(name=f"ids{t}", shape=[1], dtype="int64", lod_level=2)
        scores = layers.data(name=f"scores{t}", shape=[1], dtype="float32", lod_level=2)
        layers.array_write(ids, i, array=ids_array)
        layers.array_write(scores, i, array=scores_array)
        i = layers.increment(i)
        feed[f"ids{t}"] = LoDTensor(np.array(values, dtype="int64").reshape(-1, 1), lod)
        feed[f"scores{t}"] = LoDTensor(np.array(values, dtype="float32").reshape(-1, 1), lod)
    sentence_ids, sentence_scores = layers.beam_search_decode(ids_array, scores_array, beam_size=2, end_id=1)
    got_ids, got_scores = _run(main, feed, [sentence_ids, sentence_scores])
    expected = [0, 2, 3, 1, 0, 2, 1, 0, 4, 5, 3, 5, 0, 4, 5, 3, 1]
    assert got_ids.lod() == got_scores.lod() == [[0, 2, 4], [0, 4, 7, 12, 17]]
    np.testing.assert_array_equal(got_ids.data, expected)
    np.testing.assert_array_equal(got_scores.data, np.array(expected, dtype="float32"))


_IDS = [[[2, 2], [6, 1]], [[3, 9], [6, 1]], [[0, 1], [9, 0]]]
_PARENTS = [[[0, 0], [1, 1]], [[1, 0], [1, 0]], [[0, 0], [0, 1]]]
_GATHERED = [[[2, 2], [1, 6]], [[3, 3], [6, 1]], [[0, 1], [9, 0]]]


def test_gather_tree_backtraces_paddles_documented_example():
    main = fluid.default_main_program()
    ids = layers.data(name="ids", shape=[3, 2, 2], dtype="int64", append_batch_size=False)
    parents = layers.data(name="parents", shape=[3, 2, 2], dtype="int64", append_batch_size=False)
    out = layers.gather_tree(ids, parents)
    assert out.shape == (3, 2, 2) and out.dtype == "int64"
    (got,) = _run(main, {"ids": np.array(_IDS), "parents": np.array(_PARENTS)}, [out])
    np.testing.assert_array_equal(np.array(got), _GATHERED)


def test_gather_tree_runs_eagerly():
    paddle.disable_static()
    try:
        got = layers.gather_tree(paddle.to_tensor(np.array(_IDS)), paddle.to_tensor(np.array(_PARENTS)))
        np.testing.assert_array_equal(got.numpy(), _GATHERED)
    finally:
        paddle.enable_static()


def test_wrong_inputs_are_refused_as_paddles_error_tests():
    pre_ids, pre_scores = _beams("pre_ids", "int64"), _beams("pre_scores", "float32")
    scores = _beams("scores", "float32", 4)
    with pytest.raises(TypeError, match="beam_search: pre_ids must be a Variable"):
        layers.beam_search(np.zeros((5, 1), "int64"), pre_scores, None, scores, 4, 1)
    with pytest.raises(TypeError, match="beam_search: pre_scores must be float32 or float64, got int64"):
        layers.beam_search(pre_ids, pre_ids, None, scores, 4, 1)
    with pytest.raises(TypeError, match="beam_search: ids must be a Variable or None"):
        layers.beam_search(pre_ids, pre_scores, np.zeros((5, 1), "int64"), scores, 4, 1)
    with pytest.raises(TypeError, match="beam_search_decode: ids must be a Variable"):
        layers.beam_search_decode(np.zeros((5, 1), "int64"), layers.create_array("float32"), 5, 0)
    with pytest.raises(TypeError, match="gather_tree: ids must be int32 or int64, got float32"):
        layers.gather_tree(scores, scores)
