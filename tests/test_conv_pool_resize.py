"""fluid.layers' 3-D and transposed convolutions, 3-D and adaptive pooling, the resize layers,
affine_grid and grid_sampler give Paddle 1.8's results, in a program and eagerly through the same
layer functions; conv2d and pool2d honour data_format and refuse what they cannot do. Expected values
come from the NumPy references of Paddle's unit tests (tests/op_cases) or, pasted, from Paddle."""

from __future__ import annotations

import numpy as np
import pytest
from op_cases.conv_nd import naive_conv, naive_conv_transpose, naive_max_pool_with_index, naive_pool

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.initializer import NumpyArrayInitializer
from fleetgraph.ir import FleetgraphError, Program, program_guard, unique_name
from fleetgraph.layers.conv_nd import max_pool_with_index, pool2d_v2

layers = fluid.layers


def run_static(build, **feeds):
    """build(*data variables) -> fetches, run in a fresh program (startup first) on `feeds`."""
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        xs = [fluid.data(name, list(v.shape), str(v.dtype)) for name, v in feeds.items()]
        fetches = build(*xs)
    fetches = list(fetches) if isinstance(fetches, (list, tuple)) else [fetches]
    scope = paddle.static.Scope()
    exe = fluid.Executor()
    exe.run(startup, scope=scope)
    return exe.run(main, feed=feeds, fetch_list=fetches, scope=scope)


def run_eager(build, **feeds):
    paddle.disable_static()
    try:
        outs = build(*(paddle.to_tensor(v) for v in feeds.values()))
    finally:
        paddle.enable_static()
    return [o.numpy() for o in (outs if isinstance(outs, (list, tuple)) else [outs])]


both_modes = pytest.mark.parametrize("run", [run_static, run_eager], ids=["static", "eager"])


def weights(value):
    return fluid.ParamAttr(initializer=NumpyArrayInitializer(np.asarray(value, dtype="float32")))


def ramp(shape, mod, shift, scale=1.0):
    """Small exact values: (0, 1, 2, ...) mod `mod`, shifted and scaled."""
    return ((np.arange(np.prod(shape)).reshape(shape) % mod - shift) * scale).astype("float32")


# -- transposed convolutions ----------------------------------------------------------------------

X_CT, W_CT = ramp((2, 4, 3, 3), 7, 3, 0.25), ramp((4, 1, 3, 3), 5, 2, 0.5)
# Paddle 3.3.1: F.conv2d_transpose(X_CT, W_CT, stride=2, padding=1, output_size=[6, 6], groups=2)[0, 0]
CT_PADDLE_00 = [
    [-0.875, 0.25, -0.5, 0.375, -0.125, 0.5],
    [-0.375, 0.125, -0.875, -2.0, 0.375, 0.25],
    [0.25, 0.625, 0.625, 0.75, 0.125, -1.25],
    [-0.125, -0.125, 0.25, 1.25, 0.625, 0.25],
    [0.5, -1.625, -0.875, 0.25, -0.5, 0.5],
    [0.25, 1.0, 0.125, -0.125, 0.0, -0.25],
]


@both_modes
def test_conv2d_transpose_with_output_size_and_groups_matches_paddle(run):
    (y,) = run(
        lambda x: layers.conv2d_transpose(
            x,
            2,
            output_size=[6, 6],
            filter_size=3,
            padding=1,
            stride=2,
            groups=2,
            param_attr=weights(W_CT),
            bias_attr=False,
        ),
        x=X_CT,
    )
    assert y.shape == (2, 2, 6, 6)
    np.testing.assert_allclose(y[0, 0], CT_PADDLE_00, atol=1e-6)
    want = naive_conv_transpose(X_CT, W_CT, [2, 2], [1, 1, 1, 1], [1, 1], groups=2, output_size=[6, 6])
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)


