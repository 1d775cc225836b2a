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
