"""Paddle 2.0's common paddle.nn functions and layers (pad, interpolate, dropouts, bilinear, cosine
and pairwise distances, pixel_shuffle, affine_grid, grid_sample, one_hot, embedding, label_smooth,
diag_embed ...) give Paddle's values eagerly and in a program; expected numbers are NumPy
reimplementations of Paddle 2.0's unit-test references, or printed by Paddle."""

from __future__ import annotations

import numpy as np
import pytest

import fleetgraph as paddle
import fleetgraph.nn as nn
import fleetgraph.nn.functional as F
from fleetgraph.ir import Program, program_guard, unique_name

RNG = np.random.RandomState(3)


def run(mode: str, build, *arrays):
    """build(*inputs) -> an output or a tuple of them, as NumPy arrays, run eagerly ('eager') or as a
    fresh program fed `arrays` ('static'); layers built inside get their parameters in that mode."""
    if mode == "eager":
        paddle.disable_static()
        got = build(*map(paddle.to_tensor, arrays))
        return [t.numpy() for t in (got if isinstance(got, tuple) else (got,))]
    paddle.enable_static()
    main, startup = Program(), Program()
    names = [f"x{i}" for i in range(len(arrays))]
    with program_guard(main, startup), unique_name.guard():
        got = build(*(paddle.static.data(n, list(a.shape), str(a.dtype)) for n, a in zip(names, arrays)))
    scope = paddle.static.Scope()
    exe = paddle.static.Executor()
    exe.run(startup, scope=scope)
    fetch = list(got) if isinstance(got, tuple) else [got]
    return exe.run(main, feed=dict(zip(names, arrays)), fetch_list=fetch, scope=scope)


modes = pytest.mark.parametrize("mode", ["eager", "static"])

IMG = np.arange(24, dtype="float32").reshape(1, 2, 3, 4)
VOL = np.arange(24, dtype="float32").reshape(1, 1, 2, 3, 4)


# -- pad ---------------------------------------------------------------------------------------------


def _np_pad(x, pad, mode, spatial):
    widths = [(0, 0)] * x.ndim
    for i, axis in enumerate(reversed(spatial)):
        widths[axis] = (pad[2 * i], pad[2 * i + 1])
    np_mode = {"replicate": "edge", "circular": "wrap"}.get(mode, mode)
    return np.pad(x, widths, mode=np_mode) if mode != "constant" else np.pad(x, widths, constant_values=2.5)


@modes
@pytest.mark.parametrize("mode_", ["constant", "reflect", "replicate", "circular"])
def test_pad_pads_the_spatial_axes_last_first_in_every_mode(mode, mode_):
    got = run(mode, lambda x: F.pad(x, [1, 2, 2, 0], mode=mode_, value=2.5), IMG)[0]
    np.testing.assert_array_equal(got, _np_pad(IMG, [1, 2, 2, 0], mode_, [2, 3]))
    got = run(mode, lambda x: F.pad(x, [1, 1, 2, 0, 1, 0], mode=mode_, value=2.5, data_format="NCDHW"), VOL)[0]
    np.testing.assert_array_equal(got, _np_pad(VOL, [1, 1, 2, 0, 1, 0], mode_, [2, 3, 4]))


@modes
def test_pad_of_two_per_axis_pads_every_axis_in_order(mode):
    got = run(mode, lambda x: F.pad(x, [0, 1, 1, 0, 0, 0, 2, 1], value=-1.0), IMG)[0]
    np.testing.assert_array_equal(got, np.pad(IMG, [(0, 1), (1, 0), (0, 0), (2, 1)], constant_values=-1.0))


