"""Resizing and resampling images: the interpolate ops (bilinear_interp, nearest_interp,
trilinear_interp, bicubic_interp) and their gradients, affine_grid and grid_sampler.

Each interpolation is separable: along every spatial axis, an [out, in] matrix of Paddle's taps and
weights (interpolate_op.h: the float32 ratios, align_corners and align_mode, clamped neighbours)
contracts that axis; the gradient contracts with the transposed matrices."""

from __future__ import annotations

import numpy as np

from ..ir import InferContext, make_grad_op, register_op
from ..ir.errors import fmt_shape
from . import _xp
from ._window import from_channel_first, layout_shape, spatial, to_channel_first

_F = np.float32  # Paddle computes ratios and source positions in float


def _ratio(n_in: int, n_out: int, align_corners: bool) -> np.float32:
    if n_out <= 1:
        return _F(0.0)
    return _F(n_in - 1) / _F(n_out - 1) if align_corners else _F(n_in) / _F(n_out)


def _linear_taps(n_in, n_out, align_corners, align_mode):
    """Per output k: (lower, upper, weight of upper), as BilinearInterpolation computes them."""
    ratio, half = _ratio(n_in, n_out, align_corners), align_mode == 0 and not align_corners
    for k in range(n_out):
        if half:
            src = float(ratio) * (k + 0.5) - 0.5  # double, as C++ promotes ratio * (k + 0.5)
            lo = max(int(src), 0)
            frac = _F(max(src, 0.0)) - _F(lo)
        else:
            pos = ratio * _F(k)
            lo = max(int(pos), 0)
            frac = pos - _F(lo)
        yield lo, min(lo + 1, n_in - 1), frac


def _cubic_weights(t):
    """Paddle's get_cubic_upsample_coefficients (A = -0.75) for the taps at -1, 0, 1, 2."""
    a = -0.75

    def near(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1.0), near(t), near(1.0 - t), far(2.0 - t)]


def _axis_matrix(method: str, n_in: int, n_out: int, align_corners: bool, align_mode: int) -> np.ndarray:
    """The [n_out, n_in] matrix that resamples one axis."""
    m = np.zeros((n_out, n_in))
    if n_in == n_out:  # Paddle copies the input when no axis changes size; per axis it is the same
        return np.eye(n_in)
    ratio = _ratio(n_in, n_out, align_corners)
    if method == "nearest":
        for k in range(n_out):
            m[k, int(float(ratio * _F(k)) + 0.5) if align_corners else int(ratio * _F(k))] = 1.0
    elif method == "bicubic":
        for k in range(n_out):
            src = float(ratio) * k if align_corners else float(ratio) * (k + 0.5) - 0.5
            base = int(np.floor(src))
            for i, w in enumerate(_cubic_weights(src - base)):
                m[k, min(max(base - 1 + i, 0), n_in - 1)] += w
    else:
        for k, (lo, hi, frac) in enumerate(_linear_taps(n_in, n_out, align_corners, align_mode)):
            m[k, lo] += 1.0 - float(frac)
            m[k, hi] += float(frac)
    return m


def _resample(xp, x, mats):
    """x [N, C, *sizes] with spatial axis i contracted by mats[i]: each contraction moves the new
    axis last, so after all of them the axes are back in order."""
    for m in mats:
        x = xp.tensordot(x, xp.asarray(m, dtype=x.dtype), axes=([2], [1]))
    return x


def _size_of(value) -> list[int]:
    return [int(v) for v in _xp.host(value).reshape(-1)]


def _out_sizes(sizes, out_size, size_tensor, scale_t, *, out_d, out_h, out_w, scale, **_) -> list[int]:
    """Paddle's order: SizeTensor, else OutSize over scale (the Scale input over the attr) over out_*."""
    nd = len(sizes)
    if size_tensor:
        return [_size_of(t)[0] for t in size_tensor]
    out = [out_d, out_h, out_w][3 - nd :]
    factor = float(_xp.host(scale_t).reshape(-1)[0]) if scale_t is not None else scale
    if factor > 0:
        out = [int(n * factor) for n in sizes]
    if out_size is not None:
        out = _size_of(out_size)
    if min(out) <= 0:
        raise ValueError(f"output sizes {out}: expected each > 0 (out_shape or scale)")
    return out


