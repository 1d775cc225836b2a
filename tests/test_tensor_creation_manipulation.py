"""Paddle 2.0's creation, manipulation, random and search functions (`paddle.arange`, `paddle.gather`,
`paddle.unique`, `paddle.multinomial`, ...) and their Tensor methods, in dynamic mode (2.0's default)
and in static mode after paddle.enable_static(), against NumPy and the results in Paddle 2.0's
docstrings and unit tests; the random ones by shape, dtype, range and distribution."""

from __future__ import annotations

import numpy as np
import pytest

import fleetgraph as paddle
from fleetgraph.ir import Program, program_guard, unique_name

A = np.arange(24, dtype="float32").reshape(2, 3, 4)


def _static(build, *arrays):
    """build(*placeholders) in fresh programs after enable_static(), run once on `arrays`."""
    paddle.enable_static()
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        data = [paddle.static.data(f"in{i}", list(a.shape), a.dtype.name) for i, a in enumerate(arrays)]
        outs = build(*data)
        outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    feed = {f"in{i}": a for i, a in enumerate(arrays)}
    results = [np.asarray(v) for v in exe.run(main, feed=feed, fetch_list=outs)]
    paddle.disable_static()
    return results


def _both(build, *arrays):
    """The outputs of build in dynamic mode, after checking the static ones equal them (dtype too)."""
    eager = build(*(paddle.to_tensor(a) for a in arrays))
    eager = [o.numpy() for o in (eager if isinstance(eager, (list, tuple)) else [eager])]
    for s, e in zip(_static(build, *arrays), eager, strict=True):
        np.testing.assert_array_equal(s, e)
        assert s.dtype == e.dtype
    return eager


def _equal(got, want, dtype=None):
    np.testing.assert_array_equal(got, want)
    if dtype is not None:
        assert got.dtype == np.dtype(dtype)


# -- creation -------------------------------------------------------------------------------------


def test_creation_from_numbers_matches_paddle_docstrings():
    outs = _both(
        lambda: [
            paddle.arange(5),
            paddle.arange(3, 9, 2.0),
            paddle.arange(4.999, dtype="float32"),
            paddle.linspace(0, 10, 5),
            paddle.eye(2, 3),
            paddle.empty([2, 3], "int32"),
            paddle.assign(np.array([[1, 2], [3, 4]], "int64")),
        ]
    )
    _equal(outs[0], np.arange(5), "int64")  # 2.0's arange is int64 whatever the bounds
    _equal(outs[1], [3, 5, 7], "int64")
    _equal(outs[2], np.arange(5, dtype="float32"), "float32")
    _equal(outs[3], [0, 2.5, 5, 7.5, 10], "float32")
    _equal(outs[4], np.eye(2, 3), "float32")
    assert outs[5].shape == (2, 3) and outs[5].dtype == np.int32
    _equal(outs[6], [[1, 2], [3, 4]], "int64")


def test_like_functions_take_x_shape_and_dtype_unless_told():
    x = np.ones((2, 3), "int64")
    full, zeros, ones, empty = _both(
        lambda x: [
            paddle.full_like(x, 2.0),
            paddle.zeros_like(x, "float32"),
            paddle.ones_like(x),
            paddle.empty_like(x),
        ],
        x,
    )
    _equal(full, np.full((2, 3), 2), "int64")
    _equal(zeros, np.zeros((2, 3)), "float32")
    _equal(ones, x, "int64")
    assert empty.shape == (2, 3) and empty.dtype == np.int64


def test_diag_builds_a_banded_matrix_or_reads_a_diagonal():
    v, m = np.array([1, 2, 3], "int64"), np.array([[1, 2, 3], [4, 5, 6]], "int64")
    square, banded, padded, main, upper, lower = _both(
        lambda v, m: [
            paddle.diag(v),
            paddle.diag(v, offset=1),
            paddle.diag(v, padding_value=6),
            paddle.diag(m),
            paddle.diag(m, offset=1),
            paddle.diag(m, offset=-1),
        ],
        v,
        m,
    )
    _equal(square, np.diag([1, 2, 3]), "int64")
    _equal(banded, np.diag([1, 2, 3], 1))
    _equal(padded, [[1, 6, 6], [6, 2, 6], [6, 6, 3]])
    _equal(main, [1, 5])
    _equal(upper, [2, 6])
    _equal(lower, [4])


