"""Paddle 1.8's pointwise fluid.layers (activations, prelu, pow, maxout, cumsum, clip and clamp,
logsumexp, sum, the checks, size, rank, is_empty) give Paddle's documented and unit-tested values in
a program and eagerly, keep Paddle's defaults and quirks, refuse what they cannot do, and every
pointwise op case exports to an ONNX model that onnx's reference evaluator and onnxruntime run to
the same values."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import onnx
import pytest
from op_cases import CASES, Case
from test_conv_pool_resize import run_static  # a fresh program, its startup run first
from test_onnx import _onnx_runs  # the reference evaluator's and onnxruntime's outputs
from test_op_registry import _build, _rows

import fleetgraph as paddle
import fleetgraph.fluid as fluid
import fleetgraph.onnx.to_onnx_pointwise  # noqa: F401  (its import fills EXPORTERS)
from fleetgraph.ir import Program, program_guard, unique_name
from fleetgraph.onnx import export

# Paddle 1.8.5's gelu / erf docstring inputs and outputs
GELU_IN = np.array([[0.87165993, -1.0541513, -0.37214822], [0.15647964, 0.32496083, 0.33045998]], "float32")
GELU_OUT = [[0.70456535, -0.15380788, -0.13207214], [0.08796856, 0.20387867, 0.2080159]]
ERF_IN = np.array([[0.4643714, -1.1509596, 1.2538221], [0.34369683, 0.27478245, 1.1805398]], "float32")
ERF_OUT = [[0.48863927, -0.8964121, 0.9237998], [0.37307587, 0.30242872, 0.9049887]]


def run_eager(build, **feeds):
    """The same build on Tensors, inside fluid.dygraph.guard()."""
    with fluid.dygraph.guard():
        outs = build(*(fluid.dygraph.to_variable(v) for v in feeds.values()))
        return [o.numpy() for o in (outs if isinstance(outs, (list, tuple)) else [outs])]


both_modes = pytest.mark.parametrize("run", [run_static, run_eager], ids=["static", "eager"])
L = fluid.layers


@both_modes
def test_gelu_and_erf_match_paddles_docstrings(run):
    gelu, gelu_tanh = run(lambda x: [L.gelu(x), L.gelu(x, approximate=True)], x=GELU_IN)
    np.testing.assert_allclose(gelu, GELU_OUT, rtol=1e-6)
    tanh_form = 0.5 * GELU_IN * (1 + np.tanh(math.sqrt(2 / math.pi) * (GELU_IN + 0.044715 * GELU_IN**3)))
    np.testing.assert_allclose(gelu_tanh, tanh_form, rtol=1e-6)
    (erf,) = run(L.erf, x=ERF_IN)
    np.testing.assert_allclose(erf, ERF_OUT, rtol=1e-6)
    assert erf.dtype == np.float32


def test_erf_agrees_with_math_erf_across_the_line():
    x = np.linspace(-7, 7, 2801)
    (got,) = run_eager(L.erf, x=x)
    np.testing.assert_allclose(got, [math.erf(v) for v in x], rtol=2e-15, atol=2e-16)


@both_modes
def test_unattributed_activations_take_x_and_a_name(run):
    x = np.array([[0.3, -0.6], [0.9, -0.2]], "float32")
    fns = [L.acos, L.asin, L.atan, L.sin, L.tanh_shrink, L.softsign, L.softplus, L.logsigmoid]
    want = [np.arccos(x), np.arcsin(x), np.arctan(x), np.sin(x), x - np.tanh(x), x / (1 + abs(x)),
            np.log1p(np.exp(x)), -np.log1p(np.exp(-x))]  # fmt: skip
    got = run(lambda v: [f(v, name=f"act{i}") for i, f in enumerate(fns)], x=x)
    for f, g, w in zip(fns, got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6, err_msg=f.__name__)
    pos = np.array([0.25, 4.0], "float32")
    rsqrt, recip, log1p = run(lambda v: [L.rsqrt(v), L.reciprocal(v), L.log1p(v)], x=pos)
    np.testing.assert_allclose(rsqrt, [2.0, 0.5])
    np.testing.assert_allclose(recip, [4.0, 0.25])
    np.testing.assert_allclose(log1p, np.log1p(pos), rtol=1e-6)


@both_modes
def test_round_takes_halves_away_from_zero_as_eigen(run):
    (got,) = run(L.round, x=np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49, -0.51], "float32"))
    np.testing.assert_array_equal(got, [-3, -2, -1, 1, 2, 3, 0, -1])


@both_modes
def test_activations_with_parameters_keep_paddles_defaults(run):
    x = np.array([-30.0, -3.0, -0.7, -0.3, 0.0, 0.3, 0.7, 3.0, 7.0, 50.0], "float32")
    got = run(
        lambda v: [
            L.softshrink(v), L.softshrink(v, alpha=0.3), L.hard_shrink(v), L.thresholded_relu(v), L.elu(v),
            L.relu6(v), L.leaky_relu(v), L.brelu(v, t_min=1.0, t_max=4.0), L.brelu(v), L.soft_relu(v, 2.0),
            L.stanh(v), L.hard_sigmoid(v), L.hard_swish(v), L.selu(v), L.mish(v), L.swish(v),
        ],
        x=x,
    )  # fmt: skip
    x64 = x.astype("float64")
    scale, alpha = 1.0507009873554804934193349852946, 1.6732632423543772848170429916717
    want = [
        np.where(x > 0.5, x - 0.5, np.where(x < -0.5, x + 0.5, 0)),
        np.where(x > 0.3, x - 0.3, np.where(x < -0.3, x + 0.3, 0)),
        x * (abs(x) > 0.5),
        x * (x > 1.0),
        np.maximum(x64, 0) + np.minimum(np.exp(x64) - 1, 0),
        np.clip(x, 0, 6),
        np.maximum(x, 0.02 * x),
        np.clip(x, 1, 4),
        np.clip(x, 0, 24),
        np.log1p(np.exp(np.clip(x64, -2, 2))),
        1.7159 * np.tanh(0.67 * x64),
        np.clip(0.2 * x + 0.5, 0, 1),
        x * np.clip(x + 3, 0, 6) / 6,
        scale * np.where(x64 > 0, x64, alpha * np.expm1(x64)),
        x64 * np.tanh(np.where(x64 > 20, x64, np.log1p(np.exp(np.minimum(x64, 20))))),
        x64 / (1 + np.exp(-x64)),
    ]
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6, err_msg=f"activation {i}")
        assert g.dtype == np.float32


@both_modes
def test_swish_uses_its_beta(run):
    """Paddle 1.8's layer drops beta (it sets an attr named `slope`); its documented formula uses it."""
    x = np.array([-2.0, 0.5, 3.0], "float32")
    (got,) = run(lambda v: L.swish(v, beta=2.0), x=x)
    np.testing.assert_allclose(got, x / (1 + np.exp(-2.0 * x)), rtol=1e-6)