def _interp(xp, x, out_size, size_tensor, scale_t, *, data_layout, interp_method, align_corners, align_mode, **attrs):
    x = to_channel_first(xp, x, data_layout)
    sizes = list(x.shape[2:])
    outs = _out_sizes(sizes, out_size, size_tensor, scale_t, **attrs)
    mats = [_axis_matrix(interp_method, n, o, align_corners, align_mode) for n, o in zip(sizes, outs)]
    return from_channel_first(xp, _resample(xp, x, mats), data_layout)


def _interp_grad(
    xp, x, out_size, size_tensor, scale_t, dout, *, data_layout, interp_method, align_corners, align_mode, **_
):
    x, dout = to_channel_first(xp, x, data_layout), to_channel_first(xp, dout, data_layout)
    mats = [_axis_matrix(interp_method, n, o, align_corners, align_mode).T for n, o in zip(x.shape[2:], dout.shape[2:])]
    return from_channel_first(xp, _resample(xp, dout, mats), data_layout)


def _interp_infer(method: str, nd: int):
    def infer(ctx: InferContext) -> None:
        x = ctx.input_var("X")
        ctx.check_rank("X", (nd + 2,))
        if ctx.attr("interp_method") != method:
            raise ctx.error(f"interp_method {ctx.attr('interp_method')!r}: expected {method!r}, as the op type")
        if ctx.attr("align_mode") not in (0, 1):
            raise ctx.error(f"align_mode {ctx.attr('align_mode')}: expected 0 or 1")
        layout = ctx.attr("data_layout")
        c, sizes = spatial(x.shape, layout)
        out = [ctx.attr("out_d"), ctx.attr("out_h"), ctx.attr("out_w")][3 - nd :]
        if ctx.has_input("SizeTensor"):
            if len(ctx.input_vars("SizeTensor")) != nd:
                raise ctx.error(f"SizeTensor: expected {nd} tensors, got {len(ctx.input_vars('SizeTensor'))}")
        elif ctx.has_input("Scale"):
            out = [-1] * nd
        elif ctx.attr("scale") > 0:
            out = [int(n * ctx.attr("scale")) if n > 0 else -1 for n in sizes]
            out = [d if d > 0 else -1 for d in out]
        if not ctx.has_input("SizeTensor") and not ctx.has_input("OutSize") and not ctx.has_input("Scale"):
            if any(d == 0 or d < -1 for d in out):
                raise ctx.error(f"output sizes {out} of X '{x.name}' {fmt_shape(x.shape)}: expected each > 0")
        ctx.set_output("Out", layout_shape(x.shape[0], c, out, layout), x.dtype)

    return infer


_INTERP_ATTRS = {
    "data_layout": "NCHW",
    "out_d": 0,
    "out_h": 0,
    "out_w": 0,
    "scale": 0.0,
    "interp_method": "bilinear",
    "align_corners": True,
    "align_mode": 1,
}
_INTERP_INPUTS = ("X", "OutSize?", "SizeTensor*?", "Scale?")
for _method, _nd in (("bilinear", 2), ("nearest", 2), ("bicubic", 2), ("trilinear", 3)):
    _attrs = dict(_INTERP_ATTRS, interp_method=_method)
    register_op(
        f"{_method}_interp",
        inputs=_INTERP_INPUTS,
        outputs=("Out",),
        attrs=_attrs,
        infer_shape=_interp_infer(_method, _nd),
        grad=make_grad_op(inputs=("X", "OutSize", "SizeTensor", "Scale", "Out@GRAD"), outputs=("X@GRAD",)),
        kernel=_interp,
    )
    register_op(
        f"{_method}_interp_grad",
        inputs=(*_INTERP_INPUTS, "Out@GRAD"),
        outputs=("X@GRAD",),
        attrs=_attrs,
        kernel=_interp_grad,
    )


# -- affine_grid ----------------------------------------------------------------------------------


