"""Paddle 2.0's math, logic, linalg and stat functions (paddle.pow, paddle.norm, paddle.median ...) give
NumPy's answers (Paddle 2.0's documented ones where they differ) in dynamic mode and in static mode,
and are Tensor methods as Paddle 2.0's."""

import math

import numpy as np
import pytest

import fleetgraph as paddle

X = np.array([[0.5, -1.25, 2.0], [3.0, -0.75, 1.5]], "float32")
P = np.array([[0.25, 0.5, 0.75], [1.0, 1.5, 2.5]], "float32")  # positive, for the logarithms
U = np.array([[0.1, -0.4, 0.8], [-0.9, 0.3, 0.0]], "float32")  # in (-1, 1), for acos and asin
B = np.array([[True, False, True], [False, False, True]])
C = np.array([[False, False, True], [True, False, False]])
I = np.array([7, 9, 5, 12], "int64")  # noqa: E741
J = np.array([3, 4, 5, 5], "int64")
A = X @ X.T + np.eye(2, dtype="float32")  # symmetric positive-definite
SPECIAL = np.array([1.0, math.inf, -math.inf, math.nan, -2.0], "float32")


def _static(fn, arrays):
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        inputs = [paddle.static.data(f"in{i}", list(a.shape), str(a.dtype)) for i, a in enumerate(arrays)]
        out = fn(*inputs)
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    (value,) = exe.run(main, feed={f"in{i}": a for i, a in enumerate(arrays)}, fetch_list=[out])
    return value


def both_modes(fn, *arrays):
    """fn's answer on eager Tensors of `arrays`, and the same from a static program fed them."""
    eager = fn(*(paddle.to_tensor(a) for a in arrays)).numpy()
    return eager, _static(fn, arrays)