@both_modes
def test_pow_takes_a_number_or_a_one_element_factor_tensor(run):
    x = np.array([[1.5, 2.0], [3.0, 0.5]], "float32")
    by_attr, by_tensor, default = run(
        lambda v, f: [L.pow(v, factor=3.0), L.pow(v, factor=f), L.pow(v)], x=x, f=np.array([2.0], "float32")
    )
    np.testing.assert_allclose(by_attr, x**3, rtol=1e-6)
    np.testing.assert_allclose(by_tensor, x**2, rtol=1e-6)
    np.testing.assert_allclose(default, x)
    (ints,) = run(lambda v: L.pow(v, factor=2.0), x=np.array([2, 3], "int64"))
    np.testing.assert_array_equal(ints, [4, 9])
    assert ints.dtype == np.int64


def test_pows_factor_tensor_is_not_differentiated():
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = fluid.data("x", [2], "float32")
        x.stop_gradient = False
        f = fluid.data("f", [1], "float32")
        f.stop_gradient = False
        loss = L.reduce_sum(L.pow(x, factor=f))
        grads = paddle.static.gradients([loss], [x])
    assert f.stop_gradient
    scope = paddle.static.Scope()
    feed = {"x": np.array([2.0, 3.0], "float32"), "f": np.array([3.0], "float32")}
    (gx,) = fluid.Executor().run(main, feed=feed, fetch_list=grads, scope=scope)
    np.testing.assert_allclose(gx, 3 * feed["x"] ** 2)