def base_grid(h: int, w: int) -> np.ndarray:
    """[h * w, 3] rows (x, y, 1) over linspace(-1, 1) in W and H, as Paddle's GetIdxMap."""
    ys, xs = np.meshgrid(np.linspace(-1.0, 1.0, h), np.linspace(-1.0, 1.0, w), indexing="ij")
    return np.stack([xs.reshape(-1), ys.reshape(-1), np.ones(h * w)], axis=1)


def _grid_hw(output_shape_t, output_shape) -> tuple[int, int]:
    shape = _size_of(output_shape_t) if not output_shape else list(output_shape)
    return shape[2], shape[3]


def _affine_grid(xp, theta, output_shape_t, *, output_shape):
    h, w = _grid_hw(output_shape_t, output_shape)
    base = xp.asarray(base_grid(h, w), dtype=theta.dtype)
    return xp.reshape(xp.matmul(base, xp.matrix_transpose(theta)), (theta.shape[0], h, w, 2))


def _affine_grid_grad(xp, output_shape_t, dout, *, output_shape):
    n, h, w = dout.shape[:3]
    base = xp.asarray(base_grid(h, w), dtype=dout.dtype)
    return xp.matmul(xp.matrix_transpose(xp.reshape(dout, (n, h * w, 2))), base)


def _affine_grid_infer(ctx: InferContext) -> None:
    theta = ctx.input_var("Theta")
    if len(theta.shape) != 3 or tuple(theta.shape[1:]) != (2, 3):
        raise ctx.error(f"Theta '{theta.name}' {fmt_shape(theta.shape)}: expected [N, 2, 3]")
    shape = ctx.attr("output_shape")
    if shape and len(shape) != 4:
        raise ctx.error(f"output_shape {shape}: expected 4 values [N, C, H, W]")
    if not shape and not ctx.has_input("OutputShape"):
        raise ctx.error("expected output_shape or the OutputShape input")
    h, w = (shape[2], shape[3]) if shape else (-1, -1)
    ctx.set_output("Output", (theta.shape[0], h, w, 2), theta.dtype)


def _affine_grid_grad_infer(ctx: InferContext) -> None:
    dout = ctx.input_var("Output@GRAD")
    ctx.set_output("Theta@GRAD", (dout.shape[0], 2, 3), dout.dtype)


register_op(
    "affine_grid",
    inputs=("Theta", "OutputShape?"),
    outputs=("Output",),
    attrs={"output_shape": []},
    infer_shape=_affine_grid_infer,
    grad=make_grad_op(inputs=("OutputShape", "Output@GRAD"), outputs=("Theta@GRAD",)),
    kernel=_affine_grid,
)
register_op(
    "affine_grid_grad",
    inputs=("OutputShape?", "Output@GRAD"),
    outputs=("Theta@GRAD",),
    attrs={"output_shape": []},
    infer_shape=_affine_grid_grad_infer,
    kernel=_affine_grid_grad,
)


# -- grid_sampler ---------------------------------------------------------------------------------


def _corners(xp, x, grid):
    """Paddle 1.8's bilinear sampling (align_corners, zero padding): for each of the 4 corners around
    every grid point, its flat index in the [H * W] plane, its in-bounds mask, and its weight; plus
    the distances (west, east, north, south) the Grid gradient needs."""
    h, w = x.shape[2], x.shape[3]
    gx = (grid[..., 0] + 1.0) * _xp.scalar(xp, grid, 0.5 * (w - 1))
    gy = (grid[..., 1] + 1.0) * _xp.scalar(xp, grid, 0.5 * (h - 1))
    x_w, y_n = xp.floor(gx), xp.floor(gy)
    d_w, d_n = gx - x_w, gy - y_n
    d_e, d_s = 1.0 - d_w, 1.0 - d_n
    corners = []
    for cx, cy, weight in (
        (x_w, y_n, d_e * d_s),
        (x_w + 1, y_n, d_w * d_s),
        (x_w, y_n + 1, d_e * d_n),
        (x_w + 1, y_n + 1, d_w * d_n),
    ):
        inside = (cx >= 0) & (cx <= w - 1) & (cy >= 0) & (cy <= h - 1)
        flat = xp.clip(cy, 0, h - 1) * w + xp.clip(cx, 0, w - 1)
        corners.append((_xp.astype(xp, xp.round(flat), "int64"), _xp.mask(xp, inside, grid), weight))
    return corners, (d_w, d_e, d_n, d_s)


