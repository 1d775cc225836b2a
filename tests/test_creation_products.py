"""fluid.layers' creation, random and product functions (Paddle 1.8's signatures), static and eager,
against NumPy oracles from Paddle's unit tests and values printed by Paddle; the random ones by
their seeds, shapes, dtypes and distributions."""

from __future__ import annotations

import numpy as np
import pytest

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.ir import Program, program_guard, unique_name

L = fluid.layers
A = np.array([[1.0, 2, 3], [4, 5, 6], [7, 8, 9]], "float32")
B = np.array([[1.0, 0, 2], [3, 1, 0], [0, 2, 1]], "float32")


def _static(build, feed=None, runs=1, scope=None):
    """Build `build(*data)` (data variables for `feed`'s arrays) in fresh programs, run the startup
    program, then the main one `runs` times; the fetched lists, one per run (one list if runs == 1)."""
    feed = feed or {}
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        data = [fluid.data(name, list(v.shape), v.dtype.name) for name, v in feed.items()]
        outs = build(*data)
        outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    exe = fluid.Executor(fluid.CPUPlace())
    scope = scope or paddle.static.Scope()
    exe.run(startup, scope=scope)
    results = [[np.asarray(v) for v in exe.run(main, feed=feed, fetch_list=outs, scope=scope)] for _ in range(runs)]
    return results[0] if runs == 1 else results


def _eager(build, *arrays):
    with fluid.dygraph.guard():
        outs = build(*(paddle.to_tensor(a) for a in arrays))
        outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
        return [o.numpy() for o in outs]


def _both(build, *arrays):
    """The static outputs, after checking the eager ones equal them."""
    static = _static(build, {f"in{i}": a for i, a in enumerate(arrays)})
    for s, e in zip(static, _eager(build, *arrays)):
        np.testing.assert_array_equal(s, e)
        assert s.dtype == e.dtype
    return static


# -- products -----------------------------------------------------------------------------------------


def test_products_match_numpy_static_and_eager():
    x3 = np.arange(24, dtype="float32").reshape(2, 3, 4) / 10
    y3 = np.arange(40, dtype="float32").reshape(2, 4, 5) / 10
    bmm, dot, kron, addmm, addcmul = _both(
        lambda a, b, x, y: [
            L.bmm(x, y),
            L.dot(a, b),
            L.kron(a, b),
            L.addmm(a, a, b, alpha=0.5, beta=2.0),
            L.addcmul(a, a, b, value=0.5),
        ],
        A,
        B,
        x3,
        y3,
    )
    np.testing.assert_allclose(bmm, x3 @ y3, rtol=1e-6)
    np.testing.assert_array_equal(dot, (A * B).sum(1, keepdims=True))
    np.testing.assert_array_equal(kron, np.kron(A, B))
    np.testing.assert_array_equal(addmm, 2 * A + 0.5 * A @ B)
    np.testing.assert_array_equal(addcmul, A + 0.5 * A * B)


def test_cross_takes_the_first_axis_of_size_3_when_dim_is_none_or_0():
    # paddle.cross(A, B) in Paddle 3.3.1 (its default is the first axis of size 3, as 1.8's)
    want = np.array([[-21.0, 2, 6], [7, -4, 15], [-1, 2, -12]])
    default, zero, last = _both(lambda a, b: [L.cross(a, b), L.cross(a, b, dim=0), L.cross(a, b, dim=1)], A, B)
    np.testing.assert_array_equal(default, want)
    np.testing.assert_array_equal(zero, want)  # 1.8's `if dim:` drops a dim of 0
    np.testing.assert_array_equal(last, np.cross(A, B, axis=1))


def test_trace_sums_the_offset_diagonal_of_the_chosen_plane():
    x = np.arange(24, dtype="float32").reshape(2, 3, 4)
    matrix, planes = _both(lambda a, x: [L.trace(a), L.trace(x, offset=1, dim1=2, dim2=0)], A, x)
    assert matrix.shape == (1,) and matrix[0] == 15.0
    np.testing.assert_array_equal(planes, [12.0, 16.0, 20.0])  # Paddle 3.3.1's paddle.trace
    with pytest.raises(ValueError, match="trace: dim1 0 and dim2 -2"):
        _static(lambda x: L.trace(x, dim1=0, dim2=-3 + 1), {"x": x[0]})


