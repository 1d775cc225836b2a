"""The normalization and projection layers of fluid.layers (Paddle 1.8's signatures) build their
parameters as Paddle's do and give the results of Paddle 1.8's unit-test references, in a program
and eagerly through the same layer functions."""

from __future__ import annotations

import numpy as np
import pytest
from op_cases.normalization import (
    ref_data_norm,
    ref_group_norm,
    ref_instance_norm,
    ref_layer_norm,
    ref_lrn,
    ref_norm,
    ref_spectral_norm,
)
from op_cases.projection import ref_bilinear, ref_im2sequence, ref_position_encoding, ref_row_conv

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.ir import Program, program_guard, unique_name
from fleetgraph.onnx import (
    export,
    to_onnx_normalization,  # noqa: F401  (its rules, until export.py imports it)
)
from fleetgraph.ops.normalization_stats import _power_iteration, _spectral_norm_grad


def run_static(build, **feeds):
    """build(*data variables) -> fetches, run with its startup program in a fresh scope on `feeds`."""
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        xs = [fluid.data(name, list(v.shape), str(v.dtype)) for name, v in feeds.items()]
        fetches = build(*xs)
    fetches = list(fetches) if isinstance(fetches, (list, tuple)) else [fetches]
    exe, scope = fluid.Executor(), paddle.static.Scope()
    exe.run(startup, scope=scope)
    return exe.run(main, feed=feeds, fetch_list=fetches, scope=scope)


def run_eager(build, **feeds):
    paddle.disable_static()
    try:
        outs = build(*(paddle.to_tensor(v) for v in feeds.values()))
        return [o.numpy() for o in (outs if isinstance(outs, (list, tuple)) else [outs])]
    finally:
        paddle.enable_static()


both_modes = pytest.mark.parametrize("run", [run_static, run_eager], ids=["static", "eager"])
RNG = np.random.default_rng(7)
X4 = RNG.uniform(-1, 1, (2, 6, 3, 4)).astype("float32")


