"""Feature projections over sequences and pairs: bilinear_tensor_product, row_conv, im2sequence and
add_position_encoding, with Paddle 1.8's slots, attrs and gradients.

row_conv and add_position_encoding read a LoD tensor's sequences (or a dense [batch, time, features]
tensor's rows as sequences of equal length); im2sequence makes one sequence of patches per image.
Positions and patch indices are worked out on the host from the shapes and the LoD; the arrays are
then moved by gathers (and, for im2sequence's gradient, one scatter-add)."""

from __future__ import annotations

import numpy as np

from ..ir import InferContext, make_grad_op, register_op
from ..ir.errors import fmt_shape
from ._xp import host, pad, reshape, scatter_add, total
from .lod_tensor import LoDError, LoDTensor


def _same_as_x(ctx: InferContext) -> None:
    x = ctx.input_var("X")
    ctx.set_output("Out", x.shape, x.dtype, lod_level=x.lod_level)


class _Sequences:
    """A LoD tensor's rows and last-level offsets, or a dense [batch, time, features] tensor as
    `batch` sequences of `time` rows; `back` gives rows in the input's form."""

    def __init__(self, xp, x, where: str) -> None:
        self.xp, self.levels = xp, x.levels if isinstance(x, LoDTensor) else ()
        data = x.data if isinstance(x, LoDTensor) else x
        if self.levels:
            self.rows, self.offsets, self.shape = data, np.asarray(x.offsets), None
        elif data.ndim == 3:
            b, t, d = data.shape
            self.rows, self.offsets, self.shape = reshape(xp, data, (b * t, d)), np.arange(0, b * t + 1, t), data.shape
        else:
            raise LoDError(f"{where}: expected a LoD tensor or a dense [batch, time, features], got {list(data.shape)}")

    def positions(self) -> np.ndarray:
        """Each row's position in its sequence."""
        lengths = np.diff(self.offsets)
        return np.arange(int(self.offsets[-1])) - np.repeat(self.offsets[:-1], lengths)

    def lengths(self) -> np.ndarray:
        """The length of each row's sequence."""
        return np.repeat(np.diff(self.offsets), np.diff(self.offsets))

    def back(self, rows):
        """Rows [T, D] as the input came: under its LoD, or reshaped to [batch, time, features]."""
        if self.levels:
            return LoDTensor(rows, self.levels)
        return reshape(self.xp, rows, self.shape)


def _rows_of(xp, value, width: int):
    """A gradient's rows [T, width], whether it arrives with LoD, without, or dense [B, T, width]."""
    return reshape(xp, value.data if isinstance(value, LoDTensor) else value, (-1, width))


# -- bilinear_tensor_product: Out[n, i] = X[n] Weight[i] Y[n]^T + Bias[0, i] -------------------------


def _btp_infer(ctx: InferContext) -> None:
    x, y, w = (ctx.input_var(s) for s in ("X", "Y", "Weight"))
    if len(x.shape) != 2 or len(y.shape) != 2 or len(w.shape) != 3:
        raise ctx.error(
            f"X {fmt_shape(x.shape)}, Y {fmt_shape(y.shape)}: expected rank 2; Weight {fmt_shape(w.shape)}: 3"
        )
    if (x.shape[1], y.shape[1]) != tuple(w.shape[1:]):
        raise ctx.error(
            f"Weight {fmt_shape(w.shape)}: expected [size, {x.shape[1]}, {y.shape[1]}] (X's and Y's widths)"
        )
    if ctx.has_input("Bias") and tuple(ctx.input_shape("Bias")) != (1, w.shape[0]):
        raise ctx.error(f"Bias {fmt_shape(ctx.input_shape('Bias'))}: expected [1, {w.shape[0]}]")
    ctx.set_output("Out", (x.shape[0], w.shape[0]), x.dtype)


def _x_weight(xp, x, weight):
    """[N, size, K]: X[n] Weight[i] for every n and i."""
    s, m, k = weight.shape
    w = reshape(xp, xp.permute_dims(weight, (1, 0, 2)), (m, s * k))
    return reshape(xp, x @ w, (x.shape[0], s, k))