@both_modes
def test_conv2d_transpose_derives_the_filter_from_output_size_and_takes_nhwc(run):
    x = ramp((1, 3, 4, 2), 5, 2)
    (y,) = run(
        lambda v: layers.conv2d_transpose(
            v,
            3,
            output_size=[7, 9],
            stride=2,
            data_format="NHWC",
            param_attr=weights(np.ones((2, 3, 3, 3))),
            bias_attr=False,
        ),
        x=x,
    )
    # filter (7 - 2 * 2 - 1) + 1 = 3 and (9 - 3 * 2 - 1) + 1 = 3, as Paddle's layer derives it
    assert y.shape == (1, 7, 9, 3)
    want = naive_conv_transpose(x.transpose(0, 3, 1, 2), np.ones((2, 3, 3, 3)), [2, 2], [0] * 4, [1, 1])
    np.testing.assert_allclose(y, want.transpose(0, 2, 3, 1), rtol=1e-5)


def test_conv2d_transpose_op_carries_paddles_attrs():
    main = Program()
    with program_guard(main, Program()), unique_name.guard():
        x = fluid.data("x", [-1, 3, 5, 5], "float32")
        layers.conv2d_transpose(x, 4, filter_size=[3, 2], padding="SAME", stride=[2, 1], dilation=2, act="relu")
        layers.conv2d_transpose(x, 3, filter_size=2, groups=3, use_cudnn=False)
    ops = main.global_block().ops
    assert [op.type for op in ops] == [
        "conv2d_transpose",
        "elementwise_add",
        "relu",
        "depthwise_conv2d_transpose",
        "elementwise_add",
    ]
    conv = ops[0]
    assert conv.attr("padding_algorithm") == "SAME" and conv.attr("paddings") == [0, 0]
    assert conv.attr("strides") == [2, 1] and conv.attr("dilations") == [2, 2] and conv.attr("output_size") == []
    assert main.global_block().var(conv.input("Filter")[0]).shape == (3, 4, 3, 2)
    # SAME: pads from the input (5 by stride 2: [1, 1]; by 1: [0, 1]), no dilation: (5 - 1) * 2 - 2 + 3, 4 - 1 + 2
    assert main.global_block().var(conv.output("Output")[0]).shape == (-1, 4, 9, 5)


@both_modes
def test_conv3d_and_conv3d_transpose_match_the_direct_loops(run):
    x = ramp((1, 2, 4, 3, 4), 9, 4, 0.5)
    w3 = ramp((4, 1, 2, 2, 3), 7, 3)
    wt = ramp((2, 3, 2, 3, 2), 5, 2)
    y, t = run(
        lambda v: (
            layers.conv3d(
                v, 4, [2, 2, 3], stride=[2, 1, 1], padding=[1, 0, 1], groups=2, param_attr=weights(w3), bias_attr=False
            ),
            layers.conv3d_transpose(
                v,
                3,
                filter_size=[2, 3, 2],
                stride=2,
                padding=[[0, 0], [0, 0], [1, 0], [0, 1], [1, 1]],
                param_attr=weights(wt),
                bias_attr=False,
            ),
        ),
        x=x,
    )
    np.testing.assert_allclose(y, naive_conv(x, w3, [2, 1, 1], [1, 1, 0, 0, 1, 1], [1] * 3, groups=2), rtol=1e-5)
    np.testing.assert_allclose(t, naive_conv_transpose(x, wt, [2] * 3, [1, 0, 0, 1, 1, 1], [1] * 3), rtol=1e-5)


def test_conv3d_transpose_passes_the_2d_spelling_of_its_layout_as_paddle():
    main = Program()
    with program_guard(main, Program()), unique_name.guard():
        x = fluid.data("x", [-1, 3, 4, 5, 2], "float32")
        y = layers.conv3d_transpose(x, 4, filter_size=2, data_format="NDHWC")
    conv = main.global_block().ops[0]
    assert conv.attr("data_format") == "NHWC" and conv.attr("paddings") == [0, 0, 0]
    assert y.shape == (-1, 4, 5, 6, 4)


