"""The manipulation layers (expand_as, tile, full_like, unstack, gather, scatter, one_hot, argmax,
argmin, argsort) give Paddle's documented results, in a program and eagerly through the same layer
functions, and their gradients route as Paddle's kernels do."""

from __future__ import annotations

import numpy as np
import pytest

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.ir import KernelError, Program, program_guard, unique_name

# Paddle 1.8.5's argmax / argmin / argsort docstring input
IN1 = np.array([[[5, 8, 9, 5], [0, 0, 1, 7], [6, 9, 2, 4]], [[5, 2, 4, 2], [4, 7, 7, 9], [1, 7, 0, 6]]])


def run_static(build, **feeds):
    """build(*data variables) -> fetches, run in a fresh program on `feeds`."""
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        xs = [fluid.data(name, list(v.shape), str(v.dtype)) for name, v in feeds.items()]
        fetches = build(*xs)
    fetches = list(fetches) if isinstance(fetches, (list, tuple)) else [fetches]
    return fluid.Executor().run(main, feed=feeds, fetch_list=fetches, scope=paddle.static.Scope())


def run_eager(build, **feeds):
    paddle.disable_static()
    outs = build(*(paddle.to_tensor(v) for v in feeds.values()))
    return [o.numpy() for o in (outs if isinstance(outs, (list, tuple)) else [outs])]


both_modes = pytest.mark.parametrize("run", [run_static, run_eager], ids=["static", "eager"])


@both_modes
def test_argmax_and_argmin_match_paddles_docstring(run):
    got = run(
        lambda x: (
            [fluid.layers.argmax(x, axis=a) for a in (-1, 0, 1)] + [fluid.layers.argmin(x, axis=a) for a in (0, 1)]
        ),
        x=IN1.astype("int64"),
    )
    np.testing.assert_array_equal(got[0], [[2, 3, 1], [0, 3, 1]])
    np.testing.assert_array_equal(got[1], [[0, 0, 0, 0], [1, 1, 1, 1], [0, 0, 0, 1]])
    np.testing.assert_array_equal(got[2], [[2, 2, 0, 1], [0, 1, 1, 1]])
    np.testing.assert_array_equal(got[3], [[0, 1, 1, 1], [0, 0, 0, 0], [1, 1, 1, 0]])
    np.testing.assert_array_equal(got[4], [[1, 1, 1, 2], [2, 0, 2, 0]])
    assert got[0].dtype == np.int64


@both_modes
def test_argsort_matches_paddles_docstring(run):
    out, ids = run(lambda x: fluid.layers.argsort(x, axis=-1), x=IN1.astype("float32"))
    np.testing.assert_array_equal(
        out, [[[5, 5, 8, 9], [0, 0, 1, 7], [2, 4, 6, 9]], [[2, 2, 4, 5], [4, 7, 7, 9], [0, 1, 6, 7]]]
    )
    np.testing.assert_array_equal(
        ids, [[[0, 3, 1, 2], [0, 1, 2, 3], [2, 3, 0, 1]], [[1, 3, 2, 0], [0, 1, 2, 3], [2, 0, 3, 1]]]
    )
    (out,) = run(lambda x: fluid.layers.argsort(x, axis=1)[0], x=IN1.astype("float32"))
    np.testing.assert_array_equal(out[1], [[1, 2, 0, 2], [4, 7, 4, 6], [5, 7, 7, 9]])


@both_modes
def test_gather_takes_rows_as_paddles_example(run):
    x = np.array([[1, 2], [3, 4], [5, 6]], "float32")
    (out,) = run(lambda x, i: fluid.layers.gather(x, i), x=x, i=np.array([1, 2], "int64"))
    np.testing.assert_array_equal(out, [[3, 4], [5, 6]])


@both_modes
@pytest.mark.parametrize("overwrite, want", [(True, [[3, 3], [4, 4], [1, 1]]), (False, [[3, 3], [6, 6], [1, 1]])])
def test_scatter_overwrites_or_adds_repeated_indices_as_paddles_example(run, overwrite, want):
    x = np.array([[1, 1], [2, 2], [3, 3]], "float32")
    updates = np.array([[1, 1], [2, 2], [3, 3], [4, 4]], "float32")
    (out,) = run(
        lambda x, i, u: fluid.layers.scatter(x, i, u, overwrite=overwrite),
        x=x,
        i=np.array([2, 1, 0, 1], "int64"),
        u=updates,
    )
    np.testing.assert_array_equal(out, want)