def _bilinear_tensor_product(xp, x, y, weight, bias):
    out = total(xp, _x_weight(xp, x, weight) * y[:, None, :], axis=2)
    return out if bias is None else out + bias


def _bilinear_tensor_product_grad(xp, x, y, weight, dout, *, need):
    (n, m), (s, _, k) = x.shape, weight.shape
    g = dout[:, :, None]
    dx = dy = dw = dbias = None
    if "X@GRAD" in need:
        dx = reshape(xp, g * y[:, None, :], (n, s * k)) @ reshape(xp, xp.permute_dims(weight, (0, 2, 1)), (s * k, m))
    if "Y@GRAD" in need:
        dy = total(xp, g * _x_weight(xp, x, weight), axis=1)
    if "Weight@GRAD" in need:
        dw = reshape(xp, reshape(xp, g * x[:, None, :], (n, s * m)).T @ y, (s, m, k))
    if "Bias@GRAD" in need:
        dbias = total(xp, dout, axis=0, keepdims=True)
    return dx, dy, dw, dbias


register_op(
    "bilinear_tensor_product",
    inputs=("X", "Y", "Weight", "Bias?"),
    outputs=("Out",),
    infer_shape=_btp_infer,
    grad=make_grad_op(
        inputs=("X", "Y", "Weight", "Out@GRAD"), outputs=("X@GRAD", "Y@GRAD", "Weight@GRAD", "Bias@GRAD")
    ),
    kernel=_bilinear_tensor_product,
)
register_op(
    "bilinear_tensor_product_grad",
    inputs=("X", "Y", "Weight", "Out@GRAD"),
    outputs=("X@GRAD", "Y@GRAD", "Weight@GRAD", "Bias@GRAD"),
    kernel=_bilinear_tensor_product_grad,
    wants_outputs=True,
)


# -- row_conv: Out[t] = sum over j < future_context + 1 of X[t + j] * Filter[j], within a sequence ---


def _row_conv_infer(ctx: InferContext) -> None:
    x, f = ctx.input_var("X"), ctx.input_var("Filter")
    if x.lod_level == 0 and len(x.shape) != 3:
        raise ctx.error(f"X '{x.name}' {fmt_shape(x.shape)}: expected a sequence (LoD) or [batch, time, features]")
    if len(f.shape) != 2 or f.shape[1] != x.shape[-1]:
        raise ctx.error(f"Filter '{f.name}' {fmt_shape(f.shape)}: expected [future_context + 1, {x.shape[-1]}]")
    _same_as_x(ctx)


def _shifted(xp, seq: _Sequences, rows, k: int, sign: int):
    """[k, T, D]: for each j < k, the rows `sign * j` ahead in the same sequence (zeros beyond it)."""
    p, n = seq.positions(), seq.lengths()
    zero = rows.shape[0]
    source = xp.concat([rows, xp.zeros((1, rows.shape[1]), dtype=rows.dtype)], axis=0)
    out = []
    for j in range(k):
        q = p + sign * j
        index = np.where((q >= 0) & (q < n), np.arange(zero) + sign * j, zero)
        out.append(xp.take(source, xp.asarray(index), axis=0))
    return xp.stack(out)


def _row_conv(xp, x, filter):
    seq = _Sequences(xp, x, "row_conv: X")
    windows = _shifted(xp, seq, seq.rows, filter.shape[0], 1)
    return seq.back(total(xp, windows * filter[:, None, :], axis=0))


def _row_conv_grad(xp, x, filter, dout, *, need):
    seq = _Sequences(xp, x, "row_conv_grad: X")
    g = _rows_of(xp, dout, filter.shape[1])
    k = filter.shape[0]
    dx = dfilter = None
    if "X@GRAD" in need:  # row s is read at j by row s - j of its sequence
        dx = seq.back(total(xp, _shifted(xp, seq, g, k, -1) * filter[:, None, :], axis=0))
    if "Filter@GRAD" in need:
        dfilter = total(xp, _shifted(xp, seq, seq.rows, k, 1) * g[None, :, :], axis=1)
    return dx, dfilter