# -- pooling ---------------------------------------------------------------------------------------


@both_modes
def test_pool3d_exclusive_and_inclusive_averages_and_ndhwc(run):
    x = ramp((1, 2, 5, 4, 5), 13, 6)
    avg_ex, avg_in, mx = run(
        lambda v: (
            layers.pool3d(v, [3, 2, 3], "avg", [2, 1, 2], [1, 0, 1]),
            layers.pool3d(v, [3, 2, 3], "avg", [2, 1, 2], [1, 0, 1], exclusive=False),
            layers.pool3d(
                layers.transpose(v, [0, 2, 3, 4, 1]), 2, pool_stride=2, pool_padding="SAME", data_format="NDHWC"
            ),
        ),
        x=x,
    )
    pads = [1, 1, 0, 0, 1, 1]
    np.testing.assert_allclose(avg_ex, naive_pool(x, [3, 2, 3], [2, 1, 2], pads, "avg"), rtol=1e-6)
    np.testing.assert_allclose(avg_in, naive_pool(x, [3, 2, 3], [2, 1, 2], pads, "avg", exclusive=False), rtol=1e-6)
    same = naive_pool(x, [2] * 3, [2] * 3, [0, 1, 0, 0, 0, 1])  # SAME: ceil(5 / 2) = 3 needs one pad after
    np.testing.assert_allclose(mx, same.transpose(0, 2, 3, 4, 1))


@both_modes
def test_pool2d_takes_nhwc_and_paddles_pair_paddings(run):
    x = ramp((2, 3, 5, 6), 11, 5)
    nchw, nhwc = run(
        lambda v: (
            layers.pool2d(v, 3, "avg", 2, [[0, 0], [0, 0], [1, 0], [1, 2]]),
            layers.pool2d(
                layers.transpose(v, [0, 2, 3, 1]), 3, "avg", 2, [[0, 0], [1, 0], [1, 2], [0, 0]], data_format="NHWC"
            ),
        ),
        x=x,
    )
    want = naive_pool(x, [3, 3], [2, 2], [1, 0, 1, 2], "avg")
    np.testing.assert_allclose(nchw, want, rtol=1e-6)
    np.testing.assert_allclose(nhwc, want.transpose(0, 2, 3, 1), rtol=1e-6)


def test_pool_and_conv_layers_refuse_what_paddle_refuses():
    with program_guard(Program(), Program()), unique_name.guard():
        x = fluid.data("x", [-1, 3, 8, 8], "float32")
        with pytest.raises(FleetgraphError, match="pool2d: data_format expected NCHW or NHWC, got 'NCDHW'"):
            layers.pool2d(x, 2, data_format="NCDHW")
        with pytest.raises(FleetgraphError, match="pool2d: pool_size expected a size"):
            layers.pool2d(x)
        with pytest.raises(FleetgraphError, match="ceil_mode expected False with pool_padding 'VALID'"):
            layers.pool2d(x, 2, pool_padding="VALID", ceil_mode=True)
        with pytest.raises(FleetgraphError, match="pads the batch or channel dimension"):
            layers.conv2d(x, 2, 3, padding=[[0, 0], [1, 1], [1, 1], [1, 1]])
        with pytest.raises(FleetgraphError, match="require_index expected False with pool_type 'avg'"):
            layers.adaptive_pool2d(x, 2, "avg", require_index=True)