def _values(xp, x, flat, inside):
    """x [N, C, H, W] at each grid point's corner (zero outside): [N, C, H, W]."""
    n, c, h, w = x.shape
    planes = xp.reshape(x, (n, c, h * w))
    got = [xp.take(planes[i, ...], xp.reshape(flat[i, ...], (-1,)), axis=1) for i in range(n)]
    return xp.reshape(xp.stack(got), x.shape) * xp.reshape(inside, (n, 1, h, w))


def _grid_sampler(xp, x, grid):
    corners, _ = _corners(xp, x, grid)
    n, _, h, w = x.shape
    out = None
    for flat, inside, weight in corners:
        term = _values(xp, x, flat, inside) * xp.reshape(weight, (n, 1, h, w))
        out = term if out is None else out + term
    return out


def _grid_sampler_grad(xp, x, grid, dout, *, need):
    corners, (d_w, d_e, d_n, d_s) = _corners(xp, x, grid)
    n, c, h, w = x.shape
    dx = dgrid = None
    if "X@GRAD" in need:  # a scatter-add (np.add.at; CuPy's add.at on a GPU), which the standard lacks
        dx = xp.zeros((n, c, h * w), dtype=x.dtype)
        for flat, inside, weight in corners:
            g = xp.reshape(dout * xp.reshape(weight * inside, (n, 1, h, w)), (n, c, h * w))
            batch, channel = xp.reshape(xp.arange(n), (n, 1, 1)), xp.reshape(xp.arange(c), (1, c, 1))
            xp.add.at(dx, (batch, channel, xp.reshape(flat, (n, 1, h * w))), g)
        dx = xp.reshape(dx, x.shape)
    if "Grid@GRAD" in need:
        v_wn, v_en, v_ws, v_es = (_values(xp, x, flat, inside) for flat, inside, _ in corners)

        def spread(d):
            return xp.reshape(d, (n, 1, h, w))

        gx = xp.sum(((v_en - v_wn) * spread(d_s) + (v_es - v_ws) * spread(d_n)) * dout, axis=1)
        gy = xp.sum(((v_ws - v_wn) * spread(d_e) + (v_es - v_en) * spread(d_w)) * dout, axis=1)
        dgrid = xp.stack([gx * _xp.scalar(xp, gx, (w - 1) / 2), gy * _xp.scalar(xp, gy, (h - 1) / 2)], axis=-1)
    return dx, dgrid


def _grid_sampler_infer(ctx: InferContext) -> None:
    x, grid = ctx.input_var("X"), ctx.input_var("Grid")
    ctx.check_rank("X", (4,))
    ctx.check_rank("Grid", (4,))
    want = (x.shape[0], x.shape[2], x.shape[3], 2)
    if any(g >= 0 and e >= 0 and g != e for g, e in zip(grid.shape, want)):
        raise ctx.error(
            f"Grid '{grid.name}' {fmt_shape(grid.shape)}: expected [N, H, W, 2] {fmt_shape(want)} of X "
            f"'{x.name}' {fmt_shape(x.shape)}"
        )
    ctx.set_output("Output", x.shape, x.dtype)


register_op(
    "grid_sampler",
    inputs=("X", "Grid"),
    outputs=("Output",),
    infer_shape=_grid_sampler_infer,
    grad=make_grad_op(inputs=("X", "Grid", "Output@GRAD"), outputs=("X@GRAD", "Grid@GRAD")),
    kernel=_grid_sampler,
)
register_op(
    "grid_sampler_grad",
    inputs=("X", "Grid", "Output@GRAD"),
    outputs=("X@GRAD", "Grid@GRAD"),
    kernel=_grid_sampler_grad,
    wants_outputs=True,
)
