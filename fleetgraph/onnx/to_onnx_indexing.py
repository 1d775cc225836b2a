"""Export rules of the indexing, window and rearrangement ops (ops/indexing.py, ops/slicing.py,
ops/rearrange.py): each as the Slice, Pad, Gather, ScatterND, Unique or Reshape-Transpose nodes
that compute what its kernel does. Bounds given as tensors (StartsTensor, Shape, Paddings, ...)
are refused: the rules read them from attrs."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto

from ..ops._common import normalize_axis
from .emitter import Emitter, UnsupportedOp, exports

_FRONT = np.iinfo(np.int64).min  # Slice's end for "past the first element" with a negative step
_END = np.iinfo(np.int64).max


def _attr_bounds_only(op, *slots: str) -> None:
    given = [s for s in slots if op.input(s)]
    if given:
        raise UnsupportedOp(f"{op.type}: bounds from the tensor input(s) {given}; export reads them from attrs")


def _static(e: Emitter, name: str, axes, what: str) -> tuple[int, ...]:
    shape = e.shape(name)
    if any(shape[a] < 0 for a in axes):
        raise UnsupportedOp(f"{what}: needs the static size of axes {list(axes)} of '{name}' {list(shape)}")
    return shape


def _slice(e: Emitter, x: str, starts, ends, axes, steps=None, out=None) -> str:
    inputs = [x, e.const([int(v) for v in starts]), e.const([int(v) for v in ends]), e.const([int(a) for a in axes])]
    if steps is not None:
        inputs.append(e.const([int(s) for s in steps]))
    return e.node("Slice", inputs, out)


# -- flip, reverse, roll --------------------------------------------------------------------------


@exports("flip", "reverse")
def _flip(e: Emitter, op) -> None:
    x = e.x(op, "X")
    axes = [normalize_axis(a, len(e.shape(x))) for a in op.attr("dims" if op.type == "flip" else "axis")]
    _slice(e, x, [-1] * len(axes), [_FRONT] * len(axes), axes, [-1] * len(axes), e.out(op, "Out"))


@exports("roll")
def _roll(e: Emitter, op) -> None:
    x = e.x(op, "X")
    shape = _static(e, x, [normalize_axis(d, len(e.shape(x))) for d in op.attr("dims")], "roll")
    for k, (shift, dim) in enumerate(zip(op.attr("shifts"), op.attr("dims"))):
        axis = normalize_axis(dim, len(shape))
        cut = -(shift % shape[axis]) if shape[axis] else 0
        last = k == len(op.attr("dims")) - 1
        tail, head = _slice(e, x, [cut], [_END], [axis]), _slice(e, x, [0], [cut], [axis])
        x = e.node("Concat", [tail, head], e.out(op, "Out") if last else None, axis=axis)


# -- strided_slice, crop, crop_tensor -------------------------------------------------------------


@exports("strided_slice")
def _strided_slice(e: Emitter, op) -> None:
    _attr_bounds_only(op, "StartsTensor", "EndsTensor", "StridesTensor", "StartsTensorList", "EndsTensorList")
    _attr_bounds_only(op, "StridesTensorList")
    strides = op.attr("strides")
    # Paddle's end -1 with a negative stride runs past the first element
    ends = [_FRONT if end == -1 and s < 0 else end for end, s in zip(op.attr("ends"), strides)]
    decrease = op.attr("decrease_axis")
    out = None if decrease else e.out(op, "Out")
    sliced = _slice(e, e.x(op, "Input"), op.attr("starts"), ends, op.attr("axes"), strides, out)
    if len(decrease) == len(e.shape(e.x(op, "Input"))):  # nothing left: Paddle keeps [1]
        e.node("Reshape", [sliced, e.const([1])], e.out(op, "Out"))
    elif decrease:
        e.node("Squeeze", [sliced, e.const([int(a) for a in decrease])], e.out(op, "Out"))


def _window(e: Emitter, op, shape) -> None:
    x = e.x(op, "X")
    offsets = list(op.attr("offsets")) or [0] * len(e.shape(x))
    ends = [_END if n == -1 else o + n for o, n in zip(offsets, shape)]
    _slice(e, x, offsets, ends, range(len(offsets)), out=e.out(op, "Out"))


@exports("crop")
def _crop(e: Emitter, op) -> None:
    _attr_bounds_only(op, "Offsets")
    if not op.input("Y"):
        _window(e, op, op.attr("shape"))
        return
    x, offsets = e.x(op, "X"), list(op.attr("offsets")) or [0] * len(e.shape(e.x(op, "X")))
    ends = e.node("Add", [e.const(offsets), e.node("Shape", [e.x(op, "Y")])])
    e.node("Slice", [x, e.const(offsets), ends, e.const(list(range(len(offsets))))], e.out(op, "Out"))


@exports("crop_tensor")
def _crop_tensor(e: Emitter, op) -> None:
    _attr_bounds_only(op, "Shape", "Offsets", "ShapeTensor", "OffsetsTensor")
    _window(e, op, op.attr("shape"))


# -- pad, pad2d, pad_constant_like ----------------------------------------------------------------


def _pad(e: Emitter, x: str, pads, out: str, mode: str = "constant", value: float = 0.0, like: str = "") -> None:
    """ONNX Pad: all begins then all ends; the pad value of variable `like`'s dtype (else x's)."""
    inputs = [x, pads if isinstance(pads, str) else e.const([int(p) for p in pads])]
    if mode == "constant":
        inputs.append(e.scalar(value, like or x))
    e.node("Pad", inputs, out, mode=mode)


@exports("pad")
def _pad_op(e: Emitter, op) -> None:
    p = op.attr("paddings")
    _pad(e, e.x(op, "X"), p[0::2] + p[1::2], e.out(op, "Out"), value=op.attr("pad_value"))


@exports("pad2d")
def _pad2d(e: Emitter, op) -> None:
    _attr_bounds_only(op, "Paddings")
    top, bottom, left, right = op.attr("paddings")
    if op.attr("data_format") == "NCHW":
        pads = [0, 0, top, left, 0, 0, bottom, right]
    else:
        pads = [0, top, left, 0, 0, bottom, right, 0]
    _pad(e, e.x(op, "X"), pads, e.out(op, "Out"), op.attr("mode"), op.attr("pad_value"))


@exports("pad_constant_like")
def _pad_constant_like(e: Emitter, op) -> None:
    """Y padded at the ends by Shape(X) - Shape(Y), known at run time."""
    x, y = e.x(op, "X"), e.x(op, "Y")
    extra = e.node("Sub", [e.node("Shape", [x]), e.node("Shape", [y])])
    pads = e.node("Concat", [e.const([0] * len(e.shape(y))), extra], axis=0)
    _pad(e, y, pads, e.out(op, "Out"), value=op.attr("pad_value"))


# -- index_select, index_sample, where_index, unique, scatter_nd_add, multiplex, shard_index --------


def _int64(e: Emitter, name: str) -> str:
    return name if e.dtype(name) == "int64" else e.node("Cast", [name], to=TensorProto.INT64)


@exports("index_select")
def _index_select(e: Emitter, op) -> None:
    x, index = e.x(op, "X"), e.node("Reshape", [_int64(e, e.x(op, "Index")), e.const([-1])])
    e.node("Gather", [x, index], e.out(op, "Out"), axis=normalize_axis(op.attr("dim"), len(e.shape(x))))


@exports("index_sample")
def _index_sample(e: Emitter, op) -> None:
    e.node("GatherElements", [e.x(op, "X"), _int64(e, e.x(op, "Index"))], e.out(op, "Out"), axis=1)


@exports("where_index")
def _where_index(e: Emitter, op) -> None:
    e.node("Transpose", [e.node("NonZero", [e.x(op, "Condition")])], e.out(op, "Out"), perm=[1, 0])


@exports("unique", "unique_with_counts")
def _unique(e: Emitter, op) -> None:
    """ONNX Unique with sorted=0 keeps the order of first appearance, as Paddle 1.8's kernel."""
    index_type = TensorProto.INT32 if e.dtype(e.out(op, "Index")) == "int32" else TensorProto.INT64
    outs = [e.out(op, "Out"), e.fresh("first"), e.fresh("inverse"), e.fresh("counts")]
    _, _, inverse, counts = e.node("Unique", [e.x(op, "X")], outs, sorted=0)
    e.node("Cast", [inverse], e.out(op, "Index"), to=index_type)
    if op.type == "unique_with_counts":
        e.node("Cast", [counts], e.out(op, "Count"), to=index_type)