register_op(
    "row_conv",
    inputs=("X", "Filter"),
    outputs=("Out",),
    infer_shape=_row_conv_infer,
    grad=make_grad_op(inputs=("X", "Filter", "Out@GRAD"), outputs=("X@GRAD", "Filter@GRAD")),
    kernel=_row_conv,
    takes_lod=True,
)
register_op(
    "row_conv_grad",
    inputs=("X", "Filter", "Out@GRAD"),
    outputs=("X@GRAD", "Filter@GRAD"),
    kernel=_row_conv_grad,
    takes_lod=True,
    wants_outputs=True,
)


# -- add_position_encoding: alpha * X + beta * [sin | cos] of each row's position ----------------------


def _ape_infer(ctx: InferContext) -> None:
    x = ctx.input_var("X")
    if (x.lod_level == 0 and len(x.shape) != 3) or (x.lod_level > 0 and len(x.shape) != 2):
        raise ctx.error(f"X '{x.name}' {fmt_shape(x.shape)}: expected [batch, time, features] or a sequence of rows")
    if x.shape[-1] >= 0 and x.shape[-1] % 2:
        raise ctx.error(f"X '{x.name}' {fmt_shape(x.shape)}: expected an even number of features")
    _same_as_x(ctx)


def _encoding(positions: np.ndarray, size: int) -> np.ndarray:
    """Paddle's table: position j / 10000^(k / (half - 1)) (j / 10000 when half is 1), sines then cosines."""
    half = size // 2
    k = np.arange(half, dtype=np.float64)
    angle = positions[:, None] / (10000.0 ** (k / (half - 1)) if half > 1 else 10000.0)
    return np.concatenate([np.sin(angle), np.cos(angle)], axis=1)


def _add_position_encoding(xp, x, *, alpha, beta):
    seq = _Sequences(xp, x, "add_position_encoding: X")
    if seq.rows.shape[1] % 2:
        raise LoDError(f"add_position_encoding: X has {seq.rows.shape[1]} features; expected an even number")
    table = xp.asarray(_encoding(seq.positions(), seq.rows.shape[1]), dtype=seq.rows.dtype)
    return seq.back(seq.rows * alpha + table * beta)


def _add_position_encoding_grad(xp, dout, *, alpha, beta):
    return dout * alpha


_APE_ATTRS = {"alpha": 1.0, "beta": 1.0}
register_op(
    "add_position_encoding",
    inputs=("X",),
    outputs=("Out",),
    attrs=_APE_ATTRS,
    infer_shape=_ape_infer,
    grad=make_grad_op(inputs=("Out@GRAD",), outputs=("X@GRAD",)),
    kernel=_add_position_encoding,
    takes_lod=True,
)
register_op(
    "add_position_encoding_grad",
    inputs=("Out@GRAD",),
    outputs=("X@GRAD",),
    attrs=_APE_ATTRS,
    kernel=_add_position_encoding_grad,
)


# -- im2sequence: each image's kernel-sized patches, one row each, as one sequence --------------------


def _out_size(size: int, kernel: int, before: int, after: int, stride: int) -> int:
    return (size + before + after - kernel) // stride + 1


def _im2seq_infer(ctx: InferContext) -> None:
    x = ctx.check_rank("X", (4,))
    k = ctx.attr("kernels")
    if len(k) != 2 or len(ctx.attr("strides")) != 2 or len(ctx.attr("paddings")) != 4:
        raise ctx.error("kernels and strides: expected 2 values, paddings 4 [up, left, down, right]")
    ctx.set_output("Out", (-1, x[1] * k[0] * k[1] if x[1] >= 0 else -1), ctx.input_dtype("X"), lod_level=1)


def _patch_index(shape, kernels, strides, paddings) -> tuple[np.ndarray, tuple[int, int]]:
    """[OH * OW, C * kh * kw] flat positions in one padded image of `shape` [C, H, W] that each
    patch row reads, in Paddle's OCF order (output row-major, then channel, kernel row, column)."""
    c, h, w = shape
    up, left, down, right = paddings
    oh = _out_size(h, kernels[0], up, down, strides[0])
    ow = _out_size(w, kernels[1], left, right, strides[1])
    hp, wp = h + up + down, w + left + right
    r = (np.arange(oh) * strides[0])[:, None, None, None, None] + np.arange(kernels[0])[None, None, None, :, None]
    s = (np.arange(ow) * strides[1])[None, :, None, None, None] + np.arange(kernels[1])[None, None, None, None, :]
    ch = np.arange(c)[None, None, :, None, None]
    return (ch * hp * wp + r * wp + s).reshape(oh * ow, -1), (oh, ow)