def test_meshgrid_tril_triu():
    a, b = np.array([1.0, 2], "float32"), np.array([3.0, 4, 5], "float32")
    ga, gb = _both(lambda a, b: paddle.meshgrid(a, b), a, b)
    want_a, want_b = np.meshgrid(a, b, indexing="ij")
    _equal(ga, want_a)
    _equal(gb, want_b)
    (ga2, _) = _both(lambda a, b: paddle.meshgrid([a, b]), a, b)
    _equal(ga2, want_a)
    m = A[0]
    low, up = _both(lambda m: [paddle.tril(m, -1), paddle.triu(m, 1)], m)
    _equal(low, np.tril(m, -1))
    _equal(up, np.triu(m, 1))


# -- search ---------------------------------------------------------------------------------------


def test_argmax_argmin_flatten_keepdim_and_dtype():
    x = np.array([[3.0, 1, 2], [0, 5, 4]], "float32")
    flat, rows, keep, small = _both(
        lambda x: [paddle.argmax(x), x.argmax(axis=1), paddle.argmin(x, 0, keepdim=True), x.argmin(-1, dtype="int32")],
        x,
    )
    _equal(flat, [4], "int64")
    _equal(rows, [0, 1], "int64")
    _equal(keep, [[1, 0, 0]], "int64")
    _equal(small, [1, 0], "int32")


def test_sort_argsort_index_select_index_sample():
    x = np.array([[3.0, 1, 2], [0, 5, 4]], "float32")
    ids, values, picked, sampled = _both(
        lambda x: [
            paddle.argsort(x, descending=True),
            paddle.sort(x, axis=0),
            x.index_select(paddle.assign(np.array([1, 0])), 1),
            paddle.index_sample(x, paddle.assign(np.array([[0], [2]]))),
        ],
        x,
    )
    _equal(ids, [[0, 2, 1], [1, 2, 0]], "int64")
    _equal(values, np.sort(x, 0))
    _equal(picked, x[:, [1, 0]])
    _equal(sampled, [[3], [4]])


def test_nonzero_where_masked_select():
    x = np.array([[3.0, 0, 2], [0, 5, 4]], "float32")
    coords, (rows, cols), kept, same, broadcast, selected = (
        _both(lambda x: paddle.nonzero(x), x)[0],
        _both(lambda x: paddle.nonzero(x, as_tuple=True), x),
        *_both(
            lambda x: [
                paddle.where(x > 2.5, x, paddle.zeros_like(x)),
                paddle.where(x > 2.5, x, paddle.full_like(x, 9.0)),
                paddle.where(x > 2.5, x, paddle.assign(np.array([9.0], "float32"))),
                paddle.masked_select(x, x > 1.5),
            ],
            x,
        ),
    )
    _equal(coords, np.argwhere(x), "int64")
    _equal(rows, np.argwhere(x)[:, :1])
    _equal(cols, np.argwhere(x)[:, 1:])
    _equal(kept, np.where(x > 2.5, x, 0))
    _equal(same, np.where(x > 2.5, x, 9))
    _equal(broadcast, np.where(x > 2.5, x, 9))
    _equal(selected, x[x > 1.5])
    columns = _both(lambda x: paddle.nonzero(x, as_tuple=True), A > 20)
    for got, want in zip(columns, np.nonzero(A > 20), strict=True):
        _equal(got, want[:, None])


# -- manipulation ---------------------------------------------------------------------------------


def test_squeeze_unsqueeze_stack_unstack_unbind_chunk():
    x = A.reshape(2, 1, 3, 4)
    outs = _both(
        lambda x: [
            paddle.squeeze(x),
            x.squeeze(axis=1),
            paddle.unsqueeze(x, [0, 5]),
            paddle.stack([x, x], axis=1),
            *paddle.unstack(x, axis=2),
            *paddle.unbind(x, 0),
            *x.chunk(2, axis=-1),
        ],
        x,
    )
    _equal(outs[0], A)
    _equal(outs[1], A)
    assert outs[2].shape == (1, 2, 1, 3, 4, 1)
    _equal(outs[3], np.stack([x, x], 1))
    for got, want in zip(outs[4:7], np.moveaxis(x, 2, 0)):
        _equal(got, want)
    _equal(outs[7], x[0])
    _equal(outs[9], x[..., :2])
    _equal(outs[10], x[..., 2:])