@exports("scatter_nd_add")
def _scatter_nd_add(e: Emitter, op) -> None:
    inputs = [e.x(op, "X"), _int64(e, e.x(op, "Index")), e.x(op, "Updates")]
    e.node("ScatterND", inputs, e.out(op, "Out"), reduction="add")


@exports("multiplex")
def _multiplex(e: Emitter, op) -> None:
    """The inputs stacked on a new axis 0; row i gathered from the stack at Ids[i]."""
    xs, ids = e.xs(op, "X"), _int64(e, e.x(op, "Ids"))
    rank = len(e.shape(xs[0]))
    stacked = e.node("Concat", [e.node("Unsqueeze", [x, e.const([0])]) for x in xs], axis=0)
    index = e.node("Reshape", [ids, e.const([1, -1] + [1] * (rank - 1))])
    full = e.node("Concat", [e.const([1]), e.node("Shape", [xs[0]])], axis=0)
    picked = e.node("GatherElements", [stacked, e.node("Expand", [index, full])], axis=0)
    e.node("Squeeze", [picked, e.const([0])], e.out(op, "Out"))


@exports("shard_index")
def _shard_index(e: Emitter, op) -> None:
    x = e.x(op, "X")
    size = (op.attr("index_num") + op.attr("nshards") - 1) // op.attr("nshards")
    mine = e.node("Equal", [e.node("Div", [x, e.scalar(size, x)]), e.scalar(op.attr("shard_id"), x)])
    local = e.node("Sub", [x, e.scalar(op.attr("shard_id") * size, x)])
    e.node("Where", [mine, local, e.scalar(op.attr("ignore_value"), x)], e.out(op, "Out"))


