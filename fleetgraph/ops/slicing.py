"""Windows and borders (Paddle 1.8's types, slots and attrs): strided_slice, crop, crop_tensor, pad,
pad2d and pad_constant_like, each with its gradient, which writes Out@GRAD back into the window it
came from (a sum over the borders' sources for pad2d's reflect and edge modes)."""

from __future__ import annotations

from ..ir import InferContext, make_grad_op, register_op
from ..ir.errors import fmt_shape
from ._xp import host, pad, reshape, scatter_add

# -- strided_slice ----------------------------------------------------------------------------------


def _host_ints(value) -> list[int]:
    """A shape or offsets tensor (or a list of one-element tensors) as Python ints."""
    if isinstance(value, list):
        return [int(v) for t in value for v in host(t).reshape(-1)]
    return [int(v) for v in host(value).reshape(-1)]


def _stride_bounds(start: int, end: int, stride: int, size: int) -> slice:
    """Paddle's StridedSliceFunctor as a Python slice: negative start and end count from the end,
    except end -1 with a negative stride, which runs past the first element; both clamp to the axis."""
    if stride == 0:
        raise ValueError("strided_slice: a stride is 0; expected a nonzero stride")
    start = start + size if start < 0 else start
    reaches_front = stride < 0 and end == -1
    end = end + size if end < 0 and not reaches_front else end
    if stride > 0:
        return slice(min(max(start, 0), size), min(max(end, 0), size), stride)
    if start < 0:
        return slice(0, 0, 1)
    return slice(min(start, size - 1), None if reaches_front or end < 0 else end, stride)


def _strided_index(shape, axes, starts, ends, strides) -> tuple:
    index = [slice(None)] * len(shape)
    for axis, start, end, stride in zip(axes, starts, ends, strides):
        index[axis] = _stride_bounds(start, end, stride, shape[axis])
    return tuple(index)


def _slice_lists(starts_t, ends_t, strides_t, starts_l, ends_l, strides_l, attrs):
    """starts, ends, strides: a whole tensor wins over a list of one-element tensors over the attr."""
    out = []
    for name, whole, parts in (
        ("starts", starts_t, starts_l),
        ("ends", ends_t, ends_l),
        ("strides", strides_t, strides_l),
    ):
        out.append(_host_ints(whole) if whole is not None else _host_ints(parts) if parts else list(attrs[name]))
    return out


def _strided_infer(ctx: InferContext) -> None:
    x = ctx.input_var("Input")
    axes, starts, ends, strides = (ctx.attr(k) for k in ("axes", "starts", "ends", "strides"))
    shape = list(x.shape)
    tensors = any(ctx.has_input(s) for s in _STRIDED_TENSORS)
    for i, axis in enumerate(axes):
        if not 0 <= axis < len(shape):
            raise ctx.error(f"axis {axis} is out of range for Input '{x.name}' {fmt_shape(x.shape)}")
        if tensors or shape[axis] < 0 or i >= len(starts):
            shape[axis] = -1
        else:
            shape[axis] = len(range(*_stride_bounds(starts[i], ends[i], strides[i], shape[axis]).indices(shape[axis])))
    rows_kept = 0 not in axes  # Paddle shares Input's LoD; it describes Out where the rows stay
    ctx.set_output("Out", _decrease(shape, ctx.attr("decrease_axis")), x.dtype, lod_level=x.lod_level * rows_kept)


def _decrease(shape, decrease_axis) -> list:
    """The shape without the decreased axes ([1] when none is left, as Paddle's)."""
    return [d for i, d in enumerate(shape) if i not in decrease_axis] or [1]


def _strided_slice(xp, x, st, en, sd, st_l, en_l, sd_l, **attrs):
    starts, ends, strides = _slice_lists(st, en, sd, st_l, en_l, sd_l, attrs)
    out = x[_strided_index(x.shape, attrs["axes"], starts, ends, strides)]
    return reshape(xp, out, _decrease(out.shape, attrs["decrease_axis"]))


def _strided_slice_grad(xp, x, st, en, sd, st_l, en_l, sd_l, dout, **attrs):
    starts, ends, strides = _slice_lists(st, en, sd, st_l, en_l, sd_l, attrs)
    dx = xp.zeros_like(x)
    index = _strided_index(x.shape, attrs["axes"], starts, ends, strides)
    dx[index] = reshape(xp, dout, dx[index].shape)
    return dx