@both_modes
@pytest.mark.parametrize(
    "mode, alpha_shape", [("all", [1]), ("channel", [1, 3, 1, 1]), ("element", [1, 3, 2, 2])], ids=str
)
def test_prelu_creates_its_alpha_at_a_quarter_per_mode(run, mode, alpha_shape):
    x = np.random.default_rng(0).uniform(-1, 1, (2, 3, 2, 2)).astype("float32")
    seen = []

    def build(v):
        out = L.prelu(v, mode, param_attr=fluid.ParamAttr(name=f"alpha_{mode}"))
        block = fluid.default_main_program().global_block()
        alpha = block.var(f"alpha_{mode}") if not isinstance(out, paddle.Tensor) else None
        seen.append(None if alpha is None else list(alpha.shape))
        return out

    (got,) = run(build, x=x)
    np.testing.assert_allclose(got, np.where(x > 0, x, 0.25 * x), rtol=1e-6)
    if seen[0] is not None:
        assert seen[0] == alpha_shape


def test_prelu_learns_its_channel_slopes():
    """The Alpha gradient sums x * dout where x <= 0, per channel (Paddle's prelu_grad)."""
    x = np.array([[[[-1.0]], [[2.0]]], [[[-3.0]], [[-0.5]]]], "float32")  # N=2, C=2, 1x1
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        xv = fluid.data("x", [2, 2, 1, 1], "float32")
        out = L.prelu(xv, "channel", param_attr=fluid.ParamAttr(name="alpha"))
        loss = L.reduce_sum(out)
        fluid.optimizer.SGD(learning_rate=1.0).minimize(loss)
    scope = paddle.static.Scope()
    exe = fluid.Executor()
    exe.run(startup, scope=scope)
    exe.run(main, feed={"x": x}, scope=scope)
    np.testing.assert_allclose(scope.vars["alpha"].reshape(-1), [0.25 - (-1 - 3), 0.25 - (-0.5)])


def test_prelu_refuses_an_unknown_mode():
    with program_guard(Program(), Program()):
        x = fluid.data("x", [2, 3], "float32")
        with pytest.raises(ValueError, match="prelu: mode"):
            L.prelu(x, "row")


@both_modes
def test_maxout_keeps_the_largest_of_each_group_of_channels(run):
    """Paddle 1.8's test_maxout_op: channel c of the output is max(x[c * groups : (c + 1) * groups])."""
    x = np.random.default_rng(1).uniform(size=(3, 6, 2, 4)).astype("float32")
    nchw, nhwc = run(lambda v, w: [L.maxout(v, groups=2), L.maxout(w, groups=3, axis=-1)],
                     x=x, y=np.ascontiguousarray(x.transpose(0, 2, 3, 1)))  # fmt: skip
    np.testing.assert_allclose(nchw, x.reshape(3, 3, 2, 2, 4).max(axis=2))
    np.testing.assert_allclose(nhwc, x.reshape(3, 2, 3, 2, 4).max(axis=2).transpose(0, 2, 3, 1))


def test_maxout_refuses_channels_its_groups_do_not_divide():
    with program_guard(Program(), Program()):
        x = fluid.data("x", [2, 5, 3, 3], "float32")
        with pytest.raises(Exception, match="divisible by groups"):
            L.maxout(x, groups=2)
        with pytest.raises(ValueError, match="maxout: axis"):
            L.maxout(x, groups=5, axis=2)


@both_modes
def test_cumsum_defaults_to_the_last_axis_and_runs_exclusive_and_reversed(run):
    x = np.arange(1, 7, dtype="float32").reshape(2, 3)
    default, axis0, exclusive, reverse, both = run(
        lambda v: [
            L.cumsum(v), L.cumsum(v, axis=0), L.cumsum(v, exclusive=True), L.cumsum(v, reverse=True),
            L.cumsum(v, axis=1, exclusive=True, reverse=True),
        ],
        x=x,
    )  # fmt: skip
    np.testing.assert_array_equal(default, [[1, 3, 6], [4, 9, 15]])
    np.testing.assert_array_equal(axis0, [[1, 2, 3], [5, 7, 9]])
    np.testing.assert_array_equal(exclusive, [[0, 1, 3], [0, 4, 9]])
    np.testing.assert_array_equal(reverse, [[6, 5, 3], [15, 11, 6]])
    np.testing.assert_array_equal(both, [[5, 3, 0], [11, 6, 0]])
    (ints,) = run(L.cumsum, x=np.array([1, 2, 3], "int32"))
    assert ints.dtype == np.int32


