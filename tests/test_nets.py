"""fluid.nets networks against NumPy computations of the same network."""

from __future__ import annotations

import numpy as np

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.ir import Program, program_guard, unique_name


def test_glu_gates_the_first_half_with_the_sigmoid_of_the_second():
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = fluid.data(name="x", shape=[None, 6, 3], dtype="float64")
        out = fluid.nets.glu(x, dim=1)
    value = np.random.default_rng(0).normal(size=(2, 6, 3))
    (got,) = fluid.Executor().run(main, feed={"x": value}, fetch_list=[out], scope=paddle.static.Scope())
    a, b = value[:, :3], value[:, 3:]
    np.testing.assert_allclose(got, a / (1 + np.exp(-b)))


def test_simple_img_conv_pool_is_a_convolution_then_a_max_pool():
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = fluid.data(name="x", shape=[None, 1, 6, 6], dtype="float64")
        out = fluid.nets.simple_img_conv_pool(x, num_filters=2, filter_size=3, pool_size=2, pool_stride=2, act="relu")
    (w,) = [p for p in main.global_block().all_parameters() if len(p.shape) == 4]
    (bias,) = [p for p in main.global_block().all_parameters() if len(p.shape) == 1]
    scope, exe = paddle.static.Scope(), fluid.Executor()
    exe.run(startup, scope=scope)
    value = np.random.default_rng(1).normal(size=(2, 1, 6, 6))
    got, wv, bv = exe.run(main, feed={"x": value}, fetch_list=[out, w, bias], scope=scope)
    windows = np.lib.stride_tricks.sliding_window_view(value, (3, 3), axis=(2, 3))  # (2, 1, 4, 4, 3, 3)
    conv = np.einsum("ncijkl,fckl->nfij", windows, wv) + bv[None, :, None, None]
    relu = np.maximum(conv, 0)
    np.testing.assert_allclose(got, relu.reshape(2, 2, 2, 2, 2, 2).max(axis=(3, 5)))


def test_scaled_dot_product_attention_of_one_head_is_softmax_of_scaled_scores_times_values():
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        q = fluid.data(name="q", shape=[None, 3, 4], dtype="float64")
        k = fluid.data(name="k", shape=[None, 5, 4], dtype="float64")
        v = fluid.data(name="v", shape=[None, 5, 2], dtype="float64")
        out = fluid.nets.scaled_dot_product_attention(q, k, v)
    rng = np.random.default_rng(2)
    qv, kv, vv = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 2))
    feed = {"q": qv, "k": kv, "v": vv}
    (got,) = fluid.Executor().run(main, feed=feed, fetch_list=[out], scope=paddle.static.Scope())
    scores = qv @ kv.transpose(0, 2, 1) / 2.0
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    np.testing.assert_allclose(got, weights / weights.sum(-1, keepdims=True) @ vv)


def test_scaled_dot_product_attention_of_two_heads_projects_splits_and_joins_the_heads():
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        q = fluid.data(name="q", shape=[None, 3, 4], dtype="float64")
        kv = fluid.data(name="kv", shape=[None, 5, 4], dtype="float64")
        out = fluid.nets.scaled_dot_product_attention(q, kv, kv, num_heads=2)
    params = main.global_block().all_parameters()
    scope, exe = paddle.static.Scope(), fluid.Executor()
    exe.run(startup, scope=scope)
    rng = np.random.default_rng(3)
    qv, kvv = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4))
    got, *pv = exe.run(main, feed={"q": qv, "kv": kvv}, fetch_list=[out, *params], scope=scope)
    (wq, bq, wk, bk, wv, bv) = pv

    def heads(t):
        return t.reshape(*t.shape[:2], 2, 2).transpose(0, 2, 1, 3)

    qh, kh, vh = heads(qv @ wq + bq), heads(kvv @ wk + bk), heads(kvv @ wv + bv)
    scores = qh @ kh.transpose(0, 1, 3, 2) / np.sqrt(2.0)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    context = weights / weights.sum(-1, keepdims=True) @ vh
    np.testing.assert_allclose(got, context.transpose(0, 2, 1, 3).reshape(2, 3, 4))


def _conv_same(value, w, b):
    """A 3x3 convolution with padding 1 in NumPy (what img_conv_group's conv2d computes)."""
    padded = np.pad(value, ((0, 0), (0, 0), (1, 1), (1, 1)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(2, 3))
    return np.einsum("ncijkl,fckl->nfij", windows, w) + b[None, :, None, None]


def test_img_conv_group_is_two_padded_convolutions_then_a_pool():
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = fluid.data(name="x", shape=[None, 1, 4, 4], dtype="float64")
        out = fluid.nets.img_conv_group(x, conv_num_filter=[2, 3], pool_size=2, pool_stride=2, conv_act="relu")
    params = main.global_block().all_parameters()
    weights = [p for p in params if len(p.shape) == 4]
    biases = [p for p in params if len(p.shape) == 1]
    scope, exe = paddle.static.Scope(), fluid.Executor()
    exe.run(startup, scope=scope)
    value = np.random.default_rng(2).normal(size=(2, 1, 4, 4))
    got, w1, b1, w2, b2 = exe.run(
        main, feed={"x": value}, fetch_list=[out, weights[0], biases[0], weights[1], biases[1]], scope=scope
    )
    hidden = np.maximum(_conv_same(value, w1, b1), 0)
    conv = np.maximum(_conv_same(hidden, w2, b2), 0)
    np.testing.assert_allclose(got, conv.reshape(2, 3, 2, 2, 2, 2).max(axis=(3, 5)), rtol=1e-10)
    assert [op.type for op in main.global_block().ops].count("conv2d") == 2