@both_modes
def test_conv2d_nhwc_equals_nchw_transposed(run):
    x = ramp((1, 4, 5, 3), 7, 3)
    w = ramp((2, 4, 3, 3), 5, 2)
    y, yt = run(
        lambda v: (
            layers.conv2d(v, 2, 3, padding="SAME", param_attr=weights(w), bias_attr=False),
            layers.conv2d(
                layers.transpose(v, [0, 2, 3, 1]),
                2,
                3,
                padding="SAME",
                param_attr=weights(w),
                bias_attr=False,
                data_format="NHWC",
            ),
        ),
        x=x,
    )
    np.testing.assert_allclose(y, naive_conv(x, w, [1, 1], [1, 1, 1, 1], [1, 1]), rtol=1e-5)
    np.testing.assert_allclose(yt, y.transpose(0, 2, 3, 1), rtol=1e-5)


X_AMP2 = (np.arange(35).reshape(1, 1, 5, 7) * 37 % 23).astype("float32")
X_AMP3 = ramp((1, 2, 4, 4, 4), 11, 5)


@both_modes
def test_adaptive_max_pools_return_paddles_indices(run):
    out2, mask2, out3, mask3 = run(
        lambda a, b: (
            *layers.adaptive_pool2d(a, [2, 3], require_index=True),
            *layers.adaptive_pool3d(b, [2, 3, 3], require_index=True),
        ),
        a=X_AMP2,
        b=X_AMP3,
    )
    # Paddle 3.3.1: F.adaptive_max_pool2d(X_AMP2, [2, 3], return_mask=True)
    np.testing.assert_array_equal(out2[0, 0], [[20, 22, 22], [18, 22, 22]])
    np.testing.assert_array_equal(mask2[0, 0], [[8, 18, 18], [21, 18, 18]])
    assert mask2.dtype == np.int32
    # Paddle 3.3.1: F.adaptive_max_pool3d(X_AMP3, [2, 3, 3], return_mask=True)[.][0, 1]
    np.testing.assert_array_equal(out3[0, 1], [[[5, 5, 5], [3, 4, 5], [5, 3, 4]], [[4, 5, 5], [5, 3, 4], [5, 5, 3]]])
    np.testing.assert_array_equal(
        mask3[0, 1], [[[1, 1, 23], [21, 22, 23], [12, 10, 11]], [[33, 34, 34], [56, 54, 55], [45, 45, 43]]]
    )


@both_modes
def test_strided_max_pool_with_index_masks_the_first_maximum_in_each_clipped_window(run):
    x = ramp((2, 3, 5, 6), 7, 3)  # ties: the first maximum in scan order wins, as Paddle's kernel
    out, mask = run(lambda v: max_pool_with_index(v, 2, [3, 3], [2, 2], [1, 1]), x=x)
    want_out, want_mask = naive_max_pool_with_index(x, [3, 3], [2, 2], [1, 1])
    np.testing.assert_array_equal(out, want_out)
    np.testing.assert_array_equal(mask, want_mask)


@both_modes
def test_adaptive_avg_pools_split_uneven_inputs_by_floor_and_ceil(run):
    (out,) = run(lambda a: layers.adaptive_pool2d(a, [2, 3], "avg"), a=X_AMP2)
    rows, cols = [(0, 3), (2, 5)], [(0, 3), (2, 5), (4, 7)]
    want = [[X_AMP2[0, 0, r0:r1, c0:c1].mean() for c0, c1 in cols] for r0, r1 in rows]
    np.testing.assert_allclose(out[0, 0], want, rtol=1e-6)


def test_adaptive_max_pool_gradient_goes_to_the_masked_input():
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = fluid.data("x", [1, 1, 5, 7], "float32")
        x.stop_gradient = False
        out = layers.adaptive_pool2d(x, [2, 3])
        (dx,) = fluid.gradients([layers.reduce_sum(out)], [x])
    (g,) = fluid.Executor().run(main, feed={"x": X_AMP2}, fetch_list=[dx], scope=paddle.static.Scope())
    want = np.zeros(35)
    np.add.at(want, [8, 18, 18, 21, 18, 18], 1.0)
    np.testing.assert_array_equal(g.reshape(-1), want)


# -- ONNX export -----------------------------------------------------------------------------------


