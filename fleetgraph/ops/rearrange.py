"""Rearranging pixels and channels (Paddle 1.8's types, slots and attrs): space_to_depth,
pixel_shuffle, shuffle_channel, temporal_shift and unfold, each with its gradient, the inverse
rearrangement (a sum over overlapping windows for unfold)."""

from __future__ import annotations

from ..ir import InferContext, make_grad_op, register_op
from ..ir.errors import fmt_shape
from ._window import out_size, windows
from ._xp import pad, reshape


def _image(ctx: InferContext):
    x = ctx.input_var("X")
    if len(x.shape) != 4:
        raise ctx.error(f"X '{x.name}' {fmt_shape(x.shape)}: expected a 4-D [N, C, H, W] tensor")
    return x


def _divides(ctx: InferContext, x, n: int, dims: tuple[int, ...], what: str) -> None:
    if n <= 0 or any(x.shape[d] >= 0 and x.shape[d] % n for d in dims):
        raise ctx.error(f"{what} {n} must divide X '{x.name}' {fmt_shape(x.shape)} in axes {list(dims)}")


def _permuted(xp, x, split_shape, perm, out_shape):
    """x viewed as split_shape, its axes put in perm's order, viewed as out_shape."""
    return reshape(xp, xp.permute_dims(reshape(xp, x, split_shape), perm), out_shape)


def _inverse(perm) -> tuple[int, ...]:
    out = [0] * len(perm)
    for i, p in enumerate(perm):
        out[p] = i
    return tuple(out)


def _register_rearrangement(op_type: str, attr: str, infer, split, perm, joined, x_shape_of=None) -> None:
    """An op that is one reshape-transpose-reshape of X, and its gradient, the inverse one.
    split(shape, n) / joined(shape, n): X's split view and Out's shape for X's shape and the attr.
    x_shape_of(dout_shape, n): X's shape from Out@GRAD's, for a gradient op that reads Out@GRAD
    only, as Paddle's do where it can (else the gradient op reads X too)."""

    def kernel(xp, x, **attrs):
        n = attrs[attr]
        return _permuted(xp, x, split(x.shape, n), perm, joined(x.shape, n))

    def backward(xp, x_shape, dout, n):
        split_shape = split(x_shape, n)
        return _permuted(xp, dout, tuple(split_shape[p] for p in perm), _inverse(perm), x_shape)

    def infer_grad(ctx: InferContext) -> None:
        dout = ctx.input_var("Out@GRAD")
        shape = x_shape_of(dout.shape, ctx.attr(attr))  # each dim of X from the same dim of Out
        ctx.set_output("X@GRAD", tuple(-1 if d < 0 else v for d, v in zip(dout.shape, shape)), dout.dtype)

    def grad_from_x(xp, x, dout, **attrs):
        return backward(xp, x.shape, dout, attrs[attr])

    def grad_from_dout(xp, dout, **attrs):
        return backward(xp, x_shape_of(dout.shape, attrs[attr]), dout, attrs[attr])

    if x_shape_of is None:
        grad_inputs, grad_infer, grad_kernel = ("X", "Out@GRAD"), None, grad_from_x
    else:
        grad_inputs, grad_infer, grad_kernel = ("Out@GRAD",), infer_grad, grad_from_dout
    register_op(
        op_type,
        inputs=("X",),
        outputs=("Out",),
        attrs={attr: 1},
        infer_shape=infer,
        grad=make_grad_op(inputs=grad_inputs, outputs=("X@GRAD",)),
        kernel=kernel,
    )
    register_op(
        op_type + "_grad",
        inputs=grad_inputs,
        outputs=("X@GRAD",),
        attrs={attr: 1},
        infer_shape=grad_infer,
        kernel=grad_kernel,
    )


def _dim(d: int, scale: float) -> int:
    return -1 if d < 0 else int(d * scale)


# space_to_depth, as Paddle's kernel (Caffe's reorg): input channel k = offset * C' + c goes, at
# (j, i), to (c, j * b + offset // b, i * b + offset % b) of a [N, C', H * b, W * b] buffer, which
# Out then reads as [N, C * b * b, H / b, W / b].
def _space_to_depth_infer(ctx: InferContext) -> None:
    x, b = _image(ctx), ctx.attr("blocksize")
    _divides(ctx, x, b, (2, 3), "blocksize")
    _divides(ctx, x, b * b, (1,), "blocksize * blocksize")
    n, c, h, w = x.shape
    ctx.set_output("Out", (n, _dim(c, b * b), _dim(h, 1 / b), _dim(w, 1 / b)), x.dtype, lod_level=x.lod_level)


