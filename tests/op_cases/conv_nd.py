"""Registry cases for the ops of ops/conv_nd.py: conv3d, the transposed convolutions, pool3d and
max pooling with indices. The references are loops over output (or input) positions, after
Paddle 1.8's unit tests (test_conv3d_op.py, test_conv2d_transpose_op.py, test_pool3d_op.py,
test_pool_max_op.py)."""

import itertools

import numpy as np

from . import case, rand

_conv_outputs = {"Output": 1}


def naive_conv(x, w, stride, pads, dil, groups=1):
    """Direct convolution over any number of spatial axes; pads are [before, after] per axis."""
    nd = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pads[2 * i], pads[2 * i + 1]) for i in range(nd)])
    k = w.shape[2:]
    out_sizes = [(xp.shape[2 + i] - dil[i] * (k[i] - 1) - 1) // stride[i] + 1 for i in range(nd)]
    m, cg = w.shape[:2]
    out = np.zeros((x.shape[0], m) + tuple(out_sizes))
    for o in range(m):
        g = o // (m // groups)
        for pos in itertools.product(*(range(n) for n in out_sizes)):
            sl = tuple(
                slice(pos[i] * stride[i], pos[i] * stride[i] + dil[i] * (k[i] - 1) + 1, dil[i]) for i in range(nd)
            )
            patch = xp[(slice(None), slice(g * cg, (g + 1) * cg)) + sl]
            out[(slice(None), o) + pos] = (patch * w[o]).reshape(x.shape[0], -1).sum(axis=1)
    return out


def naive_conv_transpose(x, w, stride, pads, dil, groups=1, output_size=None):
    """Paddle's conv2dtranspose_forward_naive over any number of spatial axes: each input position
    scatters its filter-weighted values into the output, which is then cropped by the paddings."""
    nd = x.ndim - 2
    cin, fout = w.shape[:2]
    k, sub = w.shape[2:], cin // groups
    block = [dil[i] * (k[i] - 1) + 1 for i in range(nd)]
    full = [(x.shape[2 + i] - 1) * stride[i] + block[i] for i in range(nd)]
    if output_size:
        full = [max(full[i], output_size[i] + pads[2 * i] + pads[2 * i + 1]) for i in range(nd)]
    out = np.zeros((x.shape[0], fout * groups) + tuple(full))
    for pos in itertools.product(*(range(n) for n in x.shape[2:])):
        sl = tuple(slice(pos[i] * stride[i], pos[i] * stride[i] + block[i], dil[i]) for i in range(nd))
        for g in range(groups):
            v = x[(slice(None), slice(g * sub, (g + 1) * sub)) + pos]  # [N, sub]
            contrib = np.einsum("nc,co...->no...", v, w[g * sub : (g + 1) * sub])
            out[(slice(None), slice(g * fout, (g + 1) * fout)) + sl] += contrib
    crop = [slice(pads[2 * i], full[i] - pads[2 * i + 1]) for i in range(nd)]
    out = out[(slice(None), slice(None)) + tuple(crop)]
    if output_size:
        out = out[(slice(None), slice(None)) + tuple(slice(0, n) for n in output_size)]
    return out


def naive_pool(x, k, s, pads, kind="max", exclusive=True):
    """Window loops as Paddle's CPU pooling over any number of spatial axes."""
    nd = x.ndim - 2
    sizes = x.shape[2:]
    out_sizes = [(sizes[i] + pads[2 * i] + pads[2 * i + 1] - k[i]) // s[i] + 1 for i in range(nd)]
    out = np.zeros(x.shape[:2] + tuple(out_sizes))
    for pos in itertools.product(*(range(n) for n in out_sizes)):
        lo = [pos[i] * s[i] - pads[2 * i] for i in range(nd)]
        hi = [min(lo[i] + k[i], sizes[i] + pads[2 * i + 1]) for i in range(nd)]
        win = x[(Ellipsis,) + tuple(slice(max(lo[i], 0), min(hi[i], sizes[i])) for i in range(nd))]
        if kind == "max":
            out[(Ellipsis,) + pos] = win.max(axis=tuple(range(2, 2 + nd)))
        else:
            count = np.prod(win.shape[2:]) if exclusive else np.prod([hi[i] - lo[i] for i in range(nd)])
            out[(Ellipsis,) + pos] = win.sum(axis=tuple(range(2, 2 + nd))) / count
    return out


def naive_adaptive_pool(x, out_sizes, kind):
    """Paddle's adaptive pooling: output cell i of an axis of n covers [floor(i n / o), ceil((i + 1) n / o))."""
    nd = x.ndim - 2
    sizes = x.shape[2:]
    out = np.zeros(x.shape[:2] + tuple(out_sizes))
    for pos in itertools.product(*(range(n) for n in out_sizes)):
        sl = tuple(
            slice(int(np.floor(pos[i] * sizes[i] / out_sizes[i])), int(np.ceil((pos[i] + 1) * sizes[i] / out_sizes[i])))
            for i in range(nd)
        )
        win = x[(Ellipsis,) + sl]
        out[(Ellipsis,) + pos] = (
            win.max(axis=tuple(range(2, 2 + nd))) if kind == "max" else win.mean(axis=tuple(range(2, 2 + nd)))
        )
    return out


def naive_max_pool_with_index(x, k, s, p, adaptive=False):
    """Paddle's max_pool{2,3}D_forward_naive: the maximum of each window (clipped to the input, or
    the adaptive floor/ceil split) and its row-major index within the spatial plane."""
    nd = x.ndim - 2
    sizes = x.shape[2:]
    if adaptive:
        out_sizes = list(k)
    else:
        out_sizes = [(sizes[i] - k[i] + 2 * p[i]) // s[i] + 1 for i in range(nd)]
    out = np.zeros(x.shape[:2] + tuple(out_sizes))
    mask = np.zeros(x.shape[:2] + tuple(out_sizes), dtype=np.int32)
    for pos in itertools.product(*(range(n) for n in out_sizes)):
        if adaptive:
            bounds = [
                (int(np.floor(pos[i] * sizes[i] / k[i])), int(np.ceil((pos[i] + 1) * sizes[i] / k[i])))
                for i in range(nd)
            ]
        else:
            bounds = [(max(pos[i] * s[i] - p[i], 0), min(pos[i] * s[i] - p[i] + k[i], sizes[i])) for i in range(nd)]
        for b in range(x.shape[0]):
            for c in range(x.shape[1]):
                win = x[(b, c) + tuple(slice(*bd) for bd in bounds)]
                arg = np.unravel_index(np.argmax(win), win.shape)
                out[(b, c) + pos] = win[arg]
                mask[(b, c) + pos] = np.ravel_multi_index(tuple(bd[0] + a for bd, a in zip(bounds, arg)), sizes)
    return out, mask


# -- conv3d ---------------------------------------------------------------------------------------

case(
    "conv3d",
    {"Input": rand(2, 2, 4, 4, 3), "Filter": rand(3, 2, 2, 2, 2, seed=1)},
    outputs=_conv_outputs,
    reference=lambda Input, Filter, **a: {"Output": naive_conv(Input, Filter, [1] * 3, [0] * 6, [1] * 3)},
)
case(
    "conv3d",
    {"Input": rand(1, 4, 5, 4, 5), "Filter": rand(2, 2, 3, 2, 2, seed=2)},
    outputs=_conv_outputs,
    attrs={"strides": [2, 1, 2], "paddings": [1, 0, 1], "groups": 2, "dilations": [1, 2, 1]},
    name="stride_pad_groups_dilation",
    reference=lambda Input, Filter, **a: {
        "Output": naive_conv(Input, Filter, [2, 1, 2], [1, 1, 0, 0, 1, 1], [1, 2, 1], groups=2)
    },
)
case(
    "conv3d",
    {"Input": rand(1, 3, 3, 4, 2), "Filter": rand(2, 2, 2, 2, 2, seed=3)},
    outputs=_conv_outputs,
    attrs={"data_format": "NDHWC", "padding_algorithm": "SAME", "strides": [2, 2, 1]},
    name="ndhwc_same",
    reference=lambda Input, Filter, **a: {
        "Output": naive_conv(
            Input.transpose(0, 4, 1, 2, 3), Filter, [2, 2, 1], [0, 1, 0, 1, 0, 1], [1, 1, 1]
        ).transpose(0, 2, 3, 4, 1)
    },
)

# -- transposed convolutions ----------------------------------------------------------------------

case(
    "conv2d_transpose",
    {"Input": rand(2, 3, 3, 4), "Filter": rand(3, 2, 3, 3, seed=4)},
    outputs=_conv_outputs,
    reference=lambda Input, Filter, **a: {"Output": naive_conv_transpose(Input, Filter, [1, 1], [0] * 4, [1, 1])},
)
case(
    "conv2d_transpose",
    {"Input": rand(1, 4, 3, 3), "Filter": rand(4, 3, 3, 2, seed=5)},
    outputs=_conv_outputs,
    attrs={"strides": [2, 2], "paddings": [1, 0, 0, 1], "groups": 2, "dilations": [2, 1]},
    name="stride_pads_groups_dilation",
    reference=lambda Input, Filter, **a: {
        "Output": naive_conv_transpose(Input, Filter, [2, 2], [1, 0, 0, 1], [2, 1], groups=2)
    },
)
case(
    "conv2d_transpose",
    {"Input": rand(1, 2, 3, 3), "Filter": rand(2, 2, 3, 3, seed=6)},
    outputs=_conv_outputs,
    attrs={"strides": [2, 2], "paddings": [1, 1], "output_size": [6, 6]},
    name="output_size",
    reference=lambda Input, Filter, **a: {
        "Output": naive_conv_transpose(Input, Filter, [2, 2], [1, 1, 1, 1], [1, 1], output_size=[6, 6])
    },
)
case(
    "conv2d_transpose",
    {"Input": rand(1, 4, 5, 2), "Filter": rand(2, 3, 3, 3, seed=7)},
    outputs=_conv_outputs,
    attrs={"data_format": "NHWC", "padding_algorithm": "SAME", "strides": [2, 2]},
    name="nhwc_same",
    # SAME pads from the input's sizes 4 and 5 with stride 2, kernel 3: [0, 1] and [1, 1]
    reference=lambda Input, Filter, **a: {
        "Output": naive_conv_transpose(Input.transpose(0, 3, 1, 2), Filter, [2, 2], [0, 1, 1, 1], [1, 1]).transpose(
            0, 2, 3, 1
        )
    },
)
case(
    "conv2d_transpose",
    {"Input": rand(1, 2, 4, 4), "Filter": rand(2, 1, 3, 3, seed=8)},
    outputs=_conv_outputs,
    attrs={"padding_algorithm": "VALID", "paddings": [2, 2], "strides": [1, 2]},
    name="valid",
    reference=lambda Input, Filter, **a: {"Output": naive_conv_transpose(Input, Filter, [1, 2], [0] * 4, [1, 1])},
)
case(
    "depthwise_conv2d_transpose",
    {"Input": rand(1, 3, 3, 3), "Filter": rand(3, 1, 2, 2, seed=9)},
    outputs=_conv_outputs,
    attrs={"groups": 3, "strides": [2, 2]},
    reference=lambda Input, Filter, **a: {
        "Output": naive_conv_transpose(Input, Filter, [2, 2], [0] * 4, [1, 1], groups=3)
    },
)
case(
    "conv3d_transpose",
    {"Input": rand(1, 2, 2, 3, 2), "Filter": rand(2, 2, 2, 2, 3, seed=10)},
    outputs=_conv_outputs,
    attrs={"strides": [2, 1, 1], "paddings": [0, 1, 1], "dilations": [1, 1, 2]},
    reference=lambda Input, Filter, **a: {
        "Output": naive_conv_transpose(Input, Filter, [2, 1, 1], [0, 0, 1, 1, 1, 1], [1, 1, 2])
    },
)
case(
    "conv3d_transpose",
    {"Input": rand(1, 2, 3, 2, 4), "Filter": rand(4, 1, 2, 2, 2, seed=11)},
    outputs=_conv_outputs,
    attrs={"groups": 2, "data_format": "NDHWC", "strides": [2, 1, 1], "output_size": [5, 4, 3]},
    name="ndhwc_groups_output_size",
    reference=lambda Input, Filter, **a: {
        "Output": naive_conv_transpose(
            Input.transpose(0, 4, 1, 2, 3), Filter, [2, 1, 1], [0] * 6, [1, 1, 1], groups=2, output_size=[5, 4, 3]
        ).transpose(0, 2, 3, 4, 1)
    },
)

# -- pool3d ---------------------------------------------------------------------------------------

case(
    "pool3d",
    {"X": rand(2, 2, 4, 4, 4)},
    attrs={"ksize": [2, 2, 2], "strides": [2, 2, 2]},
    name="max",
    reference=lambda X, **a: {"Out": naive_pool(X, [2] * 3, [2] * 3, [0] * 6)},
)
case(
    "pool3d",
    {"X": rand(1, 2, 5, 4, 5)},
    attrs={"pooling_type": "avg", "ksize": [3, 2, 3], "strides": [2, 1, 2], "paddings": [1, 0, 1]},
    name="avg_exclusive",
    reference=lambda X, **a: {"Out": naive_pool(X, [3, 2, 3], [2, 1, 2], [1, 1, 0, 0, 1, 1], "avg")},
)
case(
    "pool3d",
    {"X": rand(1, 2, 5, 4, 5)},
    attrs={"pooling_type": "avg", "ksize": [3, 2, 3], "strides": [2, 1, 2], "paddings": [1, 0, 1], "exclusive": False},
    name="avg_inclusive",
    reference=lambda X, **a: {"Out": naive_pool(X, [3, 2, 3], [2, 1, 2], [1, 1, 0, 0, 1, 1], "avg", exclusive=False)},
)
case(
    "pool3d",
    {"X": rand(1, 3, 4, 3, 2)},
    attrs={"ksize": [2, 2, 2], "paddings": [1, 0, 1, 0, 0, 1], "data_format": "NDHWC"},
    name="max_ndhwc_asymmetric",
    reference=lambda X, **a: {
        "Out": naive_pool(X.transpose(0, 4, 1, 2, 3), [2] * 3, [1] * 3, [1, 0, 1, 0, 0, 1]).transpose(0, 2, 3, 4, 1)
    },
)
case(
    "pool3d",
    {"X": rand(1, 2, 3, 5, 4)},
    attrs={"pooling_type": "avg", "ksize": [2, 3, 3], "adaptive": True},
    name="adaptive_avg",
    reference=lambda X, **a: {"Out": naive_adaptive_pool(X, [2, 3, 3], "avg")},
)
case(
    "pool3d",
    {"X": rand(1, 2, 3, 5, 4)},
    attrs={"ksize": [2, 2, 3], "adaptive": True},
    name="adaptive_max",
    reference=lambda X, **a: {"Out": naive_adaptive_pool(X, [2, 2, 3], "max")},
)

# -- max pooling with indices ---------------------------------------------------------------------


def _with_index_ref(X, ksize, strides, paddings, adaptive, global_pooling, **a):
    if global_pooling:
        ksize, paddings = list(X.shape[2:]), [0] * (X.ndim - 2)
    out, mask = naive_max_pool_with_index(X, ksize, strides, paddings, adaptive)
    return {"Out": out, "Mask": mask}


_with_index = {"Out": 1, "Mask": 1}
for _nd, _x, _attrs, _name in (
    (2, rand(2, 3, 5, 5), {"ksize": [3, 3], "strides": [2, 2], "paddings": [1, 1]}, "padded"),
    (2, rand(1, 2, 5, 7), {"ksize": [2, 3], "adaptive": True}, "adaptive"),
    (2, rand(1, 2, 3, 4), {"ksize": [1, 1], "global_pooling": True}, "global"),
    (3, rand(1, 2, 4, 5, 4), {"ksize": [2, 3, 2], "strides": [2, 1, 2], "paddings": [0, 1, 1]}, "padded"),
    (3, rand(1, 2, 3, 5, 4), {"ksize": [2, 2, 3], "adaptive": True}, "adaptive"),
):
    case(
        f"max_pool{_nd}d_with_index",
        {"X": _x},
        attrs=_attrs,
        outputs=_with_index,
        loss_outputs=("Out",),
        name=_name,
        reference=_with_index_ref,
    )

case(
    "depthwise_conv2d",
    {"Input": rand(1, 3, 5, 4), "Filter": rand(6, 1, 3, 2, seed=12)},
    outputs=_conv_outputs,
    attrs={"groups": 3, "paddings": [1, 0]},
    reference=lambda Input, Filter, **a: {"Output": naive_conv(Input, Filter, [1, 1], [1, 1, 0, 0], [1, 1], groups=3)},
)