def _exports_as_computed(build, feeds, tmp_path):
    """build(*data) -> fetches in a program whose parameters the startup fills; the exported model run
    by onnxruntime and onnx's reference evaluator equals the executor (tests/test_onnx.py's check)."""
    pytest.importorskip("onnx")
    from test_onnx import _assert_exports

    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        xs = [fluid.data(name, [-1, *v.shape[1:]], str(v.dtype)) for name, v in feeds.items()]
        fetches = build(*xs)
    scope = paddle.static.Scope()
    fluid.Executor().run(startup, scope=scope)
    names = [v.name for v in fetches]
    _assert_exports(main, scope, list(feeds), names, feeds, tmp_path, reload=False)


@pytest.mark.parametrize(
    "kw",
    [
        {"stride": 2, "padding": 1, "output_size": [7, 8]},
        {"stride": [2, 1], "padding": "SAME", "dilation": 1},
        {"padding": [1, 0, 0, 2], "dilation": [2, 1]},
    ],
)
def test_transposed_convolutions_export_as_the_kernels_compute(kw, tmp_path):
    x = ramp((2, 4, 4, 4), 7, 3, 0.25)
    _exports_as_computed(lambda v: [layers.conv2d_transpose(v, 6, filter_size=3, **kw)], {"x": x}, tmp_path)


def test_conv3d_pool3d_and_indexed_max_pools_export(tmp_path):
    x = ramp((2, 4, 4, 6, 6), 13, 6, 0.5)

    def build(v):
        c = layers.conv3d(v, 4, 3, padding=[1, 0, 1], stride=[1, 2, 1], groups=2)
        t = layers.conv3d_transpose(c, 2, filter_size=2, stride=2, padding=1)
        p = layers.pool3d(c, 2, "avg", 2, [1, 0, 1], exclusive=False)
        g = layers.pool3d(c, global_pooling=True)
        out2, mask2 = layers.adaptive_pool2d(layers.reduce_mean(v, dim=2), [2, 3], require_index=True)
        out3, mask3 = layers.adaptive_pool3d(c, [2, 1, 3], require_index=True)
        return [t, p, g, out2, mask2, out3, mask3]

    _exports_as_computed(build, {"x": x}, tmp_path)


# -- resizing ---------------------------------------------------------------------------------------

X_RS = (np.arange(12).reshape(1, 1, 3, 4) * 5 % 7).astype("float32")  # [[0 5 3 1] [6 4 2 0] [5 3 1 6]]
# Paddle 3.3.1's F.interpolate on X_RS, the 1.8 kernels' formulas (align_mode 0: half-pixel centres)
BILINEAR_HALF_PIXEL = [
    [0.0, 2.5, 4.666666, 3.333333, 2.0, 1.0],
    [3.75, 4.0625, 4.041667, 2.708333, 1.375, 0.375],
    [5.625, 4.625, 3.291667, 1.958333, 1.9375, 2.25],
    [5.0, 4.0, 2.666667, 1.333333, 3.5, 6.0],
]
BILINEAR_ALIGN_CORNERS = [[0, 4, 1], [3, 3.5, 0.5], [6, 3, 0], [5.5, 2.5, 3], [5, 2, 6]]
BILINEAR_ASYMMETRIC = [
    [0.0, 3.333333, 4.333333, 3.0, 1.666667, 1.0],
    [4.5, 4.333333, 3.583333, 2.25, 0.916667, 0.25],
    [5.5, 4.166667, 2.833333, 1.5, 2.5, 3.0],
    [5.0, 3.666667, 2.333333, 1.0, 4.333334, 6.0],
]
NEAREST = [[0, 0, 5, 5, 3, 3, 1]] * 2 + [[6, 6, 4, 4, 2, 2, 0]] * 2 + [[5, 5, 3, 3, 1, 1, 6]]
BICUBIC_HALF_PIXEL = [
    [-0.764938, 3.757098, 4.775131, 2.293279, 0.950277],
    [3.916015, 4.544949, 3.778793, 1.477153, -0.467047],
    [6.467049, 4.522848, 2.221207, 1.455052, 2.083984],
    [5.049724, 3.706722, 1.224869, 2.242904, 6.764934],
]


