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