@modes
def test_pad_layers_take_an_int_or_a_list_in_their_layouts(mode):
    seq = np.arange(12, dtype="float32").reshape(2, 3, 2)
    got = run(mode, lambda x: nn.Pad1D([2, 1], mode="replicate", data_format="NLC")(x), seq)[0]
    np.testing.assert_array_equal(got, np.pad(seq, [(0, 0), (2, 1), (0, 0)], mode="edge"))
    got = run(mode, lambda x: nn.Pad2D(1, mode="reflect")(x), IMG)[0]
    np.testing.assert_array_equal(got, np.pad(IMG, [(0, 0), (0, 0), (1, 1), (1, 1)], mode="reflect"))
    got = run(mode, lambda x: nn.Pad3D([0, 1, 1, 0, 1, 1], value=3.0)(x), VOL)[0]
    np.testing.assert_array_equal(got, np.pad(VOL, [(0, 0), (0, 0), (1, 1), (1, 0), (0, 1)], constant_values=3.0))


def test_pad_refuses_a_layout_that_does_not_fit_the_rank():
    with pytest.raises(ValueError, match="data_format"):
        F.pad(paddle.to_tensor(IMG), [1, 1, 1, 1], mode="reflect", data_format="NCDHW")


# -- interpolate ------------------------------------------------------------------------------------

# printed by Paddle: bicubic 4x4 -> 3x5 (align_corners=False), rows of the one channel
BICUBIC = [
    [0.4438794, 1.1153800, 2.0046299, 2.8938804, 3.5653780],
    [5.9392509, 6.6107516, 7.5, 8.3892517, 9.0607462],
    [11.434624, 12.106124, 12.995373, 13.884624, 14.556115],
]


@modes
def test_interpolate_modes_give_paddles_values(mode):
    square = np.arange(16, dtype="float32").reshape(1, 1, 4, 4)
    got = run(mode, lambda x: F.interpolate(x, size=[3, 5], mode="bicubic"), square)[0]
    np.testing.assert_allclose(got[0, 0], BICUBIC, rtol=1e-5)
    small = np.arange(6, dtype="float32").reshape(1, 1, 2, 3)
    got = run(mode, lambda x: F.interpolate(x, scale_factor=2), small)[0]
    np.testing.assert_array_equal(got, small.repeat(2, axis=2).repeat(2, axis=3))
    line = np.arange(4, dtype="float32").reshape(1, 1, 4)
    got = run(mode, lambda x: F.upsample(x, size=[8], mode="linear", data_format="NCW"), line)[0]
    np.testing.assert_allclose(got[0, 0], [0, 0.25, 0.75, 1.25, 1.75, 2.25, 2.75, 3], rtol=1e-6)
    got = run(
        mode, lambda x: F.interpolate(x, size=[3, 4, 5], mode="trilinear", align_corners=True, data_format="NCDHW"), VOL
    )[0]
    assert got.shape == (1, 1, 3, 4, 5) and got.sum() == pytest.approx(690.0)


@modes
def test_bilinear_interpolate_in_nhwc_matches_half_pixel_sampling(mode):
    hwc = np.arange(12, dtype="float32").reshape(1, 2, 3, 2)
    got = run(mode, lambda x: F.interpolate(x, size=[4, 5], mode="bilinear", data_format="NHWC"), hwc)[0]
    np.testing.assert_allclose(got[0, 1, :, 0], [1.5, 2.3, 3.5, 4.7, 5.5], rtol=1e-5)
    np.testing.assert_allclose(got[0, 3, :, 1], [7.0, 7.8, 9.0, 10.2, 11.0], rtol=1e-5)


@modes
def test_upsampling_layers(mode):
    got = run(mode, lambda x: nn.UpsamplingNearest2D(scale_factor=2)(x), IMG)[0]
    np.testing.assert_array_equal(got, IMG.repeat(2, axis=2).repeat(2, axis=3))
    got = run(mode, lambda x: nn.UpsamplingBilinear2D(size=[5, 7])(x), IMG)[0]
    rows, cols = np.linspace(0, 2, 5), np.linspace(0, 3, 7)  # corners aligned: a plane stays a plane
    np.testing.assert_allclose(got[0, 1], 12 + rows[:, None] * 4 + cols[None, :], rtol=1e-5)
    got = run(mode, lambda x: nn.Upsample(size=[6, 8], mode="bilinear")(x), IMG)[0]
    assert got.shape == (1, 2, 6, 8)