@both_modes
def test_one_hot_rows_and_out_of_range_ids_as_zeros(run):
    (out,) = run(lambda x: fluid.layers.one_hot(x, depth=4), x=np.array([[1], [1], [3], [0]], "int64"))
    np.testing.assert_array_equal(out, [[0, 1, 0, 0], [0, 1, 0, 0], [0, 0, 0, 1], [1, 0, 0, 0]])
    (out,) = run(
        lambda x: fluid.layers.one_hot_v2(x, depth=4, allow_out_of_range=True), x=np.array([1, 1, 5, 0], "int64")
    )
    np.testing.assert_array_equal(out, [[0, 1, 0, 0], [0, 1, 0, 0], [0, 0, 0, 0], [1, 0, 0, 0]])
    assert out.dtype == np.float32


def test_one_hot_refuses_an_out_of_range_id_unless_allowed():
    with pytest.raises(KernelError, match="outside"):
        run_static(lambda x: fluid.layers.one_hot(x, depth=4), x=np.array([[1], [5]], "int64"))


@both_modes
def test_expand_as_tile_and_full_like_as_paddles_examples(run):
    data = np.arange(6, dtype="float32").reshape(2, 3)
    got = run(
        lambda x, t: [
            fluid.layers.expand_as(x, t),
            fluid.layers.tile(x, [2, 1]),
            fluid.layers.tile(x, [2, 1, 2]),
            fluid.layers.full_like(x, 2.0),
        ],
        x=data,
        t=np.zeros((4, 6), "float32"),
    )
    np.testing.assert_array_equal(got[0], np.tile(data, (2, 2)))
    np.testing.assert_array_equal(got[1], np.tile(data, (2, 1)))
    np.testing.assert_array_equal(got[2], np.tile(data, (2, 1, 2)))
    np.testing.assert_array_equal(got[3], np.full((2, 3), 2.0))


@both_modes
def test_unstack_splits_along_an_axis(run):
    x = np.arange(30, dtype="float32").reshape(2, 3, 5)
    ys = run(lambda x: fluid.layers.unstack(x, axis=1), x=x)
    assert len(ys) == 3
    for i, y in enumerate(ys):
        np.testing.assert_array_equal(y, x[:, i])


def _gather_grad(overwrite):
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = fluid.data("x", [3, 2], "float32")
        x.stop_gradient = False
        i = fluid.data("i", [3], "int64")
        out = fluid.layers.gather(x, i, overwrite=overwrite)
        w = fluid.layers.assign(np.array([[1, 1], [10, 10], [100, 100]], "float32"))
        loss = fluid.layers.reduce_sum(out * w)
        (dx,) = fluid.gradients(loss, [x])
    feed = {"x": np.ones((3, 2), "float32"), "i": np.array([2, 0, 2], "int64")}
    return fluid.Executor().run(main, feed=feed, fetch_list=[dx], scope=paddle.static.Scope())[0]


def test_gather_gradient_adds_repeats_without_overwrite_and_keeps_the_last_with_it():
    np.testing.assert_array_equal(_gather_grad(False), [[10, 10], [0, 0], [101, 101]])
    np.testing.assert_array_equal(_gather_grad(True), [[10, 10], [0, 0], [100, 100]])


def test_unstack_gradient_is_zero_for_the_slices_the_loss_does_not_use():
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = fluid.data("x", [2, 3], "float32")
        x.stop_gradient = False
        ys = fluid.layers.unstack(x, axis=1)
        (dx,) = fluid.gradients(fluid.layers.reduce_sum(ys[0] * 2.0), [x])
    (got,) = fluid.Executor().run(
        main, feed={"x": np.ones((2, 3), "float32")}, fetch_list=[dx], scope=paddle.static.Scope()
    )
    np.testing.assert_array_equal(got, [[2, 0, 0], [2, 0, 0]])


def test_argsort_gradient_follows_each_value_back_eagerly():
    paddle.disable_static()
    x = paddle.to_tensor(np.array([3.0, 1.0, 2.0], "float32"))
    x.stop_gradient = False
    out, _ = fluid.layers.argsort(x, descending=True)
    fluid.layers.reduce_sum(out * paddle.to_tensor(np.array([1.0, 10.0, 100.0], "float32"))).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1, 100, 10])
