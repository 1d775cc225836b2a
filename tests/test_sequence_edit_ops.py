"""Behaviour of the sequence editing layers against Paddle's documented examples."""

from __future__ import annotations

import numpy as np
import pytest

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.ir import Program, program_guard, unique_name
from fleetgraph.ops.lod_tensor import create_lod_tensor


@pytest.fixture
def programs():
    """Fresh main and startup programs as the default ones, with fresh unique names."""
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        yield main, startup


def test_sequence_erase_drops_the_tokens_and_shortens_each_sequence_as_paddles_example(programs):
    main, _ = programs
    x = fluid.layers.data(name="x", shape=[1], dtype="int64", lod_level=1)
    out = fluid.layers.sequence_erase(x, tokens=[2, 3, 5])
    ids = np.array([2, 2, 6, 1, 3, 9, 6, 1, 0, 1], dtype="int64").reshape(-1, 1)
    (got,) = fluid.Executor().run(
        main,
        feed={"x": create_lod_tensor(ids, [[3, 3, 4]])},
        fetch_list=[out],
        scope=paddle.static.Scope(),
        return_numpy=False,
    )
    np.testing.assert_array_equal(got.data.ravel(), [6, 1, 9, 6, 1, 0, 1])
    assert got.lod() == [[0, 1, 3, 7]]
    assert out.stop_gradient


def test_sequence_slice_takes_a_window_of_each_sequence_and_routes_the_gradient_back(programs):
    main, _ = programs
    x = fluid.layers.data(name="x", shape=[2], dtype="float64", lod_level=1, stop_gradient=False)
    offset = fluid.layers.data(name="offset", shape=[1], dtype="int64")
    length = fluid.layers.data(name="length", shape=[1], dtype="int64")
    out = fluid.layers.sequence_slice(x, offset, length)
    (grad,) = fluid.gradients([fluid.layers.reduce_sum(out)], [x])
    rows = np.arange(14.0).reshape(7, 2)
    feed = {
        "x": create_lod_tensor(rows, [[3, 2, 2]]),  # Paddle's example: offset [0, 1, 1], length [2, 1, 1]
        "offset": np.array([[0], [1], [1]], "int64"),
        "length": np.array([[2], [1], [1]], "int64"),
    }
    got, dx = fluid.Executor().run(
        main, feed=feed, fetch_list=[out, grad], scope=paddle.static.Scope(), return_numpy=False
    )
    np.testing.assert_array_equal(got.data, rows[[0, 1, 4, 6]])
    assert got.recursive_sequence_lengths() == [[2, 1, 1]]
    np.testing.assert_array_equal(dx.data[:, 0], [1, 1, 0, 0, 1, 0, 1])


def test_sequence_scatter_adds_each_sequence_of_updates_into_its_row_as_paddles_example(programs):
    main, _ = programs
    x = fluid.layers.data(name="x", shape=[3, 6], dtype="float64", append_batch_size=False)
    index = fluid.layers.data(name="index", shape=[1], dtype="int64", lod_level=1)
    updates = fluid.layers.data(name="updates", shape=[1], dtype="float64", lod_level=1)
    out = fluid.layers.sequence_scatter(x, index, updates)
    ids = np.array([0, 1, 2, 5, 4, 3, 2, 1, 3, 2, 5, 4], "int64").reshape(-1, 1)
    ups = np.array([0.3, 0.3, 0.4, 0.1, 0.2, 0.3, 0.4, 0.0, 0.2, 0.3, 0.1, 0.4]).reshape(-1, 1)
    feed = {
        "x": np.ones((3, 6)),
        "index": create_lod_tensor(ids, [[3, 5, 4]]),
        "updates": create_lod_tensor(ups, [[3, 5, 4]]),
    }
    (got,) = fluid.Executor().run(main, feed=feed, fetch_list=[out], scope=paddle.static.Scope())
    expected = [[1.3, 1.3, 1.4, 1, 1, 1], [1, 1, 1.4, 1.3, 1.2, 1.1], [1, 1, 1.3, 1.2, 1.4, 1.1]]
    np.testing.assert_allclose(got, expected)