CASES = {
    # name: (function, inputs, the expected value)
    "acos": (paddle.acos, [U], np.arccos(U)),
    "asin": (paddle.asin, [U], np.arcsin(U)),
    "atan": (paddle.atan, [X], np.arctan(X)),
    "ceil": (paddle.ceil, [X], np.ceil(X)),
    "floor": (paddle.floor, [X], np.floor(X)),
    "cos": (paddle.cos, [X], np.cos(X)),
    "sin": (paddle.sin, [X], np.sin(X)),
    "cosh": (paddle.cosh, [X], np.cosh(X)),
    "sinh": (paddle.sinh, [X], np.sinh(X)),
    "erf": (paddle.erf, [X], np.array([math.erf(v) for v in X.ravel()], "float32").reshape(X.shape)),
    "log1p": (paddle.log1p, [P], np.log1p(P)),
    "log2": (paddle.log2, [P], np.log2(P)),
    "log10": (paddle.log10, [P], np.log10(P)),
    "reciprocal": (paddle.reciprocal, [P], 1 / P),
    "rsqrt": (paddle.rsqrt, [P], 1 / np.sqrt(P)),
    # Paddle 2.0's documented example: halves round away from zero
    "round": (paddle.round, [np.array([-0.5, -0.2, 0.6, 1.5], "float32")], np.array([-1.0, -0.0, 1.0, 2.0], "float32")),
    "stanh": (paddle.stanh, [X], 1.7159 * np.tanh(0.67 * X)),
    "conj": (paddle.conj, [X], X),
    "pow scalar": (lambda x: paddle.pow(x, 3), [X], X**3),
    "pow tensor": (paddle.pow, [P, X], P**X),
    "cumsum flattened": (paddle.cumsum, [X], np.cumsum(X)),
    "cumsum axis": (lambda x: paddle.cumsum(x, axis=0), [X], np.cumsum(X, 0)),
    "cumsum dtype": (lambda x: paddle.cumsum(x, -1, dtype="float64"), [X], np.cumsum(X.astype("float64"), -1)),
    "prod": (paddle.prod, [X], np.prod(X, keepdims=True).reshape([1])),
    "prod axis keepdim": (lambda x: paddle.prod(x, 1, keepdim=True), [X], np.prod(X, 1, keepdims=True)),
    "logsumexp": (lambda x: paddle.logsumexp(x, axis=1), [X], np.log(np.exp(X).sum(1))),
    "logsumexp large": (
        paddle.logsumexp,
        [np.array([1000.0, 1000.0], "float32")],
        np.array([1000 + math.log(2)], "float32"),
    ),
    "max": (paddle.max, [X], np.array([3.0], "float32")),
    "max axis": (lambda x: paddle.max(x, axis=0), [X], X.max(0)),
    "min axes keepdim": (lambda x: paddle.min(x, axis=[0, 1], keepdim=True), [X], X.min(keepdims=True)),
    "maximum": (paddle.maximum, [X, P], np.maximum(X, P)),
    "minimum": (paddle.minimum, [X, P], np.minimum(X, P)),
    "floor_divide": (paddle.floor_divide, [I, J], I // J),
    "remainder": (paddle.remainder, [I, J], I % J),
    "mod": (paddle.mod, [I, J], I % J),
    "floor_mod": (paddle.floor_mod, [I, J], I % J),
    "mm": (lambda x, y: paddle.mm(x, paddle.t(y)), [X, P], X @ P.T),
    "addmm": (
        lambda i, x: paddle.addmm(i, x, paddle.t(x), beta=0.5, alpha=2.0),
        [P[:, :2], X],
        0.5 * P[:, :2] + 2 * X @ X.T,
    ),
    "clip": (lambda x: paddle.clip(x, -1.0, 1.0), [X], np.clip(X, -1, 1)),
    "clip min only": (lambda x: paddle.clip(x, min=0.6), [X], np.maximum(X, 0.6)),
    "clip max only": (lambda x: paddle.clip(x, max=0.6), [X], np.minimum(X, 0.6)),
    "trace": (paddle.trace, [X], np.array([np.trace(X)], "float32")),
    "trace offset": (lambda x: paddle.trace(x, offset=1, axis1=1, axis2=0), [X], np.array([X[1, 0]], "float32")),
    "kron": (paddle.kron, [X, P], np.kron(X, P)),
    "isnan": (paddle.isnan, [SPECIAL], np.isnan(SPECIAL)),
    "isinf": (paddle.isinf, [SPECIAL], np.isinf(SPECIAL)),
    "isfinite": (paddle.isfinite, [SPECIAL], np.isfinite(SPECIAL)),
    "isfinite int": (paddle.isfinite, [I], np.ones(4, bool)),
    "all": (paddle.all, [B], np.array([False])),
    "all axis": (lambda b: paddle.all(b, axis=0), [B], B.all(0)),
    "any axis keepdim": (lambda b: paddle.any(b, axis=1, keepdim=True), [B], B.any(1, keepdims=True)),
    "mul": (lambda x, y: paddle.mul(x, paddle.t(y)), [X, P], X @ P.T),
    "multiplex": (
        lambda a, b, i: paddle.multiplex([a, b], i),
        [X, P, np.array([[1], [0]], "int32")],
        np.stack([P[0], X[1]]),
    ),
    "equal": (paddle.equal, [X, np.where(X > 1, X, 0).astype("float32")], X > 1),
    "not_equal": (paddle.not_equal, [X, np.where(X > 1, X, 0).astype("float32")], X <= 1),
    "greater_than": (paddle.greater_than, [X, P], X > P),
    "greater_equal": (paddle.greater_equal, [X, X], np.ones(X.shape, bool)),
    "less_than": (paddle.less_than, [X, P], X < P),
    "less_equal": (paddle.less_equal, [P, X], P <= X),
    "logical_and": (paddle.logical_and, [B, C], B & C),
    "logical_or": (paddle.logical_or, [B, C], B | C),
    "logical_xor": (paddle.logical_xor, [B, C], B ^ C),
    "logical_not": (paddle.logical_not, [B], ~B),
    "equal_all": (paddle.equal_all, [X, X.copy()], np.array([True])),
    "equal_all differing": (paddle.equal_all, [X, P], np.array([False])),
    "equal_all other shape": (paddle.equal_all, [X, X[:1]], np.array([False])),
    "allclose": (paddle.allclose, [X, X + 1e-6], np.array([True])),
    "allclose not": (lambda x, y: paddle.allclose(x, y, rtol=0.0, atol=0.0), [X, X + 1e-3], np.array([False])),
    "is_empty": (paddle.is_empty, [X], np.array([False])),
    "dot": (paddle.dot, [X[0], P[0]], np.array([X[0] @ P[0]])),
    "bmm": (paddle.bmm, [X[None], P.T[None].copy()], (X @ P.T)[None]),
    "mv": (paddle.mv, [X, P[0]], X @ P[0]),
    "cross": (lambda x, y: paddle.cross(x, y, axis=1), [X, P], np.cross(X, P, axis=1)),
    "dist": (lambda x, y: paddle.dist(x, y, p=1), [X, P], np.array([np.abs(X - P).sum()], "float32")),
    "norm fro": (paddle.norm, [X], np.array([np.linalg.norm(X)], "float32")),
    "norm p over an axis": (lambda x: paddle.norm(x, p=3, axis=1), [X], (np.abs(X) ** 3).sum(1) ** (1 / 3)),
    "norm fro over an axis": (
        lambda x: paddle.norm(x, axis=-1, keepdim=True),
        [X],
        np.linalg.norm(X, axis=-1, keepdims=True),
    ),
    "norm inf": (lambda x: paddle.norm(x, p=np.inf), [X], np.array([3.0], "float32")),
    "norm -inf axis": (lambda x: paddle.norm(x, p=-np.inf, axis=0), [X], np.abs(X).min(0)),
    "norm 0": (lambda x: paddle.norm(x, p=0), [np.array([1.0, 0.0, -2.0], "float32")], np.array([2.0], "float32")),
    "norm p over two axes": (lambda x: paddle.norm(x, p=1, axis=[0, 1]), [X], np.array([np.abs(X).sum()], "float32")),
    "t": (paddle.t, [X], X.T),
    "cholesky": (paddle.cholesky, [A], np.linalg.cholesky(A)),
    "cholesky upper": (
        lambda a: paddle.cholesky(a, upper=True),
        [np.stack([A, 2 * A])],
        np.linalg.cholesky(np.stack([A, 2 * A])).transpose(0, 2, 1),
    ),
    "inverse": (paddle.inverse, [A], np.linalg.inv(A)),
    # Paddle 2.0's documented example: [1, 2, 1] in 4 bins over [0, 3]
    "histogram": (
        lambda x: paddle.histogram(x, bins=4, min=0, max=3),
        [np.array([1, 2, 1], "int64")],
        np.array([0, 2, 1, 0]),
    ),
    "histogram own range": (lambda x: paddle.histogram(x, bins=3), [X], np.histogram(X, 3)[0]),
    "histogram constant": (lambda x: paddle.histogram(x, bins=2), [np.ones(3, "float32")], np.array([0, 3])),
    "mean": (lambda x: paddle.mean(x, axis=1), [X], X.mean(1)),
    "var": (paddle.var, [X], np.array([X.var(ddof=1)], "float32")),
    "var biased axis": (lambda x: paddle.var(x, axis=1, unbiased=False, keepdim=True), [X], X.var(1, keepdims=True)),
    "std": (lambda x: paddle.std(x, axis=[0, 1]), [X], np.array([X.std(ddof=1)], "float32")),
    "numel": (paddle.numel, [X], np.array([6])),
    "shape": (paddle.shape, [X], np.array([2, 3])),
    "rank": (paddle.rank, [X], np.array([2])),
    "median": (paddle.median, [X], np.array([np.median(X)], "float32")),
    "median odd axis": (lambda x: paddle.median(x, axis=1), [X], np.median(X, 1)),
    "median keepdim": (lambda x: paddle.median(x, axis=0, keepdim=True), [X], np.median(X, 0, keepdims=True)),
}


@pytest.mark.parametrize("case", CASES)
def test_function_gives_numpys_answer_in_both_modes(case):
    fn, inputs, expected = CASES[case]
    for value in both_modes(fn, *inputs):
        assert value.shape == np.shape(expected)
        np.testing.assert_allclose(value, expected, rtol=1e-5, atol=1e-6)


def test_norm_refuses_what_paddle_refuses():
    x = paddle.to_tensor(X)
    with pytest.raises(ValueError, match="'nuc'"):
        paddle.norm(x, p="nuc")
    with pytest.raises(ValueError, match="p 0"):
        paddle.norm(x, p=0, axis=[0, 1])


def test_histogram_refuses_a_max_below_min():
    with pytest.raises(ValueError, match="max 1 is less than min 2"):
        paddle.histogram(paddle.to_tensor(X), bins=2, min=2, max=1)


def test_clip_takes_tensor_bounds():
    bound = np.array([0.6], "float32")
    for value in both_modes(lambda x, b: paddle.clip(x, min=b, max=1.5), X, bound):
        np.testing.assert_allclose(value, np.clip(X, 0.6, 1.5))
    for value in both_modes(lambda x, b: paddle.clip(x, max=b), X, bound):
        np.testing.assert_allclose(value, np.minimum(X, 0.6))


def test_tanh_in_place_updates_the_tensor_itself_and_is_tanh_in_a_program():
    x = paddle.to_tensor(X.copy())
    assert paddle.tanh_(x) is x
    np.testing.assert_allclose(x.numpy(), np.tanh(X), rtol=1e-6)
    with pytest.warns(UserWarning, match="does not perform inplace"):
        np.testing.assert_allclose(_static(paddle.tanh_, [X]), np.tanh(X), rtol=1e-6)


def test_tanh_in_place_refuses_a_tensor_that_needs_its_gradient():
    x = paddle.to_tensor(X)
    x.stop_gradient = False
    with pytest.raises(NotImplementedError, match="tanh_"):
        paddle.tanh_(x * 2)


def test_increment_is_a_new_tensor_eagerly_and_updates_the_variable_in_a_program():
    step = paddle.to_tensor(np.array([1.0], "float32"))
    np.testing.assert_allclose(paddle.increment(step, 2.0).numpy(), [3.0])
    np.testing.assert_allclose(step.numpy(), [1.0])
    assert _static(lambda v: paddle.increment(v, 2.0), [np.array([1.0], "float32")]).tolist() == [3.0]


def test_broadcast_shape_is_numpys():
    assert paddle.broadcast_shape([2, 1, 3], [4, 1]) == [2, 4, 3]


def test_functions_are_tensor_methods_in_both_modes():
    x = paddle.to_tensor(X)
    np.testing.assert_allclose(x.pow(2).numpy(), X**2)
    np.testing.assert_allclose(x.cumsum(axis=1).numpy(), np.cumsum(X, 1), rtol=1e-6)
    np.testing.assert_allclose(x.max(axis=1).numpy(), X.max(1))
    np.testing.assert_allclose(x.norm().numpy(), [np.linalg.norm(X)], rtol=1e-6)
    np.testing.assert_allclose(x.std().numpy(), [X.std(ddof=1)], rtol=1e-6)
    assert x.equal_all(x).numpy().tolist() == [True]
    eager, static = both_modes(lambda v: v.clip(0.0, 1.0).logsumexp(axis=0), X)
    np.testing.assert_allclose(static, eager, rtol=1e-6)


def test_gradients_flow_through_the_composed_functions():
    x = paddle.to_tensor(P)
    x.stop_gradient = False
    paddle.sum(paddle.log2(x) + paddle.cosh(x) + paddle.norm(x, p=3, axis=1, keepdim=True)).backward()
    # the [2, 1] norm is broadcast over the 3 columns, so each row's norm counts 3 times
    norm_grad = 3 * P**2 / ((P**3).sum(1, keepdims=True) ** (2 / 3))
    expected = 1 / (P * np.log(2)) + np.sinh(P) + norm_grad
    np.testing.assert_allclose(np.asarray(x.grad), expected, rtol=1e-5)


def test_integer_tensors_divide_and_meet_floats_as_paddle_2():
    a = paddle.to_tensor(np.array([7, -7, 6], "int64"))
    b = paddle.to_tensor(np.array([2, 2, 4], "int64"))
    # a number divides after a cast to float32; two integer tensors divide truncating toward zero
    for value, expected, dtype in (
        (a / 2, [3.5, -3.5, 3.0], "float32"),
        (2 / a, [2 / 7, -2 / 7, 1 / 3], "float32"),
        (a * 1.5, [10.5, -10.5, 9.0], "float32"),
        (a + 1, [8, -6, 7], "int64"),
        (a / b, [3, -3, 1], "int64"),
        (paddle.divide(a, b), [3, -3, 1], "int64"),
    ):
        assert value.dtype == dtype
        np.testing.assert_allclose(value.numpy(), expected, rtol=1e-6)


def test_floor_division_and_modulo_operators_of_integer_tensors():
    a = paddle.to_tensor(np.array([7, 9, -6], "int64"))
    np.testing.assert_array_equal((a // 2).numpy(), [3, 4, -3])
    np.testing.assert_array_equal((a % paddle.to_tensor(np.array([3, 4, 4], "int64"))).numpy(), [1, 1, 2])


def test_sum_adds_in_the_dtype_asked_and_refuses_a_narrower_one():
    x = paddle.to_tensor(np.array([1.5, 2.25], "float32"))
    total = paddle.sum(x, dtype="float64")
    assert total.dtype == "float64"
    np.testing.assert_allclose(total.numpy(), [3.75])
    with pytest.raises(ValueError, match="float64 but dtype is float32"):
        paddle.sum(paddle.to_tensor(np.array([1.0])), dtype="float32")
