"""Registry cases for the ops of ops/resize.py. The references are the NumPy functions of Paddle
1.8's unit tests (test_bilinear_interp_op.py, test_nearest_interp_op.py, test_trilinear_interp_op.py,
test_bicubic_interp_op.py, test_affine_grid_op.py, test_grid_sampler_op.py), written per output
position as there."""

import itertools

import numpy as np

from . import case, rand


def _ratio(n_in, n_out, align_corners):
    if n_out <= 1:
        return 0.0
    return (n_in - 1.0) / (n_out - 1.0) if align_corners else 1.0 * n_in / n_out


def _linear_tap(i, ratio, n_in, align_corners, align_mode):
    """bilinear_interp_np's (index, neighbour step, lambda) along one axis."""
    half = align_mode == 0 and not align_corners
    lo = max(0, int(ratio * (i + 0.5) - 0.5) if half else int(ratio * i))
    step = 1 if lo < n_in - 1 else 0
    lam = (max(ratio * (i + 0.5) - 0.5, 0) if half else ratio * i) - lo
    return lo, step, lam


def linear_interp_np(x, out_sizes, align_corners=True, align_mode=1):
    """bilinear_interp_np / trilinear_interp_np over [N, C, *sizes]: each output mixes the 2^nd
    neighbours with the products of the per-axis lambdas."""
    sizes = x.shape[2:]
    ratios = [_ratio(n, o, align_corners) for n, o in zip(sizes, out_sizes)]
    out = np.zeros(x.shape[:2] + tuple(out_sizes))
    for pos in itertools.product(*(range(o) for o in out_sizes)):
        taps = [_linear_tap(p, r, n, align_corners, align_mode) for p, r, n in zip(pos, ratios, sizes)]
        for corner in itertools.product((0, 1), repeat=len(sizes)):
            weight = np.prod([lam if c else 1.0 - lam for (_, _, lam), c in zip(taps, corner)])
            index = tuple(lo + step * c for (lo, step, _), c in zip(taps, corner))
            out[(Ellipsis,) + pos] += weight * x[(Ellipsis,) + index]
    return out


def nearest_neighbor_interp_np(x, out_h, out_w, align_corners=True):
    n_in_h, n_in_w = x.shape[2:]
    rh, rw = _ratio(n_in_h, out_h, align_corners), _ratio(n_in_w, out_w, align_corners)
    out = np.zeros(x.shape[:2] + (out_h, out_w))
    for i in range(out_h):
        for j in range(out_w):
            if align_corners:
                out[:, :, i, j] = x[:, :, int(rh * i + 0.5), int(rw * j + 0.5)]
            else:
                out[:, :, i, j] = x[:, :, int(rh * i), int(rw * j)]
    return out


def _cubic(x0, x1, x2, x3, t):
    a = -0.75

    def c1(v):
        return ((a + 2) * v - (a + 3)) * v * v + 1

    def c2(v):
        return ((a * v - 5 * a) * v + 8 * a) * v - 4 * a

    return x0 * c2(t + 1.0) + x1 * c1(t) + x2 * c1(1.0 - t) + x3 * c2(2.0 - t)


def bicubic_interp_np(x, out_h, out_w, align_corners=True):
    in_h, in_w = x.shape[2:]
    rh, rw = _ratio(in_h, out_h, align_corners), _ratio(in_w, out_w, align_corners)
    out = np.zeros(x.shape[:2] + (out_h, out_w))

    def at(y, xx):
        return x[:, :, int(max(min(y, in_h - 1), 0)), int(max(min(xx, in_w - 1), 0))]

    for k in range(out_h):
        h = rh * k if align_corners else rh * (k + 0.5) - 0.5
        y0 = np.floor(h)
        for m in range(out_w):
            w = rw * m if align_corners else rw * (m + 0.5) - 0.5
            x0 = np.floor(w)
            rows = [_cubic(*(at(y0 - 1 + i, x0 - 1 + j) for j in range(4)), w - x0) for i in range(4)]
            out[:, :, k, m] = _cubic(*rows, h - y0)
    return out


def _interp_case(op, x, attrs, reference, name, **inputs):
    case(
        op,
        {"X": x, **inputs},
        attrs={"interp_method": op[: -len("_interp")], **attrs},
        name=name,
        no_grad=tuple(inputs),
        reference=lambda X, **a: {"Out": reference(X)},
        atol=1e-5,
    )