def test_interpolate_refuses_what_paddle_refuses():
    x = paddle.to_tensor(IMG)
    with pytest.raises(ValueError, match="align_corners"):
        F.interpolate(x, size=[4, 4], align_corners=True)
    with pytest.raises(ValueError, match="only one"):
        F.interpolate(x, size=[4, 4], scale_factor=2)
    with pytest.raises(ValueError, match="3-D"):
        F.interpolate(x, size=[4], mode="linear")
    with pytest.raises(NotImplementedError, match="fractional"):
        F.interpolate(x, scale_factor=1.7, mode="bilinear")


# -- dropouts ---------------------------------------------------------------------------------------


@modes
def test_channel_dropouts_drop_whole_channels_and_upscale_the_rest(mode):
    ones = np.ones((4, 8, 3, 3), "float32")
    got = run(mode, lambda x: F.dropout2d(x, p=0.5), ones)[0]
    per_channel = got.reshape(4, 8, 9)
    assert set(np.unique(got)) <= {0.0, 2.0}
    assert (per_channel.min(axis=2) == per_channel.max(axis=2)).all()
    got = run(mode, lambda x: nn.Dropout3D(p=0.25, data_format="NDHWC")(x), np.ones((2, 2, 2, 2, 16), "float32"))[0]
    assert set(np.unique(got)) <= {0.0, np.float32(1 / 0.75)}
    assert (got.min(axis=(1, 2, 3)) == got.max(axis=(1, 2, 3))).all()
    got = run(mode, lambda x: F.dropout(x, 0.5, axis=1, mode="downscale_in_infer"), ones[:, :, 0, 0])[0]
    assert set(np.unique(got)) <= {0.0, 1.0} and (got.min(axis=0) == got.max(axis=0)).all()


@modes
def test_dropouts_in_eval(mode):
    x = RNG.rand(2, 3, 4, 4).astype("float32")

    def build(t):
        layers = [nn.Dropout2D(0.5), nn.AlphaDropout(0.5)]
        for layer in layers:
            layer.eval()
        return tuple(layer(t) for layer in layers) + (
            F.dropout(t, 0.4, axis=[0, 1], training=False, mode="downscale_in_infer"),
        )

    d2, alpha, down = run(mode, build, x)
    np.testing.assert_array_equal(d2, x)
    np.testing.assert_array_equal(alpha, x)
    np.testing.assert_allclose(down, x * 0.6, rtol=1e-6)


@modes
def test_alpha_dropout_sets_dropped_to_selus_saturation_then_rescales(mode):
    got = run(mode, lambda x: F.alpha_dropout(x, p=0.2), np.zeros((50, 40), "float32"))[0]
    alpha_p = -1.6732632423543772 * 1.0507009873554805
    a = ((1 - 0.2) * (1 + 0.2 * alpha_p**2)) ** -0.5
    b = -a * alpha_p * 0.2
    np.testing.assert_allclose(np.unique(got), sorted([b, a * alpha_p + b]), rtol=1e-5)
    assert 0.1 < (got < 0).mean() < 0.3


# -- products and distances -------------------------------------------------------------------------


@modes
def test_bilinear_matches_its_einsum(mode):
    x1, x2 = RNG.rand(2, 3).astype("float32"), RNG.rand(2, 4).astype("float32")
    w, b = RNG.rand(5, 3, 4).astype("float32"), RNG.rand(1, 5).astype("float32")
    got = run(mode, F.bilinear, x1, x2, w, b)[0]
    np.testing.assert_allclose(got, np.einsum("ni,kij,nj->nk", x1, w, x2) + b, rtol=1e-5, atol=1e-6)

    def layer(a, c):
        bl = nn.Bilinear(3, 4, 5)
        return bl(a, c), bl.weight, bl.bias

    got, weight, bias = run(mode, layer, x1, x2)
    assert weight.shape == (5, 3, 4) and bias.shape == (1, 5)
    np.testing.assert_allclose(got, np.einsum("ni,kij,nj->nk", x1, weight, x2) + bias, rtol=1e-5, atol=1e-6)