_STRIDED_TENSORS = tuple(f"{bound}Tensor{kind}" for kind in ("", "List") for bound in ("Starts", "Ends", "Strides"))
_STRIDED_INPUTS = ("Input", *(f"{slot}{'*' if slot.endswith('List') else ''}?" for slot in _STRIDED_TENSORS))
_STRIDED_ATTRS = {"axes": [], "starts": [], "ends": [], "strides": [], "infer_flags": [], "decrease_axis": []}
register_op(
    "strided_slice",
    inputs=_STRIDED_INPUTS,
    outputs=("Out",),
    attrs=_STRIDED_ATTRS,
    infer_shape=_strided_infer,
    grad=make_grad_op(inputs=("Input", *_STRIDED_TENSORS, "Out@GRAD"), outputs=("Input@GRAD",)),
    kernel=_strided_slice,
)
register_op(
    "strided_slice_grad",
    inputs=(*_STRIDED_INPUTS, "Out@GRAD"),
    outputs=("Input@GRAD",),
    attrs=_STRIDED_ATTRS,
    kernel=_strided_slice_grad,
)

# -- crop, crop_tensor: a window of X at offsets; its gradient is zero outside the window ------------


def _window(x_shape, offsets, shape) -> tuple:
    """The window's index; a -1 in shape runs to the end of its axis (crop_tensor's rule)."""
    if len(offsets) != len(x_shape) or len(shape) != len(x_shape):
        raise ValueError(f"offsets {list(offsets)} and shape {list(shape)}: expected one per axis of X {list(x_shape)}")
    index = []
    for size, at, n in zip(x_shape, offsets, shape):
        n = size - at if n == -1 else n
        if at < 0 or n < 0 or at + n > size:
            raise ValueError(f"offsets {list(offsets)} and shape {list(shape)} leave X {list(x_shape)}")
        index.append(slice(at, at + n))
    return tuple(index)


def _offsets(x, tensor, tensor_list, attr) -> list[int]:
    """Offsets from a tensor, else a list of one-element tensors, else the attr (zeros when empty)."""
    if tensor is not None:
        return _host_ints(tensor)
    return _host_ints(tensor_list) if tensor_list else list(attr) or [0] * x.ndim


def _unwindow(xp, x, offsets, dout):
    """X@GRAD: Out@GRAD in the window at offsets, zero elsewhere (the window has Out@GRAD's shape)."""
    dx = xp.zeros_like(x)
    dx[_window(x.shape, offsets, dout.shape)] = dout
    return dx


def _crop_infer(ctx: InferContext) -> None:
    x = ctx.input_var("X")
    shape = ctx.input_var("Y").shape if ctx.has_input("Y") else tuple(ctx.attr("shape"))
    if len(shape) != len(x.shape):
        raise ctx.error(f"the crop shape {fmt_shape(shape)} and X '{x.name}' {fmt_shape(x.shape)} differ in rank")
    ctx.set_output("Out", shape, x.dtype)


def _crop(xp, x, y, offsets_t, *, offsets, shape):
    """X's window of Y's shape (else the shape attr) at the offsets."""
    return x[_window(x.shape, _offsets(x, offsets_t, None, offsets), y.shape if y is not None else shape)]


_CROP_ATTRS = {"offsets": [], "shape": []}
register_op(
    "crop",
    inputs=("X", "Y?", "Offsets?"),
    outputs=("Out",),
    attrs=_CROP_ATTRS,
    infer_shape=_crop_infer,
    grad=make_grad_op(inputs=("X", "Offsets", "Out@GRAD"), outputs=("X@GRAD",)),
    kernel=_crop,
)
register_op(
    "crop_grad",
    inputs=("X", "Offsets?", "Out@GRAD"),
    outputs=("X@GRAD",),
    attrs=_CROP_ATTRS,
    kernel=lambda xp, x, off, dout, *, offsets, shape: _unwindow(xp, x, _offsets(x, off, None, offsets), dout),
)


def _crop_tensor(xp, x, shape_t, offsets_t, shape_l, offsets_l, *, offsets, shape):
    """Shape from a tensor, else a list of one-element tensors, else the attr; offsets likewise."""
    shape = _host_ints(shape_t) if shape_t is not None else _host_ints(shape_l) if shape_l else shape
    return x[_window(x.shape, _offsets(x, offsets_t, offsets_l, offsets), shape)]