_x4, _x5 = rand(2, 3, 4, 5), rand(1, 2, 3, 4, 2)
_NHWC, _NDHWC = (0, 2, 3, 1), (0, 2, 3, 4, 1)
_NCHW, _NCDHW = (0, 3, 1, 2), (0, 4, 1, 2, 3)
_half = {"align_corners": False, "align_mode": 0}
for _op, _x, _attrs, _ref, _name, _inputs in (
    ("bilinear_interp", _x4, {"out_h": 7, "out_w": 3}, lambda X: linear_interp_np(X, [7, 3]), "align_corners", {}),
    (
        "bilinear_interp",
        _x4,
        {"out_h": 6, "out_w": 9, **_half},
        lambda X: linear_interp_np(X, [6, 9], False, 0),
        "half_pixel",
        {},
    ),
    (
        "bilinear_interp",
        _x4,
        {"out_h": 3, "out_w": 8, "align_corners": False},
        lambda X: linear_interp_np(X, [3, 8], False, 1),
        "asymmetric",
        {},
    ),
    (
        "bilinear_interp",
        _x4.transpose(_NHWC),
        {"scale": 1.5, "data_layout": "NHWC", **_half},
        lambda X: linear_interp_np(X.transpose(_NCHW), [6, 7], False, 0).transpose(_NHWC),
        "nhwc_scale",
        {},
    ),
    (
        "bilinear_interp",
        _x4,
        {"out_h": 2, "out_w": 2},
        lambda X: linear_interp_np(X, [5, 6]),
        "out_size_input",
        {"OutSize": np.array([5, 6], dtype=np.int32)},
    ),
    (
        "bilinear_interp",
        _x4,
        {"out_h": -1, "out_w": 7},
        lambda X: linear_interp_np(X, [3, 7]),
        "size_tensor",
        {"SizeTensor": [np.array([3], dtype=np.int32), np.array([7], dtype=np.int32)]},
    ),
    (
        "nearest_interp",
        _x4,
        {"out_h": 7, "out_w": 3},
        lambda X: nearest_neighbor_interp_np(X, 7, 3),
        "align_corners",
        {},
    ),
    (
        "nearest_interp",
        _x4,
        {"out_h": 2, "out_w": 2, "align_corners": False},
        lambda X: nearest_neighbor_interp_np(X, 6, 8, False),
        "scale_input",
        {"Scale": np.array([1.7], np.float32)},
    ),
    ("bicubic_interp", _x4, {"out_h": 7, "out_w": 3}, lambda X: bicubic_interp_np(X, 7, 3), "align_corners", {}),
    (
        "bicubic_interp",
        _x4,
        {"out_h": 6, "out_w": 9, "align_corners": False},
        lambda X: bicubic_interp_np(X, 6, 9, False),
        "half_pixel",
        {},
    ),
    (
        "trilinear_interp",
        _x5,
        {"out_d": 5, "out_h": 3, "out_w": 4},
        lambda X: linear_interp_np(X, [5, 3, 4]),
        "align_corners",
        {},
    ),
    (
        "trilinear_interp",
        _x5.transpose(_NDHWC),
        {"out_d": 4, "out_h": 6, "out_w": 3, "data_layout": "NHWC", **_half},
        lambda X: linear_interp_np(X.transpose(_NCDHW), [4, 6, 3], False, 0).transpose(_NDHWC),
        "ndhwc_half_pixel",
        {},
    ),
):
    _interp_case(_op, _x, _attrs, _ref, _name, **_inputs)


# -- affine_grid and grid_sampler ------------------------------------------------------------------


def affine_grid_np(theta, size):
    """test_affine_grid_op.py's AffineGrid."""
    n, _, h, w = size
    h_idx = np.repeat(np.linspace(-1, 1, h)[np.newaxis, :], w, axis=0).T[:, :, np.newaxis]
    w_idx = np.repeat(np.linspace(-1, 1, w)[np.newaxis, :], h, axis=0)[:, :, np.newaxis]
    grid = np.concatenate([w_idx, h_idx, np.ones([h, w, 1])], axis=2).reshape(h * w, 3)
    return np.stack([grid @ t.T for t in theta]).reshape(n, h, w, 2)


def grid_sampler_np(data, grid):
    """test_grid_sampler_op.py's GridSampler: bilinear over the 4 corners, zero outside."""
    n, c, h, w = data.shape
    x = 0.5 * ((grid[..., 0] + 1.0) * (w - 1))
    y = 0.5 * ((grid[..., 1] + 1.0) * (h - 1))
    x0, y0 = np.floor(x).astype(int), np.floor(y).astype(int)
    x1, y1 = x0 + 1, y0 + 1

    def value(xs, ys):
        out = np.zeros(data.shape)
        for i, j, k in itertools.product(range(n), range(h), range(w)):
            if 0 <= ys[i, j, k] <= h - 1 and 0 <= xs[i, j, k] <= w - 1:
                out[i, :, j, k] = data[i, :, ys[i, j, k], xs[i, j, k]]
        return out

    def weight(a):
        return a.reshape(n, 1, h, w)

    return (
        weight((x1 - x) * (y1 - y)) * value(x0, y0)
        + weight((x1 - x) * (y - y0)) * value(x0, y1)
        + weight((x - x0) * (y1 - y)) * value(x1, y0)
        + weight((x - x0) * (y - y0)) * value(x1, y1)
    )


_theta = rand(3, 2, 3, seed=4)
case(
    "affine_grid",
    {"Theta": _theta},
    attrs={"output_shape": [3, 2, 5, 7]},
    outputs={"Output": 1},
    reference=lambda Theta, **a: {"Output": affine_grid_np(Theta, [3, 2, 5, 7])},
)
case(
    "affine_grid",
    {"Theta": _theta, "OutputShape": np.array([3, 2, 4, 3], dtype=np.int32)},
    outputs={"Output": 1},
    no_grad=("OutputShape",),
    name="output_shape_input",
    reference=lambda Theta, **a: {"Output": affine_grid_np(Theta, [3, 2, 4, 3])},
)
_xs = rand(2, 3, 5, 6, seed=5)
case(
    "grid_sampler",
    {"X": _xs, "Grid": affine_grid_np(rand(2, 2, 3, seed=6) * 0.7, [2, 3, 5, 6]) + rand(2, 5, 6, 2, seed=7) * 0.3},
    outputs={"Output": 1},
    reference=lambda X, Grid, **a: {"Output": grid_sampler_np(X, Grid)},
)