@both_modes
def test_clip_clamp_and_clip_by_norm(run):
    """Paddle 1.8's test_clamp inputs; an unset lower bound of clamp is sys.float_info.min, which the
    float attr makes 0.0, so clamp(x, max=m) of a negative x is 0 as in Paddle 1.8."""
    x = np.array([[-1.5, 0.1, 0.5], [0.95, 2.0, -0.2]], "float32")
    clip, both, low, high, by_norm = run(
        lambda v: [L.clip(v, -1.0, 1.0), L.clamp(v, min=0.2, max=0.9), L.clamp(v, min=0.3), L.clamp(v, max=0.7),
                   L.clip_by_norm(v, max_norm=1.0)],
        x=x,
    )  # fmt: skip
    np.testing.assert_allclose(clip, np.clip(x, -1, 1))
    np.testing.assert_allclose(both, np.clip(x, 0.2, 0.9))
    np.testing.assert_allclose(low, np.maximum(x, 0.3))
    np.testing.assert_allclose(high, np.clip(x, 0.0, 0.7))
    np.testing.assert_allclose(by_norm, x / np.linalg.norm(x), rtol=1e-6)


def test_clamp_refuses_variable_bounds_and_no_bounds():
    with program_guard(Program(), Program()):
        x = fluid.data("x", [2, 3], "float32")
        bound = fluid.data("m", [1], "float32")
        with pytest.raises(NotImplementedError, match="clamp: min as a Variable"):
            L.clamp(x, min=bound)
        with pytest.raises(ValueError, match="clamp: expected min or max"):
            L.clamp(x)
        with pytest.raises(TypeError, match="clamp: max expected a float"):
            L.clamp(x, max=1)
        with pytest.raises(TypeError, match="clamp: input"):
            L.clamp(fluid.data("i", [2], "int32"), min=0.2, max=0.8)


@both_modes
def test_logsumexp_over_all_dims_or_one(run):
    """Paddle 1.8's test_logsumexp: log(sum(exp(x))) by exp, reduce_sum and log."""
    x = np.random.default_rng(2).uniform(-1, 1, (2, 3, 4)).astype("float32")
    whole, dim1, kept = run(
        lambda v: [L.logsumexp(v), L.logsumexp(v, dim=1), L.logsumexp(v, dim=[1, 2], keepdim=True)], x=x
    )
    np.testing.assert_allclose(whole, [np.log(np.exp(x).sum())], rtol=1e-6)
    np.testing.assert_allclose(dim1, np.log(np.exp(x).sum(axis=1)), rtol=1e-6)
    np.testing.assert_allclose(kept, np.log(np.exp(x).sum(axis=(1, 2), keepdims=True)), rtol=1e-6)


@both_modes
def test_sum_adds_a_list_or_passes_one_variable(run):
    a, b = np.array([1.0, 2.0], "float32"), np.array([10.0, 20.0], "float32")
    pair, one = run(lambda x, y: [L.sum([x, y]), L.sum(x)], a=a, b=b)
    np.testing.assert_array_equal(pair, [11, 22])
    np.testing.assert_array_equal(one, a)


@both_modes
def test_checks_answer_one_bool_each(run):
    """Paddle 1.8's test_isfinite_op: isinf / isnan report any, isfinite all, as a [1] bool."""
    x = np.random.default_rng(3).uniform(0.1, 1, (11, 17)).astype("float32")
    x_inf, x_nan = x.copy(), x.copy()
    x_inf[0], x_nan[-1] = np.inf, np.nan
    got = run(lambda a, i, n: [L.has_inf(a), L.has_inf(i), L.has_nan(n), L.has_nan(i), L.isfinite(a),
                               L.isfinite(i), L.isfinite(n)], a=x, i=x_inf, n=x_nan)  # fmt: skip
    assert [bool(g[0]) for g in got] == [False, True, True, False, True, False, False]
    assert all(g.shape == (1,) and g.dtype == np.bool_ for g in got)