def test_flip_roll_tile_expand_broadcast():
    v = np.array([1, 2, 3], "int32")
    outs = _both(
        lambda x, v: [
            paddle.flip(x, [0, 2]),
            paddle.reverse(x, 1),
            paddle.roll(x, 1),
            x.roll(-1, axis=2),
            paddle.tile(v, [2, 1]),
            paddle.expand(v, [2, 3]),
            paddle.broadcast_to(v, [2, -1]),
            paddle.expand_as(v, paddle.zeros([2, 3], "int32")),
        ],
        A,
        v,
    )
    _equal(outs[0], A[::-1, :, ::-1])
    _equal(outs[1], A[:, ::-1])
    _equal(outs[2], np.roll(A, 1))
    _equal(outs[3], np.roll(A, -1, 2))
    _equal(outs[4], np.tile(v, [2, 1]), "int32")
    _equal(outs[5], np.broadcast_to(v, (2, 3)))
    _equal(outs[6], np.broadcast_to(v, (2, 3)))
    _equal(outs[7], np.broadcast_to(v, (2, 3)))
    with pytest.raises(ValueError):
        paddle.expand_as(paddle.to_tensor(v), paddle.to_tensor(A))  # 3 into A's 4: not a size-1 dim
    assert paddle.broadcast_shape([2, 1, 3], [4, 1]) == [2, 4, 3]


def test_slice_strided_slice_crop_and_stepped_indexing():
    outs = _both(
        lambda x: [
            paddle.slice(x, [2], [1], [3]),
            paddle.strided_slice(x, [1, 2], [0, 3], [3, 0], [2, -2]),
            paddle.crop(x, [1, 2, -1], [1, 0, 1]),
            x[::2],
            x[0, ::-1],
            x[..., 3:0:-2],
            x[1, 2, 1::2],
        ],
        A,
    )
    _equal(outs[0], A[:, :, 1:3])
    _equal(outs[1], A[:, 0:3:2, 3:0:-2])
    _equal(outs[2], A[1:2, 0:2, 1:])
    _equal(outs[3], A[::2])
    _equal(outs[4], A[0, ::-1])
    _equal(outs[5], A[..., 3:0:-2])
    _equal(outs[6], A[1, 2, 1::2])


def test_gather_scatter_and_shard_index():
    x = A[0]
    ids = np.array([2, 0], "int64")
    outs = _both(
        lambda x, ids: [
            paddle.gather(x, ids),
            x.gather(ids, axis=1),
            paddle.gather_nd(x, paddle.assign(np.array([[1, 2], [0, 0]], "int64"))),
            paddle.scatter(x, ids, paddle.zeros([2, 4])),
            paddle.scatter(x, paddle.assign(np.array([1, 1], "int64")), paddle.ones([2, 4]), overwrite=False),
            paddle.scatter_nd(paddle.assign(np.array([[1], [1]], "int64")), paddle.ones([2]), [3]),
            paddle.scatter_nd_add(x, paddle.assign(np.array([[0, 1]], "int64")), paddle.ones([1])),
            paddle.shard_index(paddle.assign(np.array([[1], [16]], "int64")), 20, 2, 1),
        ],
        x,
        ids,
    )
    _equal(outs[0], x[[2, 0]])
    _equal(outs[1], x[:, [2, 0]])
    _equal(outs[2], [x[1, 2], x[0, 0]])
    want = x.copy()
    want[[2, 0]] = 0
    _equal(outs[3], want)
    want = x.copy()
    want[1] = 2  # Paddle's scatter without overwrite: the row is zeroed, then the updates add
    _equal(outs[4], want)
    _equal(outs[5], [0, 2, 0])
    want = x.copy()
    want[0, 1] += 1
    _equal(outs[6], want)
    _equal(outs[7], [[-1], [6]])


def test_gather_adds_the_gradients_of_a_repeated_index():
    x = paddle.to_tensor(np.ones((3, 2), "float32"), stop_gradient=False)
    paddle.gather(x, paddle.to_tensor([1, 1])).sum().backward()
    _equal(x.grad.numpy(), [[0, 0], [2, 2], [0, 0]])


def test_unique_is_sorted_with_index_inverse_and_counts():
    x = np.array([2, 3, 3, 1, 5, 3], "int64")
    out, index, inverse, counts = _both(lambda x: paddle.unique(x, True, True, True), x)
    for got, want in zip((out, index, inverse, counts), np.unique(x, True, True, True)):
        _equal(got, want)
    assert index.dtype == np.int64
    _equal(paddle.unique(paddle.to_tensor(x.reshape(2, 3)), dtype="int32").numpy(), [1, 2, 3, 5])
    small = paddle.unique(paddle.to_tensor(x), return_counts=True, dtype="int32")[1]
    assert small.dtype == "int32"
    with pytest.raises(NotImplementedError, match="axis"):
        paddle.unique(paddle.to_tensor(x), axis=0)