@both_modes
def test_resize_layers_match_paddles_kernels(run):
    got = run(
        lambda x: (
            layers.resize_bilinear(x, [4, 6], align_corners=False, align_mode=0),
            layers.image_resize(x, [5, 3]),
            layers.resize_bilinear(x, [4, 6], align_corners=False),
            layers.resize_nearest(
                layers.transpose(x, [0, 2, 3, 1]), scale=1.8, align_corners=False, data_format="NHWC"
            ),
            layers.interpolate(x, [4, 5], resample="BICUBIC", align_corners=False),
        ),
        x=X_RS,
    )
    np.testing.assert_allclose(got[0][0, 0], BILINEAR_HALF_PIXEL, atol=1e-5)
    np.testing.assert_allclose(got[1][0, 0], BILINEAR_ALIGN_CORNERS, atol=1e-5)
    np.testing.assert_allclose(got[2][0, 0], BILINEAR_ASYMMETRIC, atol=1e-5)
    assert got[3].shape == (1, 5, 7, 1)  # int(3 * 1.8), int(4 * 1.8)
    np.testing.assert_array_equal(got[3][0, :, :, 0], NEAREST)
    np.testing.assert_allclose(got[4][0, 0], BICUBIC_HALF_PIXEL, atol=1e-5)


@both_modes
def test_resize_trilinear_matches_paddle(run):
    x = (np.arange(12).reshape(1, 1, 2, 2, 3) * 3 % 5).astype("float32")
    (y,) = run(lambda v: layers.resize_trilinear(v, [3, 3, 4]), x=x)
    # Paddle 3.3.1: F.interpolate(x, [3, 3, 4], mode="trilinear", align_corners=True)[0, 0, 1]
    np.testing.assert_allclose(
        y[0, 0, 1],
        [[1.5, 1.833333, 2.166667, 2.5], [2.25, 1.75, 1.666667, 2.0], [3.0, 1.666667, 1.166667, 1.5]],
        atol=1e-5,
    )


def test_resize_sizes_from_tensors_win_as_in_paddle():
    """A size tensor in out_shape (SizeTensor), actual_shape over out_shape (OutSize), a scale tensor."""
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = fluid.data("x", [1, 1, 3, 4], "float32")
        h = fluid.data("h", [1], "int32")
        size = fluid.data("size", [2], "int32")
        scale = fluid.data("scale", [1], "float32")
        mixed = layers.resize_bilinear(x, [h, 6], align_corners=False, align_mode=0)
        with pytest.warns(UserWarning, match="actual_shape"):
            actual = layers.resize_bilinear(x, [9, 9], actual_shape=size, align_corners=False, align_mode=0)
        scaled = layers.resize_nearest(x, scale=scale)
    assert mixed.shape == (1, 1, -1, 6) and actual.shape == (1, 1, 9, 9)
    feed = {
        "x": X_RS,
        "h": np.array([4], "int32"),
        "size": np.array([4, 6], "int32"),
        "scale": np.array([2.0], "float32"),
    }
    outs = fluid.Executor().run(main, feed=feed, fetch_list=[mixed, actual, scaled], scope=paddle.static.Scope())
    np.testing.assert_allclose(outs[0][0, 0], BILINEAR_HALF_PIXEL, atol=1e-5)
    np.testing.assert_allclose(outs[1][0, 0], BILINEAR_HALF_PIXEL, atol=1e-5)
    assert outs[2].shape == (1, 1, 6, 8)
    ops = [op.type for op in main.global_block().ops]
    assert ops == ["fill_constant", "bilinear_interp", "bilinear_interp", "nearest_interp"]