@both_modes
def test_allclose_matches_paddles_docstring(run):
    a, b = np.array([10000.0, 1e-07], "float32"), np.array([10000.1, 1e-08], "float32")
    nan_a, nan_b = np.array([1.0, np.nan], "float32"), np.array([1.0, np.nan], "float32")
    got = run(lambda x, y, p, q: [L.allclose(x, y), L.allclose(x, y, equal_nan=True), L.allclose(p, q),
                                  L.allclose(p, q, equal_nan=True)], a=a, b=b, p=nan_a, q=nan_b)  # fmt: skip
    assert [bool(g[0]) for g in got] == [False, False, False, True]


def test_allclose_refuses_tolerances_of_other_types():
    with program_guard(Program(), Program()):
        x = fluid.data("x", [2], "float32")
        with pytest.raises(TypeError, match="allclose: rtol expected a float"):
            L.allclose(x, x, rtol=1)
        with pytest.raises(TypeError, match="allclose: equal_nan expected a bool"):
            L.allclose(x, x, equal_nan=1)


@both_modes
def test_elementwise_equal_size_rank_and_is_empty(run):
    label = np.array([3, 3], "int32")
    limit = np.array([3, 2], "int32")
    eq, size, rank, empty = run(lambda x, y, z: [L.elementwise_equal(x, y), L.size(z), L.rank(z), L.is_empty(z)],
                                x=label, y=limit, z=np.zeros((6, 56, 8, 55), "float32"))  # fmt: skip
    np.testing.assert_array_equal(eq, [True, False])
    assert size.tolist() == [6 * 56 * 8 * 55] and size.dtype == np.int64
    assert rank.reshape(-1).tolist() == [4] and rank.dtype == np.int32
    assert empty.tolist() == [False]


def test_clamp_log1p_and_logsumexp_write_into_a_given_variable():
    main = Program()
    x = np.array([[-2.0, 0.5], [3.0, 0.25]], "float32")
    with program_guard(main, Program()):
        v = fluid.data("x", [2, 2], "float32")
        outs = [main.global_block().create_var(f"out{i}", dtype="float32") for i in range(3)]
        assert L.clamp(v, min=0.0, max=1.0, output=outs[0]) is outs[0]
        assert L.log1p(L.abs(v), out=outs[1]) is outs[1]
        assert L.logsumexp(v, dim=1, out=outs[2]) is outs[2]
    got = fluid.Executor().run(main, feed={"x": x}, fetch_list=outs, scope=paddle.static.Scope())
    np.testing.assert_allclose(got[0], np.clip(x, 0, 1))
    np.testing.assert_allclose(got[1], np.log1p(abs(x)), rtol=1e-6)
    np.testing.assert_allclose(got[2], np.log(np.exp(x).sum(axis=1)), rtol=1e-6)


def test_is_empty_writes_into_cond():
    main = Program()
    with program_guard(main, Program()):
        x = fluid.data("x", [0, 3], "float32")
        cond = main.global_block().create_var("cond", dtype="bool")
        assert L.is_empty(x, cond=cond) is cond
    (got,) = fluid.Executor().run(main, feed={"x": np.zeros((0, 3), "float32")}, fetch_list=[cond],
                                  scope=paddle.static.Scope())  # fmt: skip
    assert np.asarray(got).tolist() == [True]


def test_fluid_layers_ops_holds_paddles_generated_activations():
    """Paddle 1.8's layers/ops.py: the attr-less activations, softshrink, hard_shrink, cumsum,
    thresholded_relu, gelu and erf, reachable as fluid.layers.ops.<name>."""
    names = (
        "sigmoid logsigmoid exp tanh atan tanh_shrink sqrt rsqrt abs ceil floor cos acos asin sin round "
        "reciprocal square softplus softsign softshrink hard_shrink cumsum thresholded_relu gelu erf"
    ).split()
    assert [n for n in names if getattr(L.ops, n, None) is not getattr(L, n)] == []