def test_in_place_forms_rewrite_an_eager_tensor_and_keep_its_gradient():
    w = paddle.to_tensor(np.ones((2, 3), "float32"), stop_gradient=False)
    h = w * 2.0
    assert h.reshape_([6]) is h and h.shape == [6]
    (h * paddle.arange(6).astype("float32")).sum().backward()
    _equal(w.grad.numpy(), np.arange(6).reshape(2, 3) * 2)
    y = paddle.zeros([2, 1, 3])
    y.squeeze_()
    y.unsqueeze_(0)
    assert y.shape == [1, 2, 3]
    z = paddle.zeros([3, 2])
    paddle.scatter_(z, paddle.to_tensor([1]), paddle.ones([1, 2]))
    _equal(z.numpy(), [[0, 0], [1, 1], [0, 0]])
    with pytest.raises(ValueError, match="leaf"):
        w.reshape_([6])
    (static,) = _static(lambda x: paddle.reshape_(x, [4, 6]), A)  # static: out of place, as Paddle's
    _equal(static, A.reshape(4, 6))


# -- random ---------------------------------------------------------------------------------------


def test_random_functions_shapes_dtypes_and_ranges():
    paddle.seed(2020)
    r, n, s, u, i, i2, p = (
        paddle.rand([2, 3]),
        paddle.randn([4], "float64"),
        paddle.standard_normal([5]),
        paddle.uniform([1000], min=2.0, max=3.0),
        paddle.randint(5, shape=[100]),
        paddle.randint(2, 4, [100], "int32"),
        paddle.randperm(6),
    )
    assert r.shape == [2, 3] and r.dtype == "float32" and 0 <= r.numpy().min() and r.numpy().max() < 1
    assert n.dtype == "float64" and s.shape == [5]
    assert 2 <= u.numpy().min() and u.numpy().max() < 3
    assert i.dtype == "int64" and set(i.numpy()) <= set(range(5))
    assert i2.dtype == "int32" and set(i2.numpy()) == {2, 3}
    _equal(np.sort(p.numpy()), np.arange(6), "int64")
    with pytest.raises(ValueError):
        paddle.randint(0)
    (static,) = _static(lambda: paddle.randperm(5))
    _equal(np.sort(static), np.arange(5))


def test_normal_draws_around_tensor_means():
    mean = paddle.full([2000], 3.0)
    draws = paddle.normal(mean, 0.5).numpy()
    assert abs(draws.mean() - 3) < 0.05 and abs(draws.std() - 0.5) < 0.05
    fixed = paddle.normal(1.0, paddle.zeros([3])).numpy()
    _equal(fixed, [1, 1, 1])
    assert paddle.normal(shape=[2, 2]).shape == [2, 2]


def test_bernoulli_and_multinomial_follow_their_probabilities():
    paddle.seed(7)
    _equal(paddle.bernoulli(paddle.to_tensor([0.0, 1.0, 0.0, 1.0])).numpy(), [0, 1, 0, 1])
    assert abs(paddle.bernoulli(paddle.full([20000], 0.3)).numpy().mean() - 0.3) < 0.02
    weights = paddle.to_tensor([[0.0, 1, 3], [5, 0, 0]])
    drawn = paddle.multinomial(weights, 4000, replacement=True).numpy()
    assert drawn.dtype == np.int64 and drawn.shape == (2, 4000)
    assert abs((drawn[0] == 2).mean() - 0.75) < 0.03 and set(drawn[1]) == {0}
    once = np.stack([paddle.multinomial(paddle.to_tensor([1.0, 2, 0, 1]), 1).numpy() for _ in range(2000)])
    np.testing.assert_allclose(np.bincount(once.ravel(), minlength=4) / 2000, [0.25, 0.5, 0, 0.25], atol=0.04)
    distinct = paddle.multinomial(paddle.to_tensor([1.0, 1, 1, 1]), 4).numpy()
    _equal(np.sort(distinct), np.arange(4))
    (static,) = _static(lambda x: paddle.multinomial(x, 2), np.array([[0.0, 1, 3]], "float32"))
    _equal(np.sort(static[0]), [1, 2])
    with pytest.raises(ValueError, match="num_samples"):
        paddle.multinomial(paddle.to_tensor([1.0, 1]), 3)