def _crop_tensor_infer(ctx: InferContext) -> None:
    x = ctx.input_var("X")
    if ctx.has_input("Shape") or ctx.has_input("ShapeTensor"):
        ctx.set_output("Out", (-1,) * len(x.shape), x.dtype)
        return
    shape, offsets = list(ctx.attr("shape")), ctx.attr("offsets") or [0] * len(x.shape)
    if len(shape) != len(x.shape):
        raise ctx.error(f"shape {shape} and X '{x.name}' {fmt_shape(x.shape)} differ in rank")
    known = not (ctx.has_input("Offsets") or ctx.has_input("OffsetsTensor"))
    for i, d in enumerate(shape):
        if d == -1:
            shape[i] = x.shape[i] - offsets[i] if known and x.shape[i] >= 0 else -1
    ctx.set_output("Out", shape, x.dtype)


register_op(
    "crop_tensor",
    inputs=("X", "Shape?", "Offsets?", "ShapeTensor*?", "OffsetsTensor*?"),
    outputs=("Out",),
    attrs=_CROP_ATTRS,
    infer_shape=_crop_tensor_infer,
    grad=make_grad_op(inputs=("X", "Offsets", "OffsetsTensor", "Out@GRAD"), outputs=("X@GRAD",)),
    kernel=_crop_tensor,
)
register_op(
    "crop_tensor_grad",
    inputs=("X", "Offsets?", "OffsetsTensor*?", "Out@GRAD"),
    outputs=("X@GRAD",),
    attrs=_CROP_ATTRS,
    kernel=lambda xp, x, off, off_l, dout, *, offsets, shape: _unwindow(xp, x, _offsets(x, off, off_l, offsets), dout),
)

# -- pad, pad_constant_like: constant borders --------------------------------------------------------


def _pairs(paddings, rank: int, where: str) -> list[tuple[int, int]]:
    if len(paddings) != 2 * rank:
        raise ValueError(f"{where}: paddings {list(paddings)}; expected 2 * rank = {2 * rank} values")
    return [(int(paddings[2 * i]), int(paddings[2 * i + 1])) for i in range(rank)]


def _pad_infer(ctx: InferContext) -> None:
    x = ctx.input_var("X")
    try:
        widths = _pairs(ctx.attr("paddings"), len(x.shape), "pad")
    except ValueError as e:
        raise ctx.error(str(e)) from None
    shape = tuple(-1 if d < 0 else d + a + b for d, (a, b) in zip(x.shape, widths))
    ctx.set_output("Out", shape, x.dtype, lod_level=x.lod_level * (widths[0] == (0, 0)))  # Paddle: same rows


def _inner(shape, widths) -> tuple:
    return tuple(slice(a, n - b) for n, (a, b) in zip(shape, widths))


register_op(
    "pad",
    inputs=("X",),
    outputs=("Out",),
    attrs={"paddings": [], "pad_value": 0.0},
    infer_shape=_pad_infer,
    grad=make_grad_op(inputs=("Out@GRAD",), outputs=("X@GRAD",)),
    kernel=lambda xp, x, *, paddings, pad_value: pad(xp, x, _pairs(paddings, x.ndim, "pad"), pad_value),
)


def _pad_grad_infer(ctx: InferContext) -> None:
    """X@GRAD is Out@GRAD without the borders (Paddle's pad_grad reads only Out@GRAD)."""
    dout = ctx.input_var("Out@GRAD")
    widths = _pairs(ctx.attr("paddings"), len(dout.shape), "pad_grad")
    ctx.set_output("X@GRAD", tuple(-1 if d < 0 else d - a - b for d, (a, b) in zip(dout.shape, widths)), dout.dtype)


register_op(
    "pad_grad",
    inputs=("Out@GRAD",),
    outputs=("X@GRAD",),
    attrs={"paddings": [], "pad_value": 0.0},
    infer_shape=_pad_grad_infer,
    kernel=lambda xp, dout, *, paddings, pad_value: dout[_inner(dout.shape, _pairs(paddings, dout.ndim, "pad_grad"))],
)


def _pad_like_infer(ctx: InferContext) -> None:
    x, y = ctx.input_var("X"), ctx.input_var("Y")
    if len(x.shape) != len(y.shape) or any(0 <= a < b for a, b in zip(x.shape, y.shape)):
        raise ctx.error(f"X '{x.name}' {fmt_shape(x.shape)} must hold Y '{y.name}' {fmt_shape(y.shape)} in every axis")
    ctx.set_output("Out", x.shape, y.dtype, lod_level=x.lod_level)