def test_image_resize_short_keeps_the_aspect_ratio():
    with program_guard(Program(), Program()), unique_name.guard():
        x = fluid.data("x", [2, 3, 10, 15], "float32")
        y = layers.image_resize_short(x, 4)
    assert y.shape == (2, 3, 4, 6)  # int(15 * 4 / 10 + 0.5)


def test_resize_layers_refuse_what_paddle_refuses():
    with program_guard(Program(), Program()), unique_name.guard():
        x = fluid.data("x", [1, 1, 3, 4], "float32")
        with pytest.raises(FleetgraphError, match="image_resize: resample expected one of"):
            layers.image_resize(x, [4, 4], resample="BICUBIC")
        with pytest.raises(FleetgraphError, match="expected a 5-D input"):
            layers.resize_trilinear(x, [2, 2, 2])
        with pytest.raises(FleetgraphError, match="expected out_shape or scale"):
            layers.resize_bilinear(x)
        with pytest.raises(FleetgraphError, match="align_mode expected 0 or 1"):
            layers.resize_bilinear(x, [2, 2], align_mode=2)
        with pytest.raises(FleetgraphError, match="data_format expected NCHW or NHWC"):
            layers.resize_nearest(x, [2, 2], data_format="NCDHW")


# -- affine_grid and grid_sampler -------------------------------------------------------------------

THETA = np.array([[[0.5, -0.25, 0.1], [0.2, 1.0, -0.3]]], dtype="float32")
# Paddle 3.3.1: F.affine_grid(THETA, [1, 1, 3, 4], align_corners=True), then F.grid_sample(X_RS, grid,
# "bilinear", "zeros", align_corners=True): what 1.8's ops compute
GRID_ROW0 = [[-0.15, -1.5], [0.183333, -1.366667], [0.516667, -1.233333], [0.85, -1.1]]
SAMPLED = [[2.225, 2.185, 1.878333, 1.305], [4.35, 3.566667, 2.433333, 1.3], [4.45, 3.316667, 2.183333, 1.2075]]


@both_modes
def test_affine_grid_then_grid_sampler_match_paddle(run):
    grid, out = run(
        lambda x, theta: (
            layers.affine_grid(theta, [1, 1, 3, 4]),
            layers.grid_sampler(x, layers.affine_grid(theta, [1, 1, 3, 4])),
        ),
        x=X_RS,
        theta=THETA,
    )
    assert grid.shape == (1, 3, 4, 2)
    np.testing.assert_allclose(grid[0, 0], GRID_ROW0, atol=1e-5)
    np.testing.assert_allclose(out[0, 0], SAMPLED, atol=1e-5)


def test_spatial_transformer_gradients_reach_theta_and_the_image():
    """affine_grid + grid_sampler trained end to end: the gradients equal central differences."""
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = fluid.data("x", [1, 1, 3, 4], "float64")
        theta = fluid.data("theta", [1, 2, 3], "float64")
        x.stop_gradient = theta.stop_gradient = False
        shape = layers.assign(np.array([1, 1, 3, 4], dtype="int32"))
        loss = layers.reduce_sum(layers.square(layers.grid_sampler(x, layers.affine_grid(theta, shape))))
        grads = fluid.gradients([loss], [x, theta])
    exe, scope = fluid.Executor(), paddle.static.Scope()
    feed = {"x": X_RS.astype("float64"), "theta": THETA.astype("float64")}
    got = exe.run(main, feed=feed, fetch_list=[loss, *grads], scope=scope)
    for name, g in zip(("x", "theta"), got[1:]):
        num = np.zeros_like(feed[name])
        for i in np.ndindex(num.shape):
            for sign in (1, -1):
                moved = dict(feed, **{name: feed[name].copy()})
                moved[name][i] += sign * 1e-6
                num[i] += sign * exe.run(main, feed=moved, fetch_list=[loss], scope=scope)[0].item() / 2e-6
        np.testing.assert_allclose(g, num, rtol=1e-4, atol=1e-5, err_msg=name)