@modes
def test_cosine_similarity_and_pairwise_distance(mode):
    x, y = RNG.rand(4, 6).astype("float32"), RNG.rand(4, 6).astype("float32")
    x[0] = 0.0
    want = (x * y).sum(1) / np.sqrt(np.maximum((x * x).sum(1) * (y * y).sum(1), 1e-16))
    got = run(mode, lambda a, c: (F.cosine_similarity(a, c), nn.CosineSimilarity(axis=0)(a, c)), x, y)
    np.testing.assert_allclose(got[0], want, rtol=1e-5)
    want0 = (x * y).sum(0) / np.sqrt((x * x).sum(0) * (y * y).sum(0))
    np.testing.assert_allclose(got[1], want0, rtol=1e-5)
    x[1, 2] = y[1, 2]
    for p in (2.0, 1, 3, 0, np.inf, -np.inf):
        got = run(mode, lambda a, c: nn.PairwiseDistance(p, keepdim=True)(a, c), x, y)[0]  # noqa: B023
        np.testing.assert_allclose(got[:, 0], np.linalg.norm(x - y, ord=p, axis=1), rtol=1e-5)


# -- vision -----------------------------------------------------------------------------------------

THETA = np.array([[[-0.7, -0.4, 0.3], [0.6, 0.5, 1.5]]], "float32")


def _np_affine_grid(theta, h, w, align_corners):
    xs, ys = np.linspace(-1, 1, w), np.linspace(-1, 1, h)
    if not align_corners:
        xs, ys = xs * (w - 1) / w, ys * (h - 1) / h
    base = np.stack(np.broadcast_arrays(xs[None, :], ys[:, None], np.ones((h, w))), axis=-1)
    return np.einsum("hwk,njk->nhwj", base, theta)


@modes
def test_affine_grid_with_and_without_aligned_corners(mode):
    for align in (True, False):
        got = run(mode, lambda t: F.affine_grid(t, [1, 2, 3, 4], align_corners=align), THETA)[0]  # noqa: B023
        np.testing.assert_allclose(got, _np_affine_grid(THETA, 3, 4, align), rtol=1e-5, atol=1e-6)


# printed by Paddle: x = arange(12) [1, 1, 3, 4], grid = (arange(24) [1, 3, 4, 2] / 12 - 1) * (1.1, 0.9)
GRID_SAMPLE = {
    True: [[0.595, 1.425, 2.3, 3.175], [4.05, 4.925, 5.8, 6.675], [7.55, 8.425, 9.3, 10.175]],
    False: [
        [0.0, 0.0, 0.8833333, 2.15],
        [3.4166665, 4.6833339, 5.9500003, 7.2166662],
        [8.4833326, 9.75, 10.829585, 5.5916657],
    ],
}


@modes
def test_grid_sample_with_and_without_aligned_corners(mode):
    x = np.arange(12, dtype="float32").reshape(1, 1, 3, 4)
    grid = (np.arange(24, dtype="float32").reshape(1, 3, 4, 2) / 12 - 1) * np.array([1.1, 0.9], "float32")
    for align in (True, False):
        got = run(mode, lambda a, g: F.grid_sample(a, g, align_corners=align), x, grid)[0]  # noqa: B023
        np.testing.assert_allclose(got[0, 0], GRID_SAMPLE[align], rtol=1e-5, atol=1e-6)
    with pytest.raises(NotImplementedError, match="padding_mode"):
        run(mode, lambda a, g: F.grid_sample(a, g, padding_mode="border"), x, grid)