def _padded(xp, x, paddings):
    up, left, down, right = paddings
    return pad(xp, x, [(0, 0), (0, 0), (up, down), (left, right)])


def _real_sizes(y, n: int, out_stride, kernels, strides, paddings) -> list[tuple[int, int]]:
    """Paddle's per-image output sizes from the real image sizes Y [N, 2] (height, width), each
    divided by out_stride rounding up."""
    sizes = []
    for real_h, real_w in host(y).reshape(n, 2).astype(np.int64):
        h, w = -(-int(real_h) // out_stride[0]), -(-int(real_w) // out_stride[1])
        sizes.append(
            (
                _out_size(h, kernels[0], paddings[0], paddings[2], strides[0]),
                _out_size(w, kernels[1], paddings[1], paddings[3], strides[1]),
            )
        )
    return sizes


def _im2sequence(xp, x, y, *, kernels, strides, paddings, out_stride):
    x = x.data if isinstance(x, LoDTensor) else x
    n = x.shape[0]
    index, (oh, ow) = _patch_index(x.shape[1:], kernels, strides, paddings)
    flat = reshape(xp, _padded(xp, x, paddings), (n, -1))
    patches = reshape(xp, xp.take(flat, xp.asarray(index.reshape(-1)), axis=1), (n, oh, ow, index.shape[1]))
    if y is None or n == 1:  # as Paddle's: the real sizes count only in a batch of several images
        sizes = [(oh, ow)] * n
    else:
        sizes = _real_sizes(y, n, out_stride, kernels, strides, paddings)
    rows = [reshape(xp, patches[i, :h, :w, :], (h * w, index.shape[1])) for i, (h, w) in enumerate(sizes)]
    offsets = np.concatenate([[0], np.cumsum([h * w for h, w in sizes])])
    return LoDTensor(xp.concat(rows, axis=0), (offsets,))


def _im2sequence_grad(xp, x, dout, *, kernels, strides, paddings, out_stride):
    """Each patch row's gradient added back at the positions it read (Paddle's col2im), over the
    full images: the gradient of an im2sequence without the real sizes Y, as Paddle's."""
    x = x.data if isinstance(x, LoDTensor) else x
    g = dout.data if isinstance(dout, LoDTensor) else dout
    n, c, h, w = x.shape
    index, (oh, ow) = _patch_index((c, h, w), kernels, strides, paddings)
    if g.shape[0] != n * oh * ow:
        raise LoDError(
            f"im2sequence_grad: Out@GRAD has {g.shape[0]} rows; expected {n * oh * ow} "
            f"({n} images of {oh}x{ow} patches, without the real sizes Y)"
        )
    up, left, down, right = paddings
    hp, wp = h + up + down, w + left + right
    values = reshape(xp, g, (n, -1)).T  # [patch positions, images]
    dpad = reshape(xp, scatter_add(xp, c * hp * wp, xp.asarray(index.reshape(-1)), values).T, (n, c, hp, wp))
    return dpad[:, :, up : up + h, left : left + w]


_IM2SEQ_ATTRS = {"kernels": [1, 1], "strides": [1, 1], "paddings": [0, 0, 0, 0], "out_stride": [1, 1]}
register_op(
    "im2sequence",
    inputs=("X", "Y?"),
    outputs=("Out",),
    attrs=_IM2SEQ_ATTRS,
    infer_shape=_im2seq_infer,
    grad=make_grad_op(inputs=("X", "Out@GRAD"), outputs=("X@GRAD",)),
    kernel=_im2sequence,
    takes_lod=True,
)
register_op(
    "im2sequence_grad",
    inputs=("X", "Out@GRAD"),
    outputs=("X@GRAD",),
    attrs=_IM2SEQ_ATTRS,
    kernel=_im2sequence_grad,
    takes_lod=True,
)