@pytest.mark.parametrize(("p", "want"), [(2, np.sqrt(204.0)), (0, 8.0), (float("inf"), 8.0), (1, 36.0)])
def test_dist_is_the_p_norm_of_the_broadcast_difference(p, want):
    (got,) = _both(lambda a, b: L.dist(a, b, p), A, B[0])
    assert got.shape == (1,)
    np.testing.assert_allclose(got[0], want, rtol=1e-6)


def test_fsp_matrix_averages_channel_products_over_positions():
    rng = np.random.default_rng(0)
    x, y = rng.uniform(0, 10, (2, 3, 4, 5)), rng.uniform(0, 10, (2, 2, 4, 5))
    (got,) = _both(L.fsp_matrix, x, y)
    np.testing.assert_allclose(got, np.einsum("nihw,njhw->nij", x, y) / 20)


def test_t_transposes_a_matrix_and_returns_a_vector_as_it_is():
    v = np.arange(3, dtype="float32")
    got = _static(lambda a: L.t(a), {"a": A})[0]
    np.testing.assert_array_equal(got, A.T)
    with fluid.dygraph.guard():
        t = paddle.to_tensor(v)
        assert L.t(t) is t
    with pytest.raises(ValueError, match="t: input of shape"):
        _static(lambda a: L.t(a), {"a": np.zeros((2, 2, 2), "float32")})


def test_addcmul_wants_a_value_of_the_inputs_kind():
    with pytest.raises(TypeError, match="addcmul: value 1; expected a float"):
        _static(lambda a: L.addcmul(a, a, a, value=1), {"a": A})


# -- creation ----------------------------------------------------------------------------------------


def test_ranges_follow_paddles_kernels():
    ar, ar_int, lin, lin_one = _static(
        lambda: [
            L.arange(0, 5, 2),
            L.arange(5, 0, -2, "int64"),
            L.linspace(0, 1, 7, "float32"),
            L.linspace(3, 9, 1, "float64"),
        ]
    )
    np.testing.assert_array_equal(ar, [0.0, 2, 4])
    assert ar.dtype == np.float32 and ar_int.dtype == np.int64 and ar_int.tolist() == [5, 3, 1]
    # Paddle 1.8's CPU kernel: start, then step added one at a time in float32 (a running sum;
    # Paddle 2's kernel computes each value from the nearer end instead)
    step, want = np.float32(1) / np.float32(6), [np.float32(0)]
    for _ in range(6):
        want.append(np.float32(want[-1] + step))
    np.testing.assert_array_equal(lin, np.array(want, "float32"))
    assert lin_one.tolist() == [3.0] and lin_one.dtype == np.float64


def test_eye_full_diag_and_triangles():
    eye, eye_batch, full, diag, tril, triu = _static(
        lambda: [
            L.eye(2, 3, dtype="int32"),
            L.eye(2, batch_shape=[3]),
            L.full([2, 2], 7, dtype="int64"),
            L.diag(np.array([1.5, 2.5])),
            L.tril(L.assign(A), -1),
            L.triu(L.assign(A), 1),
        ]
    )
    assert eye.dtype == np.int32 and eye.tolist() == np.eye(2, 3).tolist()
    np.testing.assert_array_equal(eye_batch, np.stack([np.eye(2)] * 3))
    assert full.dtype == np.int64 and full.tolist() == [[7, 7], [7, 7]]
    np.testing.assert_array_equal(diag, np.diag([1.5, 2.5]))
    np.testing.assert_array_equal(tril, np.tril(A, -1))
    np.testing.assert_array_equal(triu, np.triu(A, 1))


def test_diag_embed_places_the_rows_on_the_chosen_planes():
    x = np.arange(12, dtype="float32").reshape(3, 4)
    plain, moved = _both(lambda x: [L.diag_embed(x), L.diag_embed(x, offset=-2, dim1=2, dim2=0)], x)
    np.testing.assert_array_equal(plain, np.stack([np.diag(r) for r in x]))
    # as Paddle 3.3.1's paddle.diag_embed: output [6, 3, 6]; offset -2 puts x[b, i] at dim1 index
    # i + 2 (axis 2) and dim2 index i (axis 0), so plane b read as [axis 0, axis 2] has it above
    assert moved.shape == (6, 3, 6)
    np.testing.assert_array_equal(moved[:, 1, :], np.diag(x[1], 2))


def test_meshgrid_makes_ij_grids():
    a, b = np.arange(3, dtype="int64"), np.arange(4, dtype="int64") * 10
    grids = _both(lambda a, b: L.meshgrid([a, b]), a, b)
    for got, want in zip(grids, np.meshgrid(a, b, indexing="ij")):
        np.testing.assert_array_equal(got, want)
    with pytest.raises(TypeError, match="meshgrid: input of type tuple"):
        _static(lambda a: L.meshgrid((a,)), {"a": a})