@both_modes
def test_layer_norm_normalizes_from_begin_norm_axis_with_unit_scale_and_zero_shift(run):
    (got,) = run(lambda x: fluid.layers.layer_norm(x, begin_norm_axis=2), x=X4)
    want = ref_layer_norm(X4, np.ones(12), np.zeros(12), epsilon=1e-5, begin_norm_axis=2)["Y"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_layer_norm_creates_scale_and_bias_of_the_normalized_size_only_when_asked():
    main = Program()
    with program_guard(main, Program()), unique_name.guard():
        x = fluid.data("x", [-1, 6, 3, 4], "float32")
        fluid.layers.layer_norm(x, begin_norm_axis=1)
        fluid.layers.layer_norm(x, scale=False, shift=False)
    ops = [op for op in main.global_block().ops if op.type == "layer_norm"]
    assert [p.shape for p in main.global_block().all_parameters()] == [(72,), (72,)]
    assert sorted(ops[0].inputs) == ["Bias", "Scale", "X"] and sorted(ops[1].inputs) == ["X"]


@both_modes
def test_group_norm_is_unscaled_by_default_as_paddle_1_8(run):
    (got,) = run(lambda x: fluid.layers.group_norm(x, groups=3), x=X4)
    want = ref_group_norm(X4, epsilon=1e-5, groups=3, data_layout="NCHW")["Y"]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_group_norm_with_param_attr_learns_a_scale_per_channel():
    main = Program()
    with program_guard(main, Program()), unique_name.guard():
        x = fluid.data("x", [-1, 6, 3, 4], "float32")
        fluid.layers.group_norm(x, groups=2, param_attr="gn_w", bias_attr="gn_b", data_layout="NCHW")
    assert {p.name: p.shape for p in main.global_block().all_parameters()} == {"gn_w": (6,), "gn_b": (6,)}


@both_modes
def test_instance_norm_normalizes_each_channel_of_each_sample(run):
    (got,) = run(lambda x: fluid.layers.instance_norm(x), x=X4)
    np.testing.assert_allclose(got, ref_instance_norm(X4, epsilon=1e-5)["Y"], rtol=1e-4, atol=1e-5)


@both_modes
def test_l2_normalize_matches_paddles_docstring(run):
    """The docstring prints its input to 8 digits, so its output agrees to 5e-5."""
    x = np.array([[0.83734537, 0.20570076, 0.90704411], [0.89466474, 0.51640567, 0.78392446]], "float32")
    (got,) = run(lambda v: fluid.layers.l2_normalize(v, axis=-1), x=x)
    np.testing.assert_allclose(got, [[0.66907585, 0.16437206, 0.7247892], [0.6899054, 0.3982376, 0.6045142]], atol=5e-5)
    (flat,) = run(lambda v: fluid.layers.l2_normalize(v, axis=3), x=x[0])  # 1-D: axis 0 whatever is given
    np.testing.assert_allclose(flat, ref_norm(x[0], axis=0, epsilon=1e-12)["Out"], rtol=1e-5)


@both_modes
def test_lrn_uses_the_layers_k_of_one_and_a_centred_window(run):
    (got,) = run(lambda x: fluid.layers.lrn(x, n=3, alpha=0.5), x=X4)
    want = ref_lrn(X4, n=3, k=1.0, alpha=0.5, beta=0.75, data_format="NCHW")["Out"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_lrn_refuses_float64_and_other_ranks_as_paddle():
    with program_guard(Program(), Program()):
        with pytest.raises(TypeError, match="lrn: input expected a float32"):
            fluid.layers.lrn(fluid.data("d", [2, 3, 4, 4], "float64"))
        with pytest.raises(ValueError, match="expected rank 4"):
            fluid.layers.lrn(fluid.data("f", [2, 3, 4], "float32"))


@both_modes
def test_affine_channel_matches_paddles_docstring(run):
    def build(x):
        scale = fluid.layers.fill_constant([1], "float32", 2.0)
        bias = fluid.layers.fill_constant([1], "float32", 0.5)
        return fluid.layers.affine_channel(x, scale=scale, bias=bias)

    (got,) = run(build, x=np.ones([1, 1, 2, 2], "float32"))
    np.testing.assert_allclose(got, np.full([1, 1, 2, 2], 2.5))


def _run_op(op_type, inputs, outputs, attrs):
    """One op of `op_type` on the given arrays, in a fresh program: its `outputs` fetched."""
    main = Program()
    with program_guard(main, Program()):
        block = main.global_block()
        for slot, value in inputs.items():
            block.create_var(slot.lower(), value.shape, str(value.dtype), is_data=True)
        outs = {slot: [block.create_var(f"{slot.lower()}_out", dtype="float64").name] for slot in outputs}
        block.append_op(op_type, {s: [s.lower()] for s in inputs}, outs, attrs)
    feed = {slot.lower(): value for slot, value in inputs.items()}
    return fluid.Executor().run(main, feed=feed, fetch_list=[outs[s][0] for s in outputs], scope=paddle.static.Scope())


def test_spectral_norm_runs_its_power_iterations_from_u_and_v_as_paddles_test():
    """test_spectral_norm_op.py's TestSpectralNormOpNoGrad2: ten iterations from random U and V."""
    weight, u, v = RNG.random((2, 3, 3, 3)), RNG.normal(0, 1, 3), RNG.normal(0, 1, 18)
    attrs = {"dim": 1, "power_iters": 10, "eps": 1e-12}
    (got,) = _run_op("spectral_norm", {"Weight": weight, "U": u, "V": v}, ["Out"], attrs)
    np.testing.assert_allclose(got, ref_spectral_norm(weight, u, v, **attrs)["Out"], rtol=1e-10)


@both_modes
def test_spectral_norm_layer_makes_u_and_v_of_the_matrix_sides(run):
    w = RNG.uniform(-1, 1, (2, 8, 3, 3)).astype("float32")
    (got,) = run(lambda x: fluid.layers.spectral_norm(x, dim=1, power_iters=30), x=w)
    sigma = np.linalg.svd(np.moveaxis(w, 1, 0).reshape(8, -1), compute_uv=False)[0]
    np.testing.assert_allclose(got, w / sigma, rtol=1e-4)
    with program_guard(Program(), Program()), unique_name.guard():
        fluid.layers.spectral_norm(fluid.data("w", [2, 8, 3, 3], "float32"), dim=1)
        shapes = [p.shape for p in fluid.default_main_program().global_block().all_parameters()]
    assert shapes == [(8,), (18,)]


@pytest.mark.parametrize("act", ["leaky_relu", "elu", None])
def test_inplace_abn_trains_as_batch_norm_then_its_activation(act):
    """The fused op's output and its gradient (read back from the output) equal batch_norm's
    followed by the activation, with the same parameters."""
    x = RNG.uniform(-2, 2, (4, 3, 2, 2)).astype("float64")
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        data = fluid.data("x", [4, 3, 2, 2], "float64")
        data.stop_gradient = False
        fused = fluid.layers.inplace_abn(data, act=act, act_alpha=0.2, param_attr="s", bias_attr="b")
        plain = fluid.layers.batch_norm(data, param_attr="s", bias_attr="b")
        layers = fluid.layers
        if act == "leaky_relu":  # max(y, 0.2 y)
            plain = layers.elementwise_max(plain, layers.scale(plain, 0.2))
        elif act == "elu":  # max(y, 0) + 0.2 (exp(min(y, 0)) - 1)
            negative = layers.elementwise_min(plain, layers.zeros_like(plain))
            plain = layers.relu(plain) + layers.scale(layers.exp(negative), 0.2, bias=-0.2)
        weight = fluid.layers.assign(RNG.uniform(0.5, 1.5, (4, 3, 2, 2)))
        grads = [fluid.gradients([fluid.layers.reduce_sum(y * weight)], [data])[0] for y in (fused, plain)]
    exe, scope = fluid.Executor(), paddle.static.Scope()
    exe.run(startup, scope=scope)
    got = exe.run(main, feed={"x": x}, fetch_list=[fused, plain, *grads], scope=scope)
    np.testing.assert_allclose(got[0], got[1], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got[2], got[3], rtol=1e-8, atol=1e-10)


def test_im2sequence_cuts_each_image_to_its_real_size_divided_by_out_stride():
    """test_im2sequence_op.py's TestBlockExpandOpCase5-like input: Y holds each image's real
    (height, width); out_stride divides them, rounding up, before the patches are counted."""
    x, y = RNG.uniform(-1, 1, (2, 1, 6, 6)), np.array([[4.0, 5.0], [6.0, 3.0]])
    attrs = {"kernels": [2, 2], "strides": [1, 1], "paddings": [0, 0, 0, 0], "out_stride": [1, 2]}
    main = Program()
    with program_guard(main, Program()):
        block = main.global_block()
        block.create_var("x", x.shape, "float64", is_data=True)
        block.create_var("y", y.shape, "float64", is_data=True)
        block.create_var("out", dtype="float64", lod_level=1)
        block.append_op("im2sequence", {"X": ["x"], "Y": ["y"]}, {"Out": ["out"]}, attrs)
    (got,) = fluid.Executor().run(main, feed={"x": x, "y": y}, fetch_list=["out"], return_numpy=False)
    want = ref_im2sequence(x, y, **attrs)["Out"]
    assert got.lod() == want.lod() == [[0, 6, 11]]  # 3 x 2 patches of 4 x ceil(5 / 2), 5 x 1 of 6 x ceil(3 / 2)
    np.testing.assert_allclose(np.asarray(got), want.data)


# -- projection layers ------------------------------------------------------------------------------

IM2SEQ_X = np.array(
    [
        [[[6, 2, 1], [8, 3, 5], [0, 2, 6]], [[2, 4, 4], [6, 3, 0], [6, 4, 7]]],
        [[[6, 7, 1], [5, 7, 9], [2, 4, 8]], [[1, 2, 1], [1, 3, 5], [9, 0, 8]]],
    ],
    "float32",
)
IM2SEQ_OUT = [
    [6, 2, 8, 3, 2, 4, 6, 3],
    [2, 1, 3, 5, 4, 4, 3, 0],
    [8, 3, 0, 2, 6, 3, 6, 4],
    [3, 5, 2, 6, 3, 0, 4, 7],
    [6, 7, 5, 7, 1, 2, 1, 3],
    [7, 1, 7, 9, 2, 1, 3, 5],
    [5, 7, 2, 4, 1, 3, 9, 0],
    [7, 9, 4, 8, 3, 5, 0, 8],
]


def test_im2sequence_matches_paddles_docstring_with_one_sequence_per_image():
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        out = fluid.layers.im2sequence(fluid.data("x", [-1, 2, 3, 3], "float32"), filter_size=[2, 2])
    assert out.lod_level == 1 and out.shape == (-1, 8)
    (got,) = fluid.Executor().run(main, feed={"x": IM2SEQ_X}, fetch_list=[out], return_numpy=False)
    np.testing.assert_array_equal(np.asarray(got), IM2SEQ_OUT)
    assert got.recursive_sequence_lengths() == [[4, 4]]


def _fixed(value):
    return fluid.ParamAttr(initializer=fluid.initializer.NumpyArrayInitializer(value))


@both_modes
def test_bilinear_tensor_product_uses_its_weight_and_bias_parameters(run):
    x, y = RNG.uniform(-1, 1, (3, 4)).astype("float32"), RNG.uniform(-1, 1, (3, 5)).astype("float32")
    w, b = RNG.uniform(-1, 1, (2, 4, 5)).astype("float32"), RNG.uniform(-1, 1, (1, 2)).astype("float32")
    (got,) = run(
        lambda a, c: fluid.layers.bilinear_tensor_product(a, c, 2, param_attr=_fixed(w), bias_attr=_fixed(b)), x=x, y=y
    )
    np.testing.assert_allclose(got, ref_bilinear(x, y, w, b)["Out"], rtol=1e-5, atol=1e-6)


@both_modes
def test_row_conv_looks_ahead_within_each_dense_row(run):
    x, f = RNG.uniform(-1, 1, (2, 4, 3)).astype("float32"), RNG.uniform(-1, 1, (3, 3)).astype("float32")
    (got,) = run(lambda a: fluid.layers.row_conv(a, 2, param_attr=_fixed(f)), x=x)
    np.testing.assert_allclose(got, ref_row_conv(x, f)["Out"], rtol=1e-5, atol=1e-6)


def test_row_conv_stops_at_each_sequence_end_of_a_lod_input():
    rows, f = RNG.uniform(-1, 1, (6, 3)).astype("float32"), RNG.uniform(-1, 1, (2, 3)).astype("float32")
    x = fluid.create_lod_tensor(rows, [[2, 4]], fluid.CPUPlace())
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        out = fluid.layers.row_conv(fluid.data("x", [-1, 3], "float32", lod_level=1), 1, param_attr=_fixed(f))
    exe, scope = fluid.Executor(), paddle.static.Scope()
    exe.run(startup, scope=scope)
    (got,) = exe.run(main, feed={"x": x}, fetch_list=[out], scope=scope, return_numpy=False)
    np.testing.assert_allclose(np.asarray(got), ref_row_conv(x, f)["Out"].data, rtol=1e-5, atol=1e-6)
    assert got.lod() == [[0, 2, 6]]


@both_modes
def test_add_position_encoding_restarts_positions_per_sequence_row(run):
    x = RNG.uniform(-1, 1, (2, 5, 8)).astype("float32")
    (got,) = run(lambda a: fluid.layers.add_position_encoding(a, alpha=0.5, beta=2.0), x=x)
    np.testing.assert_allclose(got, ref_position_encoding(x, alpha=0.5, beta=2.0)["Out"], rtol=1e-5, atol=1e-6)


def _sigmoid(v):
    return 1 / (1 + np.exp(-v))


def ref_lstm(x, h0, c0, cells, num_layers, directions):
    """Paddle 2.0 test_lstm_cudnn_op.py's LSTMCell, layer by layer; `cells` per layer and direction
    [weight_ih, weight_hh, bias_ih, bias_hh]; the reverse direction runs from the last step."""
    last_h, last_c = [], []
    for layer in range(num_layers):
        outs = []
        for d in range(directions):
            w_ih, w_hh, b_ih, b_hh = cells[layer * directions + d]
            h, c = h0[layer * directions + d], c0[layer * directions + d]
            steps = range(x.shape[0] - 1, -1, -1) if d else range(x.shape[0])
            out = np.zeros(x.shape[:2] + (h.shape[-1],))
            for t in steps:
                i, f, g, o = np.split(x[t] @ w_ih.T + b_ih + h @ w_hh.T + b_hh, 4, axis=-1)
                c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
                h = _sigmoid(o) * np.tanh(c)
                out[t] = h
            outs.append(out)
            last_h.append(h)
            last_c.append(c)
        x = np.concatenate(outs, axis=-1)
    return x, np.stack(last_h), np.stack(last_c)


@both_modes
@pytest.mark.parametrize("num_layers,is_bidirec", [(1, False), (2, True)])
def test_lstm_reads_its_flat_weight_in_the_cudnn_layout(run, num_layers, is_bidirec):
    t, b, i, h = 4, 3, 5, 6
    dirs = 2 if is_bidirec else 1
    cells = [
        [RNG.uniform(-0.5, 0.5, s) for s in ((4 * h, i if k < dirs else dirs * h), (4 * h, h), (4 * h,), (4 * h,))]
        for k in range(num_layers * dirs)
    ]
    flat = np.concatenate([a.ravel() for cell in cells for a in cell])  # per layer and direction: W, R, b_W, b_R
    x = RNG.uniform(-1, 1, (t, b, i))
    h0, c0 = RNG.uniform(-1, 1, (2, num_layers * dirs, b, h))
    init = fluid.initializer.NumpyArrayInitializer(flat)

    def build(data, init_h, init_c):
        return fluid.layers.lstm(
            data, init_h, init_c, t, h, num_layers, is_bidirec=is_bidirec, default_initializer=init
        )

    got = run(build, x=x, init_h=h0, init_c=c0)
    for g, want in zip(got, ref_lstm(x, h0, c0, cells, num_layers, dirs)):
        np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-8)


def test_lstm_has_paddle_1_8s_flat_weight_size_and_a_gradient_for_it():
    main = Program()
    with program_guard(main, Program()), unique_name.guard():
        x = fluid.data("x", [7, -1, 5], "float32")
        h0 = fluid.data("h0", [4, -1, 6], "float32")
        c0 = fluid.data("c0", [4, -1, 6], "float32")
        out, last_h, last_c = fluid.layers.lstm(x, h0, c0, 7, 6, 2, is_bidirec=True)
        (weight,) = main.global_block().all_parameters()
        (grad,) = fluid.gradients([fluid.layers.mean(out)], [weight])
    # 1.8's count: (5*6*4 + 6*6*4) * 2 + 6*8*2 = 624 for layer 0, (12*6*4 + 6*6*4) * 2 + 6*8*2 = 960 for layer 1
    assert weight.name == "cudnn_lstm_0.w_0" and weight.shape == (1584,)
    assert grad.shape == (1584,) and out.shape == (7, -1, 12) and last_h.shape == (4, -1, 6)
    with pytest.raises(ValueError, match="expected at most max_len 6"):
        fluid.layers.lstm(x, h0, c0, 6, 6, 2, is_bidirec=True)


def test_data_norm_gives_each_batchs_summaries_as_its_statistics_gradients():
    """data_norm_grad's CPU kernel: the batch's count, sum and squared deviations (plus count *
    epsilon) per feature; with slots, per-row averages over the shown rows. X's gradient is
    dY * scales for every feature, shown or not."""
    x = np.array([[0.5, 1.0, 0.0, 2.0], [0.0, 3.0, 1.5, -1.0], [1.0, -2.0, 0.5, 0.5]], "float32")
    for slot_dim in (-1, 2):
        main, startup = Program(), Program()
        with program_guard(main, startup), unique_name.guard():
            data = fluid.data("x", [3, 4], "float32")
            data.stop_gradient = False
            y = fluid.layers.data_norm(data, epsilon=1e-4, slot_dim=slot_dim)
            stats = [main.global_block().var(f"dn.{s}") for s in ("batch_size", "batch_sum", "batch_square_sum")]
            grads = fluid.gradients([fluid.layers.reduce_sum(y)], [data, *stats])
        exe, scope = fluid.Executor(), paddle.static.Scope()
        exe.run(startup, scope=scope)
        got_y, dx, size, total, square = exe.run(main, feed={"x": x}, fetch_list=[y, *grads], scope=scope)
        want = ref_data_norm(x, np.full(4, 1e4), np.zeros(4), np.full(4, 1e4), slot_dim=slot_dim)["Y"]
        np.testing.assert_allclose(got_y, want, rtol=1e-6)
        np.testing.assert_allclose(dx, np.ones_like(x))  # scales are sqrt(1e4 / 1e4)
        if slot_dim < 0:
            np.testing.assert_allclose(size, [3, 3, 3, 3])
            np.testing.assert_allclose(total, x.sum(axis=0), rtol=1e-6)
            np.testing.assert_allclose(square, (x**2).sum(axis=0) + 3e-4, rtol=1e-6)
        else:  # row 1's first slot is not shown
            shown = np.array([[1, 1, 0, 0], [0, 0, 1, 1], [1, 1, 1, 1]], bool)
            count = shown.sum(axis=0)
            np.testing.assert_allclose(size, [1, 1, 1, 1])
            np.testing.assert_allclose(total, (x * shown).sum(axis=0) / count, rtol=1e-6)
            np.testing.assert_allclose(square, (x**2 * shown).sum(axis=0) / count + count * 1e-4, rtol=1e-6)


def test_spectral_norm_gradient_agrees_with_paddles_kernel_where_its_formula_holds():
    """Paddle's kernel (1.8 to 3.x) computes dOut * (1 - u v^T * sum(W / sigma)) / sigma, the exact
    gradient only for a uniform dOut (what its unit test feeds); ours is exact for any dOut and
    equals Paddle's there."""
    weight, u, v = RNG.uniform(-1, 1, (4, 6)), RNG.normal(0, 1, 4), RNG.normal(0, 1, 6)
    dout = np.full((4, 6), 0.3)
    uu, vv, sigma = _power_iteration(np, weight, u, v, 0, 2, 1e-12)
    paddles = dout * (1 - uu @ vv.T * (weight / sigma).sum()) / sigma
    got = _spectral_norm_grad(np, weight, u, v, dout, dim=0, power_iters=2, eps=1e-12)
    np.testing.assert_allclose(got, paddles, rtol=1e-12)


# -- ONNX export --------------------------------------------------------------------------------------


def _export_and_run(main, startup, feed, fetches, tmp_path):
    """(the executor's values, onnxruntime's, the onnx reference evaluator's) for `fetches`."""
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from onnx.reference import ReferenceEvaluator

    exe, scope = fluid.Executor(), paddle.static.Scope()
    exe.run(startup, scope=scope)
    names = [f.name for f in fetches]
    want = exe.run(main, feed=feed, fetch_list=names, scope=scope)
    model = export(main, list(feed), names, scope.vars, path=tmp_path / "model.onnx")
    onnx.checker.check_model(model, full_check=True)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return want, session.run(None, feed), ReferenceEvaluator(model).run(None, feed)


def test_normalization_layers_export_to_onnx_as_the_executor_computes_them(tmp_path):
    x = RNG.uniform(-1, 1, (2, 6, 3, 4)).astype("float32")
    flat = RNG.uniform(-1, 1, (2, 5)).astype("float32")
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        data = fluid.data("x", [-1, 6, 3, 4], "float32")
        rows = fluid.data("rows", [-1, 5], "float32")
        scale = fluid.layers.assign(RNG.uniform(0.5, 1.5, 6).astype("float32"))
        outs = [
            fluid.layers.layer_norm(data, begin_norm_axis=2, param_attr=_fixed(RNG.uniform(0.5, 1.5, 12))),
            fluid.layers.layer_norm(data, scale=False, shift=False),
            fluid.layers.instance_norm(data, param_attr=_fixed(RNG.uniform(0.5, 1.5, 6))),
            fluid.layers.group_norm(data, 3, param_attr=_fixed(RNG.uniform(0.5, 1.5, 6)), bias_attr="gn_b"),
            fluid.layers.group_norm(data, 2),
            fluid.layers.l2_normalize(data, axis=1),
            fluid.layers.lrn(data, n=3, k=1.5, alpha=0.3, beta=0.6),
            fluid.layers.affine_channel(data, scale=scale, bias=scale),
            fluid.layers.inplace_abn(data, act="leaky_relu", act_alpha=0.2, is_test=True),
            fluid.layers.inplace_abn(data, act="elu", act_alpha=0.5, is_test=True),
            fluid.layers.data_norm(rows, enable_scale_and_shift=True, param_attr={"batch_size": 4.0}),
            fluid.layers.bilinear_tensor_product(rows, rows, 3),
        ]
    want, by_ort, by_reference = _export_and_run(main, startup, {"x": x, "rows": flat}, outs, tmp_path)
    for runner, got in (("onnxruntime", by_ort), ("reference", by_reference)):
        for g, w, out in zip(got, want, outs):
            if runner == "reference" and out.name.startswith("lrn"):
                continue  # onnx's reference LRN loops over the batch where it means channels (onnx 1.23)
            np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5, err_msg=f"{runner}: {out.name}")