# -- space_to_depth, pixel_shuffle, shuffle_channel, temporal_shift, unfold ------------------------


def _rearranged(e: Emitter, op, split, perm, joined) -> None:
    """Reshape to split(C, H, W), Transpose by perm, Reshape to joined(C, H, W); the batch dim is
    copied (Reshape's 0), the others need static sizes."""
    x = e.x(op, "X")
    _, c, h, w = _static(e, x, (1, 2, 3), op.type)
    parts = e.node("Reshape", [x, e.const([0, *split(c, h, w)])])
    moved = e.node("Transpose", [parts], perm=list(perm))
    e.node("Reshape", [moved, e.const([0, *joined(c, h, w)])], e.out(op, "Out"))


@exports("space_to_depth")
def _space_to_depth(e: Emitter, op) -> None:
    b = op.attr("blocksize")
    _rearranged(
        e,
        op,
        lambda c, h, w: (b, b, c // (b * b), h, w),
        (0, 3, 4, 1, 5, 2),
        lambda c, h, w: (c * b * b, h // b, w // b),
    )


@exports("pixel_shuffle")
def _pixel_shuffle(e: Emitter, op) -> None:
    r = op.attr("upscale_factor")
    _rearranged(
        e,
        op,
        lambda c, h, w: (c // (r * r), r, r, h, w),
        (0, 1, 4, 2, 5, 3),
        lambda c, h, w: (c // (r * r), h * r, w * r),
    )


@exports("shuffle_channel")
def _shuffle_channel(e: Emitter, op) -> None:
    g = op.attr("group")
    _rearranged(e, op, lambda c, h, w: (g, c // g, h, w), (0, 2, 1, 3, 4), lambda c, h, w: (c, h, w))


@exports("temporal_shift")
def _temporal_shift(e: Emitter, op) -> None:
    """Frames padded by one zero frame each side; channel ranges sliced from the frame before, the
    frame after, and the frame itself."""
    x, seg = e.x(op, "X"), op.attr("seg_num")
    _, c, h, w = _static(e, x, (1, 2, 3), "temporal_shift")
    c1, c2 = int(c * op.attr("shift_ratio")), int(c * 2 * op.attr("shift_ratio"))
    frames = e.node("Reshape", [x, e.const([-1, seg, c, h, w])])
    padded = e.fresh("padded")
    _pad(e, frames, [0, 1, 0, 0, 0, 0, 1, 0, 0, 0], padded, like=x)
    parts = [
        _slice(e, padded, [0, 0], [seg, c1], [1, 2]),
        _slice(e, padded, [2, c1], [seg + 2, c2], [1, 2]),
        _slice(e, padded, [1, c2], [seg + 1, c], [1, 2]),
    ]
    e.node("Reshape", [e.node("Concat", parts, axis=2), e.const([-1, c, h, w])], e.out(op, "Out"))


@exports("unfold")
def _unfold(e: Emitter, op) -> None:
    """im2col: per kernel offset, a strided Slice of the padded image; the offsets stacked after C."""
    x = e.x(op, "X")
    _, c, h, w = _static(e, x, (1, 2, 3), "unfold")
    (kh, kw), (sh, sw), (dh, dw) = op.attr("kernel_sizes"), op.attr("strides"), op.attr("dilations")
    top, left, bottom, right = op.attr("paddings")
    oh = (h + top + bottom - (dh * (kh - 1) + 1)) // sh + 1
    ow = (w + left + right - (dw * (kw - 1) + 1)) // sw + 1
    padded = e.fresh("padded")
    _pad(e, x, [0, 0, top, left, 0, 0, bottom, right], padded)
    columns = []
    for i in range(kh):
        for j in range(kw):
            starts, ends = [i * dh, j * dw], [i * dh + sh * (oh - 1) + 1, j * dw + sw * (ow - 1) + 1]
            columns.append(e.node("Unsqueeze", [_slice(e, padded, starts, ends, [2, 3], [sh, sw]), e.const([2])]))
    stacked = e.node("Concat", columns, axis=2)
    e.node("Reshape", [stacked, e.const([0, c * kh * kw, oh * ow])], e.out(op, "Y"))