def test_create_tensor_names_an_empty_variable():
    main = Program()
    with program_guard(main, Program()):
        v = L.create_tensor("int64", name="counter", persistable=True)
    assert (v.name, v.dtype, v.persistable) == ("counter", "int64", True)


# -- random -------------------------------------------------------------------------------------------


def test_seeded_draws_repeat_on_every_run_and_unseeded_ones_do_not():
    def build():
        return [L.randint(0, 1000, [50], seed=7), L.uniform_random([50], seed=3), L.randint(0, 1000, [50])]

    first, second = _static(build, runs=2)
    np.testing.assert_array_equal(first[0], second[0])
    np.testing.assert_array_equal(first[1], second[1])
    assert not np.array_equal(first[2], second[2])


def test_paddle_seed_makes_unseeded_draws_reproducible():
    def draw():
        paddle.seed(11)
        return _static(lambda: [L.gaussian_random([20]), L.randperm(20)])

    a, b = draw(), draw()
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def test_randint_is_uniform_on_its_range_with_paddles_shapes_and_dtypes():
    (ints,) = _static(lambda: L.randint(-3, 2, [100, 100], dtype="int32", seed=1))
    assert ints.shape == (100, 100) and ints.dtype == np.int32
    counts = np.bincount(ints.ravel() + 3, minlength=5)
    assert ints.min() == -3 and ints.max() == 1
    assert np.abs(counts / 10000 - 0.2).max() < 0.02
    (one,) = _static(lambda: L.randint(4, seed=2))  # high None: [0, 4), shape [1], int64
    assert one.shape == (1,) and one.dtype == np.int64 and 0 <= one[0] < 4
    with pytest.raises(ValueError, match="randint: low 5, high 5"):
        _static(lambda: L.randint(5, 5))


def test_randperm_is_a_uniform_permutation():
    runs = _static(lambda: L.randperm(6, dtype="int32"), runs=600)
    perms = np.stack([r[0] for r in runs])
    assert perms.dtype == np.int32
    assert all(sorted(p) == list(range(6)) for p in perms)
    where_zero = np.bincount(np.argmax(perms == 0, axis=1), minlength=6) / 600
    assert np.abs(where_zero - 1 / 6).max() < 0.06


def test_uniform_and_gaussian_draws_have_their_moments():
    uni, gauss, randn = _static(
        lambda: [
            L.uniform_random([200, 100], "float64", min=2.0, max=4.0, seed=5),
            L.gaussian_random([200, 100], mean=1.0, std=0.5, seed=5),
            L.randn([200, 100]),
        ]
    )
    assert uni.dtype == np.float64 and 2.0 <= uni.min() and uni.max() < 4.0
    assert abs(uni.mean() - 3.0) < 0.02 and abs(uni.var() - 1 / 3) < 0.02
    assert gauss.dtype == np.float32 and abs(gauss.mean() - 1.0) < 0.02 and abs(gauss.std() - 0.5) < 0.02
    assert randn.dtype == np.float32 and abs(randn.mean()) < 0.03 and abs(randn.std() - 1.0) < 0.03


def test_randn_takes_its_seed_from_numpys_generator_as_paddle_does():
    def draw():
        np.random.seed(4)
        return _static(lambda: L.randn([5]))[0]

    np.testing.assert_array_equal(draw(), draw())


def test_batch_size_like_draws_take_the_inputs_batch():
    x = np.zeros((7, 2), "float32")
    uni, gauss = _static(
        lambda x: [
            L.uniform_random_batch_size_like(x, [-1, 300], min=0.0, max=1.0, seed=1),
            L.gaussian_random_batch_size_like(x, [300, -1], input_dim_idx=0, output_dim_idx=1, std=2.0, seed=1),
        ],
        {"x": x},
    )
    assert uni.shape == (7, 300) and 0 <= uni.min() and uni.max() < 1 and abs(uni.mean() - 0.5) < 0.03
    assert gauss.shape == (300, 7) and gauss.dtype == np.float32 and abs(gauss.std() - 2.0) < 0.1


