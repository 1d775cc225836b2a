"""Cases for the ops of ops/rearrange.py, with the NumPy oracles of Paddle 1.8.5's unit tests
(test_space_to_depth_op, test_pixel_shuffle, test_shuffle_channel_op, test_temporal_shift_op,
test_unfold_op)."""

import numpy as np

from . import case, rand


def space_to_depth_ref(X, blocksize):
    """test_space_to_depth_op's helper: Paddle's element order, one element at a time."""
    batch, channel, height, width = X.shape
    channel_out = channel // (blocksize * blocksize)
    flat, out = X.reshape(-1), np.zeros(X.size, X.dtype)
    for b in range(batch):
        for k in range(channel):
            for j in range(height):
                for i in range(width):
                    in_index = i + width * (j + height * (k + channel * b))
                    offset = k // channel_out
                    width2 = i * blocksize + offset % blocksize
                    height2 = j * blocksize + offset // blocksize
                    out_index = width2 + width * blocksize * (
                        height2 + height * blocksize * (k % channel_out + channel_out * b)
                    )
                    out[out_index] = flat[in_index]
    return {"Out": out.reshape(batch, channel * blocksize**2, height // blocksize, width // blocksize)}


case("space_to_depth", {"X": rand(2, 8, 4, 6, seed=70)}, attrs={"blocksize": 2}, reference=space_to_depth_ref)
case(
    "space_to_depth",
    {"X": rand(1, 9, 3, 6, seed=71)},
    attrs={"blocksize": 3},
    name="blocksize_3",
    reference=space_to_depth_ref,
)


def pixel_shuffle_ref(X, upscale_factor):
    """test_pixel_shuffle's oracle."""
    n, c, h, w = X.shape
    r = upscale_factor
    out = X.reshape(n, c // (r * r), r, r, h, w).transpose(0, 1, 4, 2, 5, 3)
    return {"Out": out.reshape(n, c // (r * r), h * r, w * r)}


case("pixel_shuffle", {"X": rand(2, 9, 4, 3, seed=72)}, attrs={"upscale_factor": 3}, reference=pixel_shuffle_ref)


def shuffle_channel_ref(X, group):
    """test_shuffle_channel_op's oracle."""
    n, c, h, w = X.shape
    return {"Out": X.reshape(-1, group, c // group, h, w).transpose(0, 2, 1, 3, 4).reshape(-1, c, h, w)}


case("shuffle_channel", {"X": rand(2, 12, 3, 2, seed=73)}, attrs={"group": 4}, reference=shuffle_channel_ref)


def temporal_shift_ref(X, seg_num, shift_ratio):
    """test_temporal_shift_op's temporal_shift."""
    shape = X.shape
    pad_x = np.pad(X.reshape((-1, seg_num, *shape[1:])), ((0, 0), (1, 1), (0, 0), (0, 0), (0, 0)), "constant")
    c1, c2 = int(shape[1] * shift_ratio), int(shape[1] * 2 * shift_ratio)
    slices = [pad_x[:, :seg_num, :c1], pad_x[:, 2 : seg_num + 2, c1:c2], pad_x[:, 1 : seg_num + 1, c2:]]
    return {"Out": np.concatenate(slices, axis=2).reshape(shape)}


case(
    "temporal_shift",
    {"X": rand(6, 4, 3, 3, seed=74)},
    attrs={"seg_num": 3, "shift_ratio": 0.25},
    reference=temporal_shift_ref,
)
case(
    "temporal_shift",
    {"X": rand(4, 9, 2, 2, seed=75)},
    attrs={"seg_num": 2, "shift_ratio": 0.3},
    name="ratio_0_3",
    reference=temporal_shift_ref,
)


def unfold_ref(X, kernel_sizes, strides, paddings, dilations):
    """test_unfold_op's calc_unfold: each output entry from its input pixel, zero in the padding."""
    n, c, h, w = X.shape
    kh, kw = kernel_sizes
    out_h = (h + paddings[0] + paddings[2] - (dilations[0] * (kh - 1) + 1)) // strides[0] + 1
    out_w = (w + paddings[1] + paddings[3] - (dilations[1] * (kw - 1) + 1)) // strides[1] + 1
    out = np.zeros((n, c * kh * kw, out_h * out_w), X.dtype)
    for j in range(c * kh * kw):
        for k in range(out_h * out_w):
            h_in = (j // kw) % kh * dilations[0] + k // out_w * strides[0] - paddings[0]
            w_in = j % kw * dilations[1] + k % out_w * strides[1] - paddings[1]
            if 0 <= h_in < h and 0 <= w_in < w:
                out[:, j, k] = X[:, j // (kh * kw), h_in, w_in]
    return {"Y": out}


case(
    "unfold",
    {"X": rand(2, 3, 6, 6, seed=76)},
    attrs={"kernel_sizes": [3, 3], "strides": [1, 1], "paddings": [1, 1, 1, 1], "dilations": [1, 1]},
    outputs={"Y": 1},
    reference=unfold_ref,
)
case(
    "unfold",
    {"X": rand(1, 2, 7, 6, seed=77)},
    attrs={"kernel_sizes": [3, 2], "strides": [2, 1], "paddings": [1, 0, 2, 1], "dilations": [1, 2]},
    outputs={"Y": 1},
    name="strided_dilated_uneven_padding",
    reference=unfold_ref,
)