_register_rearrangement(
    "space_to_depth",
    "blocksize",
    _space_to_depth_infer,
    split=lambda s, b: (s[0], b, b, s[1] // (b * b), s[2], s[3]),
    perm=(0, 3, 4, 1, 5, 2),
    joined=lambda s, b: (s[0], s[1] * b * b, s[2] // b, s[3] // b),
)


def _pixel_shuffle_infer(ctx: InferContext) -> None:
    x, r = _image(ctx), ctx.attr("upscale_factor")
    _divides(ctx, x, r * r, (1,), "upscale_factor ** 2")
    n, c, h, w = x.shape
    ctx.set_output("Out", (n, _dim(c, 1 / (r * r)), _dim(h, r), _dim(w, r)), x.dtype)


_register_rearrangement(  # out[n, c, h * r + i, w * r + j] = x[n, c * r * r + i * r + j, h, w]
    "pixel_shuffle",
    "upscale_factor",
    _pixel_shuffle_infer,
    split=lambda s, r: (s[0], s[1] // (r * r), r, r, s[2], s[3]),
    perm=(0, 1, 4, 2, 5, 3),
    joined=lambda s, r: (s[0], s[1] // (r * r), s[2] * r, s[3] * r),
    x_shape_of=lambda s, r: (s[0], s[1] * r * r, s[2] // r, s[3] // r),
)


def _shuffle_channel_infer(ctx: InferContext) -> None:
    x = _image(ctx)
    _divides(ctx, x, ctx.attr("group"), (1,), "group")
    ctx.set_output("Out", x.shape, x.dtype)


_register_rearrangement(  # channel g * (C / group) + k moves to k * group + g
    "shuffle_channel",
    "group",
    _shuffle_channel_infer,
    split=lambda s, g: (s[0], g, s[1] // g, s[2], s[3]),
    perm=(0, 2, 1, 3, 4),
    joined=lambda s, g: tuple(s),
    x_shape_of=lambda s, g: tuple(s),
)

# -- temporal_shift: a quarter of the channels one frame back, a quarter one frame ahead ------------


def _shifted(xp, x, seg_num: int, shift_ratio: float, back: bool):
    """Channels [0, c1) take the previous frame's values and [c1, c2) the next frame's (zeros past
    either end); `back` shifts the other way, the gradient's direction."""
    n, c, h, w = x.shape
    c1, c2 = int(c * shift_ratio), int(c * 2 * shift_ratio)
    frames = reshape(xp, x, (n // seg_num, seg_num, c, h, w))
    padded = pad(xp, frames, [(0, 0), (1, 1), (0, 0), (0, 0), (0, 0)])
    earlier, later = padded[:, :seg_num, ...], padded[:, 2:, ...]
    first, second = (later, earlier) if back else (earlier, later)
    out = xp.concat([first[:, :, :c1, ...], second[:, :, c1:c2, ...], frames[:, :, c2:, ...]], axis=2)
    return reshape(xp, out, x.shape)


def _temporal_shift_infer(ctx: InferContext) -> None:
    x, seg = _image(ctx), ctx.attr("seg_num")
    _divides(ctx, x, seg, (0,), "seg_num")
    if not 0 < ctx.attr("shift_ratio") < 0.5:
        raise ctx.error(f"shift_ratio {ctx.attr('shift_ratio')}: expected a value in (0, 0.5)")
    ctx.set_output("Out", x.shape, x.dtype, lod_level=x.lod_level)


_SHIFT_ATTRS = {"seg_num": 1, "shift_ratio": 0.25}
register_op(
    "temporal_shift",
    inputs=("X",),
    outputs=("Out",),
    attrs=_SHIFT_ATTRS,
    infer_shape=_temporal_shift_infer,
    grad=make_grad_op(inputs=("Out@GRAD",), outputs=("X@GRAD",)),
    kernel=lambda xp, x, *, seg_num, shift_ratio: _shifted(xp, x, seg_num, shift_ratio, back=False),
)
register_op(
    "temporal_shift_grad",
    inputs=("Out@GRAD",),
    outputs=("X@GRAD",),
    attrs=_SHIFT_ATTRS,
    infer_shape=lambda ctx: ctx.set_output("X@GRAD", ctx.input_var("Out@GRAD").shape, ctx.input_var("Out@GRAD").dtype),
    kernel=lambda xp, dout, *, seg_num, shift_ratio: _shifted(xp, dout, seg_num, shift_ratio, back=True),
)

# -- unfold: im2col, each sliding block's pixels as one column ------------------------------------


def _unfold_geometry(shape, kernel_sizes, strides, paddings, dilations):
    """Out's (height, width) and, per kernel offset (row-major), the slices of the padded image it reads."""
    top, left, bottom, right = paddings
    spans = []
    for size, k, s, p0, p1, d in zip(shape[2:], kernel_sizes, strides, (top, left), (bottom, right), dilations):
        spans.append(out_size(size, d * (k - 1) + 1, s, p0, p1))
    rows = windows(spans[0], kernel_sizes[0], strides[0], dilations[0])
    cols = windows(spans[1], kernel_sizes[1], strides[1], dilations[1])
    return spans, [(r, c) for r in rows for c in cols]


def _unfold_pads(paddings) -> list[tuple[int, int]]:
    top, left, bottom, right = paddings
    return [(0, 0), (0, 0), (top, bottom), (left, right)]


def _unfold(xp, x, *, kernel_sizes, strides, paddings, dilations):
    (oh, ow), offsets = _unfold_geometry(x.shape, kernel_sizes, strides, paddings, dilations)
    padded = pad(xp, x, _unfold_pads(paddings))
    cols = xp.stack([padded[:, :, r, c] for r, c in offsets], axis=2)
    return reshape(xp, cols, (x.shape[0], x.shape[1] * len(offsets), oh * ow))


def _unfold_grad(xp, x, dy, *, kernel_sizes, strides, paddings, dilations):
    """Each column's gradient added back at the pixels it read (windows overlap), then the
    padding cut away."""
    (oh, ow), offsets = _unfold_geometry(x.shape, kernel_sizes, strides, paddings, dilations)
    n, c, h, w = x.shape
    cols = reshape(xp, dy, (n, c, len(offsets), oh, ow))
    dpad = xp.zeros((n, c, *(size + a + b for size, (a, b) in zip((h, w), _unfold_pads(paddings)[2:]))), dtype=dy.dtype)
    for i, (r, col) in enumerate(offsets):
        dpad[:, :, r, col] = dpad[:, :, r, col] + cols[:, :, i, ...]
    top, left = paddings[0], paddings[1]
    return dpad[:, :, top : top + h, left : left + w]


def _unfold_infer(ctx: InferContext) -> None:
    x = _image(ctx)
    for name, count in (("kernel_sizes", 2), ("strides", 2), ("dilations", 2), ("paddings", 4)):
        if len(ctx.attr(name)) != count:
            raise ctx.error(f"{name} {ctx.attr(name)}: expected {count} values")
    attrs = {k: ctx.attr(k) for k in ("kernel_sizes", "strides", "paddings", "dilations")}
    (oh, ow), offsets = _unfold_geometry(x.shape, **attrs)
    if 0 <= oh < 1 or 0 <= ow < 1:
        raise ctx.error(f"the sliding blocks {attrs} do not fit X '{x.name}' {fmt_shape(x.shape)}")
    n, c = x.shape[:2]
    ctx.set_output("Y", (n, -1 if c < 0 else c * len(offsets), -1 if oh < 0 or ow < 0 else oh * ow), x.dtype)


_UNFOLD_ATTRS = {"kernel_sizes": [], "strides": [1, 1], "paddings": [0, 0, 0, 0], "dilations": [1, 1]}
register_op(
    "unfold",
    inputs=("X",),
    outputs=("Y",),
    attrs=_UNFOLD_ATTRS,
    infer_shape=_unfold_infer,
    grad=make_grad_op(inputs=("X", "Y@GRAD"), outputs=("X@GRAD",)),
    kernel=_unfold,
)
register_op("unfold_grad", inputs=("X", "Y@GRAD"), outputs=("X@GRAD",), attrs=_UNFOLD_ATTRS, kernel=_unfold_grad)