def _np_pixel_shuffle(x, r):
    n, c, h, w = x.shape
    return x.reshape(n, c // r**2, r, r, h, w).transpose(0, 1, 4, 2, 5, 3).reshape(n, c // r**2, h * r, w * r)


@modes
def test_pixel_shuffle_in_both_layouts(mode):
    x = RNG.rand(2, 8, 3, 2).astype("float32")
    got = run(mode, lambda t: F.pixel_shuffle(t, 2), x)[0]
    np.testing.assert_array_equal(got, _np_pixel_shuffle(x, 2))
    hwc = RNG.rand(2, 3, 2, 8).astype("float32")
    got = run(mode, lambda t: nn.PixelShuffle(2, data_format="NHWC")(t), hwc)[0]
    np.testing.assert_array_equal(got, _np_pixel_shuffle(hwc.transpose(0, 3, 1, 2), 2).transpose(0, 2, 3, 1))


# -- inputs and extensions --------------------------------------------------------------------------


@modes
def test_one_hot_embedding_label_smooth_and_diag_embed(mode):
    ids = np.array([[1, 3], [0, 2]], "int64")
    table = RNG.rand(4, 3).astype("float32")
    got = run(mode, lambda i, w: (F.one_hot(i, 4), F.embedding(i, w, padding_idx=-2)), ids, table)
    np.testing.assert_array_equal(got[0], np.eye(4, dtype="float32")[ids])
    want = table[ids]
    want[ids == 2] = 0.0
    np.testing.assert_array_equal(got[1], want)
    labels = np.eye(3, dtype="float32")[[0, 2]]
    prior = np.array([[0.2, 0.3, 0.5]], "float32")
    got = run(mode, lambda lab, pr: (F.label_smooth(lab), F.label_smooth(lab, pr, epsilon=0.2)), labels, prior)
    np.testing.assert_allclose(got[0], 0.9 * labels + 0.1 / 3, rtol=1e-6)
    np.testing.assert_allclose(got[1], 0.8 * labels + 0.2 * prior, rtol=1e-6)
    vecs = RNG.rand(2, 3).astype("float32")
    got = run(mode, lambda v: F.diag_embed(v, offset=1), vecs)[0]
    np.testing.assert_array_equal(got, np.stack([np.diag(v, 1) for v in vecs]))


def test_embedding_layer_zeroes_its_padding_row_in_dynamic_mode():
    layer = nn.Embedding(5, 3, padding_idx=-1)
    np.testing.assert_array_equal(layer.weight.numpy()[4], np.zeros(3, "float32"))
    out = layer(paddle.to_tensor(np.array([4, 0], "int64")))
    np.testing.assert_array_equal(out.numpy()[0], np.zeros(3, "float32"))


def test_unfold_gather_tree_and_temporal_shift_are_the_fluid_layers():
    x = paddle.to_tensor(np.arange(16, dtype="float32").reshape(1, 1, 4, 4))
    assert F.unfold(x, [2, 2], strides=2).shape == [1, 4, 4]
    assert F.temporal_shift(paddle.to_tensor(np.ones((4, 4, 2, 2), "float32")), seg_num=2).shape == [4, 4, 2, 2]
    ids = paddle.to_tensor(np.array([[[2, 2]], [[6, 1]]], "int64"))
    parents = paddle.to_tensor(np.array([[[0, 0]], [[1, 0]]], "int64"))
    np.testing.assert_array_equal(F.gather_tree(ids, parents).numpy()[:, 0], [[2, 2], [6, 1]])


# -- initializers -----------------------------------------------------------------------------------


@modes
def test_assign_initializer_writes_an_array_a_list_or_a_tensor(mode):
    value = np.arange(6, dtype="float32").reshape(2, 3)

    def build(x):
        init = nn.initializer.Assign(value if mode == "static" else paddle.to_tensor(value))
        first = nn.Linear(2, 3, weight_attr=paddle.ParamAttr(initializer=init))
        second = nn.Linear(2, 3, weight_attr=paddle.ParamAttr(initializer=nn.initializer.Assign(value.tolist())))
        return first(x), second.weight

    out, weight = run(mode, build, np.ones((1, 2), "float32"))
    np.testing.assert_array_equal(out, np.ones((1, 2)) @ value)
    np.testing.assert_array_equal(weight, value)
    with pytest.raises(TypeError, match="Assign"):
        nn.initializer.Assign(3.0)


def test_initializer_submodules_are_paddles():
    init = nn.initializer
    assert init.constant.Constant is init.Constant and init.normal.TruncatedNormal is init.TruncatedNormal
    assert init.uniform.Uniform is init.Uniform and init.xavier.XavierUniform is init.XavierUniform
    assert init.kaiming.KaimingNormal is init.KaimingNormal and init.assign.Assign is init.Assign
    conv = nn.Conv2D(2, 2, 4, weight_attr=paddle.ParamAttr(initializer=init.Bilinear()))
    # printed by Paddle (its true-division row index makes the quirky rows)
    want = [[0.0625, 0.28125, 0.375, 0.15625], [0.1875, 0.65625, 0.75, 0.21875]]
    np.testing.assert_allclose(conv.weight.numpy()[0, 0, :2], want, rtol=1e-6)


# -- transformer ------------------------------------------------------------------------------------


def _np_softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _np_linear(sd, prefix, x):
    return x @ sd[f"{prefix}.weight"] + sd[f"{prefix}.bias"]


def _np_norm(sd, prefix, x):
    centred = x - x.mean(-1, keepdims=True)
    return (
        centred / np.sqrt((centred**2).mean(-1, keepdims=True) + 1e-5) * sd[f"{prefix}.weight"] + sd[f"{prefix}.bias"]
    )


def _np_attention(sd, prefix, q, kv, heads, mask=None):
    batch, _, width = q.shape

    def split(t):
        return t.reshape(batch, -1, heads, width // heads).transpose(0, 2, 1, 3)

    query, key, value = (split(_np_linear(sd, f"{prefix}.{p}_proj", t)) for p, t in (("q", q), ("k", kv), ("v", kv)))
    product = query @ key.transpose(0, 1, 3, 2) * (width // heads) ** -0.5 + (0 if mask is None else mask)
    out = (_np_softmax(product) @ value).transpose(0, 2, 1, 3).reshape(batch, -1, width)
    return _np_linear(sd, f"{prefix}.out_proj", out)


def _np_feed_forward(sd, prefix, x):
    return _np_linear(sd, f"{prefix}.linear2", np.maximum(_np_linear(sd, f"{prefix}.linear1", x), 0))


def _np_transformer(sd, src, tgt, heads, tgt_mask):
    """Paddle 2.0's post-norm Transformer of one encoder and one decoder layer, in NumPy."""
    enc = "encoder.layers.0"
    x = _np_norm(sd, f"{enc}.norm1", src + _np_attention(sd, f"{enc}.self_attn", src, src, heads))
    x = _np_norm(sd, f"{enc}.norm2", x + _np_feed_forward(sd, enc, x))
    memory = _np_norm(sd, "encoder.norm", x)
    dec = "decoder.layers.0"
    y = _np_norm(sd, f"{dec}.norm1", tgt + _np_attention(sd, f"{dec}.self_attn", tgt, tgt, heads, tgt_mask))
    y = _np_norm(sd, f"{dec}.norm2", y + _np_attention(sd, f"{dec}.cross_attn", y, memory, heads))
    y = _np_norm(sd, f"{dec}.norm3", y + _np_feed_forward(sd, dec, y))
    return _np_norm(sd, "decoder.norm", y)


# Paddle's Transformer(8, 2, 1, 1, 16).state_dict() keys, in order
TRANSFORMER_KEYS = (
    [
        f"encoder.layers.0.{p}.{w}"
        for p in (
            "self_attn.q_proj",
            "self_attn.k_proj",
            "self_attn.v_proj",
            "self_attn.out_proj",
            "linear1",
            "linear2",
            "norm1",
            "norm2",
        )
        for w in ("weight", "bias")
    ]
    + ["encoder.norm.weight", "encoder.norm.bias"]
    + [
        f"decoder.layers.0.{p}.{w}"
        for p in (
            *(f"{a}.{q}_proj" for a in ("self_attn", "cross_attn") for q in ("q", "k", "v", "out")),
            "linear1",
            "linear2",
            "norm1",
            "norm2",
            "norm3",
        )
        for w in ("weight", "bias")
    ]
    + ["decoder.norm.weight", "decoder.norm.bias"]
)


@modes
def test_transformer_matches_its_numpy_reimplementation(mode):
    src, tgt = RNG.rand(2, 3, 8).astype("float32"), RNG.rand(2, 4, 8).astype("float32")
    names = []

    def build(s, t):
        model = nn.Transformer(8, 2, 1, 1, 16, dropout=0.0)
        model.eval()
        state = model.state_dict()
        names.extend(state)
        out = model(s, t, tgt_mask=model.generate_square_subsequent_mask(4))
        return (out, *state.values())

    out, *values = run(mode, build, src, tgt)
    assert names == TRANSFORMER_KEYS
    sd = dict(zip(names, values))
    assert sd["decoder.layers.0.linear1.weight"].shape == (8, 16)
    mask = np.triu(np.full((4, 4), -np.inf, "float32"), 1)
    np.testing.assert_allclose(out, _np_transformer(sd, src, tgt, 2, mask), rtol=1e-4, atol=1e-5)


@modes
def test_multi_head_attention_returns_its_weights_and_takes_other_key_widths(mode):
    q, kv = RNG.rand(2, 3, 8).astype("float32"), RNG.rand(2, 5, 6).astype("float32")

    def build(a, b):
        attn = nn.MultiHeadAttention(8, 4, kdim=6, vdim=6, need_weights=True)
        out, weights = attn(a, b, b)
        return (out, weights, *attn.state_dict().values())

    out, weights, *values = run(mode, build, q, kv)
    sd = dict(
        zip([f"{p}_proj.{w}" for p in "qkv" for w in ("weight", "bias")] + ["out_proj.weight", "out_proj.bias"], values)
    )
    assert sd["k_proj.weight"].shape == (6, 8) and weights.shape == (2, 4, 3, 5)
    np.testing.assert_allclose(weights.sum(-1), np.ones((2, 4, 3)), rtol=1e-5)
    sd = {f"a.{k}": v for k, v in sd.items()}
    np.testing.assert_allclose(out, _np_attention(sd, "a", q, kv, 4), rtol=1e-4, atol=1e-5)


def test_decoder_with_caches_equals_decoding_the_whole_prefix_at_once():
    paddle.disable_static()
    layer = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, normalize_before=True)
    decoder = nn.TransformerDecoder(layer, 2)
    decoder.eval()
    memory = paddle.to_tensor(RNG.rand(2, 3, 8).astype("float32"))
    tgt = RNG.rand(2, 4, 8).astype("float32")
    mask = np.triu(np.full((4, 4), -1e9, "float32"), 1)
    whole = decoder(paddle.to_tensor(tgt), memory, tgt_mask=paddle.to_tensor(mask)).numpy()
    cache = decoder.gen_cache(memory)
    assert isinstance(cache[0][0], nn.MultiHeadAttention.Cache) and cache[0][0].k.shape == [2, 2, 0, 4]
    steps = []
    for i in range(4):
        out, cache = decoder(paddle.to_tensor(tgt[:, i : i + 1]), memory, cache=cache)
        steps.append(out.numpy())
    np.testing.assert_allclose(np.concatenate(steps, axis=1), whole, rtol=1e-4, atol=1e-5)
    assert decoder.layers[1].linear1.weight is not layer.linear1.weight
    zipped = decoder.gen_cache(memory, do_zip=True)
    assert len(zipped) == 2 and isinstance(zipped[1][0], nn.MultiHeadAttention.StaticCache)


def test_encoder_stacks_fresh_copies_and_refuses_indivisible_heads():
    paddle.disable_static()
    layer = nn.TransformerEncoderLayer(8, 2, 16, weight_attr=[None, None], bias_attr=False)
    encoder = nn.TransformerEncoder(layer, 3, nn.LayerNorm(8))
    assert len(encoder.layers) == 3 and encoder.layers[2].self_attn.q_proj.bias is None
    assert encoder(paddle.to_tensor(RNG.rand(2, 3, 8).astype("float32"))).shape == [2, 3, 8]
    with pytest.raises(ValueError, match="divisible"):
        nn.MultiHeadAttention(8, 3)


# -- weight_norm ------------------------------------------------------------------------------------


def test_weight_norm_splits_a_weight_into_norms_and_direction_and_trains_them():
    from fleetgraph.nn.utils import remove_weight_norm, weight_norm

    paddle.disable_static()
    conv = nn.Conv2D(2, 3, 3)
    w0 = conv.weight.numpy().copy()
    weight_norm(conv, dim=1)
    assert sorted(conv.state_dict()) == ["bias", "weight_g", "weight_v"]
    np.testing.assert_allclose(conv.weight_g.numpy(), np.sqrt((w0**2).sum(axis=(0, 2, 3)) + 1e-12), rtol=1e-6)
    np.testing.assert_allclose(conv.weight.numpy(), w0, rtol=1e-5, atol=1e-7)
    conv.weight_g.set_value(conv.weight_g.numpy() * 2)
    x = paddle.to_tensor(RNG.rand(1, 2, 4, 4).astype("float32"))
    out = conv(x)
    np.testing.assert_allclose(conv.weight.numpy(), 2 * w0, rtol=1e-5, atol=1e-7)
    paddle.mean(out).backward()
    assert conv.weight_g.grad is not None and conv.weight_v.grad is not None
    with pytest.raises(RuntimeError, match="two weight_norm"):
        weight_norm(conv, dim=1)
    remove_weight_norm(conv)
    assert sorted(conv.state_dict()) == ["bias", "weight"]
    np.testing.assert_allclose(conv.weight.numpy(), 2 * w0, rtol=1e-5, atol=1e-7)
    with pytest.raises(ValueError, match="not found"):
        remove_weight_norm(conv)
    whole = weight_norm(nn.Linear(3, 4), dim=None)
    assert whole.weight_g.shape == [1]
    np.testing.assert_allclose(whole.weight_g.numpy(), [np.linalg.norm(whole.weight_v.numpy())], rtol=1e-6)


@modes
def test_interpolate_area_is_adaptive_average_pooling_and_scales_may_differ_per_axis(mode):
    got = run(mode, lambda x: F.interpolate(x, size=[1, 2], mode="area"), IMG)[0]
    np.testing.assert_allclose(got, IMG.reshape(1, 2, 3, 2, 2).mean(axis=(2, 4)).reshape(1, 2, 1, 2), rtol=1e-6)
    got = run(mode, lambda x: F.interpolate(x, scale_factor=[2, 0.5]), IMG)[0]
    np.testing.assert_array_equal(got, IMG.repeat(2, axis=2)[:, :, :, ::2])


def test_pad_and_alpha_dropout_take_an_unknown_batch_size_in_a_program():
    paddle.enable_static()
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = paddle.static.data("x", [-1, 2, 3, 4], "float32")
        padded = F.pad(x, [1, 1, 1, 0], mode="circular")
        dropped = F.alpha_dropout(x, 0.3)
    exe = paddle.static.Executor()
    exe.run(startup)
    got = exe.run(main, feed={"x": np.tile(IMG, (5, 1, 1, 1))}, fetch_list=[padded, dropped])
    np.testing.assert_array_equal(got[0], np.pad(np.tile(IMG, (5, 1, 1, 1)), [(0, 0), (0, 0), (1, 0), (1, 1)], "wrap"))
    assert got[1].shape == (5, 2, 3, 4)