register_op(
    "pad_constant_like",
    inputs=("X", "Y"),
    outputs=("Out",),
    attrs={"pad_value": 0.0},
    infer_shape=_pad_like_infer,
    grad=make_grad_op(inputs=("Y", "Out@GRAD"), outputs=("Y@GRAD",)),
    kernel=lambda xp, x, y, *, pad_value: pad(xp, y, [(0, a - b) for a, b in zip(x.shape, y.shape)], pad_value),
)
register_op(
    "pad_constant_like_grad",
    inputs=("Y", "Out@GRAD"),
    outputs=("Y@GRAD",),
    attrs={"pad_value": 0.0},
    kernel=lambda xp, y, dout, *, pad_value: dout[tuple(slice(0, n) for n in y.shape)],
)

# -- pad2d: constant, reflect or edge borders of an image, NCHW or NHWC ---------------------------


def _source(xp, size: int, before: int, after: int, mode: str):
    """For each position of a padded axis, the input position it copies (reflect mirrors about the
    edge element, edge repeats it)."""
    at = xp.arange(-before, size + after)
    if mode == "reflect":
        if before >= size or after >= size:
            raise ValueError(f"pad2d: reflect paddings ({before}, {after}) must be smaller than the axis ({size})")
        at = xp.abs(at)
        return (size - 1) - xp.abs((size - 1) - at)
    return xp.clip(at, 0, size - 1)


def _pad2d_widths(paddings_t, paddings, data_format) -> tuple[tuple[tuple[int, int], ...], int]:
    """((top, bottom), (left, right)) and the height axis."""
    top, bottom, left, right = _host_ints(paddings_t) if paddings_t is not None else paddings
    return ((top, bottom), (left, right)), (2 if data_format == "NCHW" else 1)


def _pad2d(xp, x, paddings_t, *, paddings, mode, pad_value, data_format):
    widths, h = _pad2d_widths(paddings_t, paddings, data_format)
    if mode == "constant":
        return pad(xp, x, [(0, 0)] * h + list(widths) + [(0, 0)] * (2 - h), pad_value)
    for axis, (a, b) in zip((h, h + 1), widths):
        x = xp.take(x, _source(xp, x.shape[axis], a, b, mode), axis=axis)
    return x


def _pad2d_grad(xp, x, paddings_t, dout, *, paddings, mode, pad_value, data_format):
    """The transpose of the gather: each output gradient adds into the input position it copied."""
    widths, h = _pad2d_widths(paddings_t, paddings, data_format)
    if mode == "constant":
        return dout[(slice(None),) * h + _inner(dout.shape[h : h + 2], widths) + (...,)]
    for axis, (a, b) in zip((h, h + 1), widths):
        index = _source(xp, x.shape[axis], a, b, mode)
        dout = xp.moveaxis(scatter_add(xp, x.shape[axis], index, xp.moveaxis(dout, axis, 0)), 0, axis)
    return dout


def _pad2d_infer(ctx: InferContext) -> None:
    x = ctx.input_var("X")
    if len(x.shape) != 4:
        raise ctx.error(f"X '{x.name}' {fmt_shape(x.shape)}: expected a 4-D image")
    if ctx.attr("mode") not in ("constant", "reflect", "edge"):
        raise ctx.error(f"mode {ctx.attr('mode')!r}; expected 'constant', 'reflect' or 'edge'")
    if ctx.attr("data_format") not in ("NCHW", "NHWC"):
        raise ctx.error(f"data_format {ctx.attr('data_format')!r}; expected 'NCHW' or 'NHWC'")
    shape, h = list(x.shape), 2 if ctx.attr("data_format") == "NCHW" else 1
    if ctx.has_input("Paddings"):
        shape[h] = shape[h + 1] = -1
    else:
        top, bottom, left, right = ctx.attr("paddings")
        for axis, extra in ((h, top + bottom), (h + 1, left + right)):
            shape[axis] = -1 if shape[axis] < 0 else shape[axis] + extra
    ctx.set_output("Out", shape, x.dtype, lod_level=x.lod_level)


_PAD2D_ATTRS = {"paddings": [0, 0, 0, 0], "pad_value": 0.0, "mode": "constant", "data_format": "NCHW"}
register_op(
    "pad2d",
    inputs=("X", "Paddings?"),
    outputs=("Out",),
    attrs=_PAD2D_ATTRS,
    infer_shape=_pad2d_infer,
    grad=make_grad_op(inputs=("X", "Paddings", "Out@GRAD"), outputs=("X@GRAD",)),
    kernel=_pad2d,
)
register_op(
    "pad2d_grad",
    inputs=("X", "Paddings?", "Out@GRAD"),
    outputs=("X@GRAD",),
    attrs=_PAD2D_ATTRS,
    kernel=_pad2d_grad,
)