def test_layers_refuse_wrong_dtypes_as_paddles_checks():
    with program_guard(Program(), Program()):
        ints = fluid.data("i", [3], "int32")
        for layer in (L.acos, L.rsqrt, L.thresholded_relu, L.gelu, L.elu, L.softshrink, L.selu, L.mish):
            with pytest.raises(TypeError, match=layer.__name__):
                layer(ints)
        with pytest.raises(TypeError, match="mish: threshold expected an int or a float"):
            L.mish(fluid.data("f", [3], "float32"), threshold="20")
        with pytest.raises(ValueError, match="mish: threshold expected > 0"):
            L.mish(fluid.data("g", [3], "float32"), threshold=0)
        with pytest.raises(TypeError, match="isfinite: x expected a Variable"):
            L.isfinite([10])
        with pytest.raises(TypeError, match="cumsum: x expected a Variable"):
            L.cumsum(np.ones(3))


# -- Paddle's gradients where they are not the derivative ---------------------------------------------


def _grad(build, x):
    """d sum(build(x)) / dx through the registered grad ops, in a program."""
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        v = fluid.data("x", list(x.shape), str(x.dtype))
        v.stop_gradient = False
        (g,) = paddle.static.gradients([L.reduce_sum(build(v))], [v])
    return np.asarray(fluid.Executor().run(main, feed={"x": x}, fetch_list=[g], scope=paddle.static.Scope())[0])


def test_grads_follow_paddles_kernels_where_they_differ_from_the_derivative():
    """leaky_relu_grad is 1 where out > 0 (right for alpha <= 1 only); soft_relu_grad tests out,
    not x, against the threshold; mish_grad takes 1 - e^-x for softplus' slope above the threshold."""
    x = np.array([-2.0, -0.5, 0.5, 1.95, 3.0], "float64")
    np.testing.assert_allclose(_grad(lambda v: L.leaky_relu(v, alpha=2.5), x), [2.5, 2.5, 1, 1, 1])
    out = np.log1p(np.exp(np.clip(x, -2, 2)))
    want = (1 - np.exp(-out)) * ((out > -2) & (out < 2))
    np.testing.assert_allclose(_grad(lambda v: L.soft_relu(v, threshold=2.0), x), want)
    sp = np.where(x > 1.0, x, np.where(x < -1.0, np.exp(x), np.log1p(np.exp(x))))
    tsp = np.tanh(sp)
    want = x * (1 - tsp**2) * -np.expm1(-sp) + tsp
    np.testing.assert_allclose(_grad(lambda v: L.mish(v, threshold=1.0), x), want)


# -- ONNX: every pointwise op case exports ------------------------------------------------------------

_POINTWISE_OPS = (
    "acos asin atan sin round reciprocal rsqrt log1p tanh_shrink softsign softplus logsigmoid softshrink hard_shrink "
    "brelu relu6 soft_relu thresholded_relu elu leaky_relu stanh hard_sigmoid swish hard_swish selu erf gelu mish "
    "prelu pow maxout cumsum isinf isnan isfinite allclose size is_empty"
).split()
ONNX_CASES = [c for op in _POINTWISE_OPS for c in CASES[op]]


def _as_float32(case: Case) -> Case:
    """The case on float32 inputs, the dtype onnxruntime has a kernel of every op for."""
    inputs = {k: v.astype("float32") if v.dtype == np.float64 else v for k, v in case.inputs.items()}
    return dataclasses.replace(case, inputs=inputs)


@pytest.mark.parametrize("case", ONNX_CASES, ids=[c.id for c in ONNX_CASES])
def test_op_case_exports_to_onnx_and_runs_as_the_executor(case: Case):
    case = _as_float32(case)
    prog, _, _, feed, outs = _build(case)
    fetches = [n for names in outs.values() for n in names]
    want = _rows(prog, feed, fetches)
    model = export(prog, list(feed), fetches, {})
    onnx.checker.check_model(model, full_check=True)
    for runner, got in _onnx_runs(model, feed).items():
        for name, g, w in zip(fetches, got, want, strict=True):
            assert g.dtype == w.dtype and g.shape == w.shape, f"{runner}: {name} {g.dtype}{g.shape} {w.dtype}{w.shape}"
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=f"{runner}: {name}")