def test_sampling_id_draws_ids_with_the_rows_probabilities():
    probs = np.tile(np.array([[0.1, 0.6, 0.3]], "float32"), (20000, 1))
    (ids,) = _static(lambda p: L.sampling_id(p, seed=9), {"p": probs})
    assert ids.shape == (20000,) and ids.dtype == np.int64
    np.testing.assert_allclose(np.bincount(ids, minlength=3) / 20000, [0.1, 0.6, 0.3], atol=0.015)


def test_random_crop_crops_each_instance_and_moves_its_seed_on():
    # Paddle's test_random_crop_op: every crop is one of the four places
    to_crop = np.array([[[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]] * 5).astype(np.int32)
    possible = [to_crop[0, r : r + 2, c : c + 3] for r in (0, 1) for c in (0, 1)]
    runs = _static(lambda x: L.random_crop(x, [2, 3], seed=10), {"x": to_crop}, runs=8)
    crops = [c for r in runs for c in r[0]]
    assert all(any((c == p).all() for p in possible) for c in crops)
    assert len({c.tobytes() for c in crops}) == 4  # 40 crops reach every place
    again = _static(lambda x: L.random_crop(x, [2, 3], seed=10), {"x": to_crop}, runs=8)
    for r, s in zip(runs, again):
        np.testing.assert_array_equal(r[0], s[0])


def test_random_layers_run_eagerly():
    with fluid.dygraph.guard():
        ints = L.randint(0, 10, [3, 4], seed=2).numpy()
        perm = L.randperm(5, seed=1).numpy()
        x = paddle.to_tensor(np.ones((3, 2), "float32"))
        like = L.uniform_random_batch_size_like(x, [-1, 5], seed=3).numpy()
        crop = L.random_crop(paddle.to_tensor(np.arange(24, dtype="float32").reshape(2, 3, 4)), [2, 2], seed=1)
    assert ints.shape == (3, 4) and ints.dtype == np.int64 and sorted(perm) == list(range(5))
    assert like.shape == (3, 5) and crop.shape == [2, 2, 2]


def test_tensor_shapes_are_refused_not_ignored():
    with pytest.raises(NotImplementedError, match="uniform_random: shape given as a tensor"):
        _static(lambda s: L.uniform_random(s), {"s": np.array([2, 3], "int64")})
    with pytest.raises(TypeError, match="uniform_random: dtype int64"):
        _static(lambda: L.uniform_random([2], dtype="int64"))


# -- ONNX ------------------------------------------------------------------------------------------


def test_creation_and_product_ops_export_as_the_executor_computes_them(tmp_path):
    pytest.importorskip("onnx")
    from test_onnx import _assert_exports

    import fleetgraph.onnx.to_onnx_creation  # noqa: F401  (the rules, until onnx/export.py imports them)

    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        a, b = fluid.data("a", [3, 3], "float32"), fluid.data("b", [3, 3], "float32")
        x3, y3 = fluid.data("x3", [2, 3, 4], "float32"), fluid.data("y3", [2, 4, 5], "float32")
        v, w = fluid.data("v", [3], "float32"), fluid.data("w", [4], "float32")
        fx, fy = fluid.data("fx", [-1, 3, 2, 2], "float32"), fluid.data("fy", [-1, 2, 2, 2], "float32")
        outs = [
            L.eye(2, 3),
            L.diag(v),
            L.diag_embed(x3, offset=-1, dim1=0, dim2=3),
            L.tril(x3, 1),
            L.triu(a, -1),
            *L.meshgrid([v, w]),
            L.dot(a, b),
            L.bmm(x3, y3),
            L.addmm(L.reshape(v, [1, 3]), a, b, alpha=0.5, beta=2.0),
            L.kron(a, v),
            L.cross(a, b),
            L.cross(x3, x3 * 2 + 1, dim=1),
            L.trace(a, offset=1),
            L.trace(x3, offset=-1, dim1=2, dim2=0),
            *(L.dist(a, v, p) for p in (0, 1.5, float("inf"), float("-inf"))),
            L.fsp_matrix(fx, fy),
        ]
    rng = np.random.default_rng(3)
    arrays = {"a": A, "b": B, "x3": rng.normal(size=(2, 3, 4)), "y3": rng.normal(size=(2, 4, 5))}
    arrays.update(v=np.array([1.0, 0, 2]), w=rng.normal(size=4), fx=rng.normal(size=(2, 3, 2, 2)))
    arrays["fy"] = rng.normal(size=(2, 2, 2, 2))
    feed = {k: np.asarray(x, "float32") for k, x in arrays.items()}
    _assert_exports(main, paddle.static.Scope(), list(feed), [o.name for o in outs], feed, tmp_path, reload=False)