@pytest.mark.parametrize("align_corners, align_mode", [(True, 1), (False, 0), (False, 1)])
def test_resize_and_spatial_transformer_export_as_the_kernels_compute(align_corners, align_mode, tmp_path):
    x = ramp((2, 3, 4, 5), 7, 3, 0.5)
    theta = np.tile(THETA, (2, 1, 1))
    kw = {"align_corners": align_corners}

    def build(v, t):
        return [
            layers.resize_bilinear(v, [7, 3], align_mode=align_mode, **kw),
            layers.resize_bilinear(
                layers.transpose(v, [0, 2, 3, 1]), scale=1.5, align_mode=align_mode, data_format="NHWC", **kw
            ),
            layers.resize_nearest(v, [9, 4], **kw),
            layers.interpolate(v, [6, 7], resample="BICUBIC", **kw),
            layers.resize_trilinear(layers.reshape(v, [-1, 3, 1, 4, 5]), [2, 5, 3], align_mode=align_mode, **kw),
            layers.affine_grid(t, [2, 3, 4, 5]),
        ]

    _exports_as_computed(build, {"x": x, "t": theta}, tmp_path)


def test_grid_sampler_exports_as_grid_sample_for_onnxruntime(tmp_path):
    """GridSample at opset 18 spells its mode 'bilinear', which onnx's reference evaluator (opset 20's
    'linear' only) does not run: onnxruntime is the runner here."""
    pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from fleetgraph.onnx import export

    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = fluid.data("x", [-1, 1, 3, 4], "float32")
        theta = fluid.data("theta", [-1, 2, 3], "float32")
        out = layers.grid_sampler(x, layers.affine_grid(theta, [2, 1, 3, 4]))
    feed = {"x": np.concatenate([X_RS, X_RS[..., ::-1]]), "theta": np.tile(THETA, (2, 1, 1))}
    (want,) = fluid.Executor().run(main, feed=feed, fetch_list=[out], scope=paddle.static.Scope())
    model = export(main, ["x", "theta"], [out.name], {}, path=tmp_path / "model.onnx")
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(session.run(None, feed)[0], want, atol=1e-5)
    np.testing.assert_allclose(want[0, 0], SAMPLED, atol=1e-5)


@both_modes
def test_2_0_pooling_returns_the_mask_and_overrides_the_divisor(run):
    x = ramp((2, 3, 5, 6), 7, 3)
    out, mask = run(lambda v: pool2d_v2(v, 3, 2, 1, "max", return_mask=True), x=x)
    avg, summed = run(
        lambda v: (
            pool2d_v2(v, [2, 3], None, 0, "avg", exclusive=False),
            pool2d_v2(v, [2, 3], None, 0, "avg", divisor_override=1),
        ),
        x=x,
    )
    want_out, want_mask = naive_max_pool_with_index(x, [3, 3], [2, 2], [1, 1])
    np.testing.assert_array_equal(out, want_out)
    np.testing.assert_array_equal(mask, want_mask)
    np.testing.assert_allclose(avg, naive_pool(x, [2, 3], [2, 3], [0] * 4, "avg"), rtol=1e-6)
    np.testing.assert_allclose(summed, avg * 6, rtol=1e-6)


def test_2_0_max_pool_mask_refuses_windows_its_op_cannot_make():
    with program_guard(Program(), Program()), unique_name.guard():
        x = fluid.data("x", [1, 1, 5, 5], "float32")
        with pytest.raises(NotImplementedError, match="max_pool2d: return_mask with padding 'SAME'"):
            pool2d_v2(x, 2, 2, "SAME", "max", return_mask=True)
        with pytest.raises(FleetgraphError, match="return_mask expected data_format 'NCHW'"):
            pool2d_v2(x, 2, 2, 0, "max", return_mask=True, data_format="NHWC")
