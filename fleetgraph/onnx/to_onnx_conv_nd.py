"""Export rules of ops/conv_nd.py: conv3d and depthwise_conv2d (Conv), the transposed convolutions
(ConvTranspose), pool3d (MaxPool/AveragePool) and max_pool{2,3}d_with_index (MaxPool's Indices, made
per-plane as Paddle's Mask). Channel-last layouts are refused: ONNX's windows run over NC* only."""

from __future__ import annotations

import math

from onnx import TensorProto

from ..ops._window import resolve_pads
from ..ops.conv import conv_geometry
from .emitter import Emitter, UnsupportedOp, exports


def _channel_first(op) -> None:
    if op.attr("data_format") not in ("NCHW", "NCDHW", "AnyLayout"):
        raise UnsupportedOp(f"data_format {op.attr('data_format')!r}; expected channels first (NCHW or NCDHW)")


def _onnx_pads(pads: list[int]) -> list[int]:
    """Paddle's [before, after] per axis as ONNX's [all befores, all afters]."""
    return pads[0::2] + pads[1::2]


def _known_sizes(e: Emitter, name: str, what: str) -> list[int]:
    sizes = list(e.shape(name)[2:])
    if any(n < 0 for n in sizes):
        raise UnsupportedOp(f"{what} of '{name}' {list(e.shape(name))}: expected known spatial sizes")
    return sizes


@exports("conv3d", "depthwise_conv2d")
def _conv(e: Emitter, op) -> None:
    _channel_first(op)
    x, w = e.x(op, "Input"), e.x(op, "Filter")
    nd = len(e.shape(w)) - 2
    if op.attr("padding_algorithm") == "SAME":  # TensorFlow's SAME puts the odd pad at the end: SAME_UPPER
        attrs = {"auto_pad": "SAME_UPPER"}
    else:
        pads, dils = conv_geometry(
            [0] * nd,
            e.shape(w)[2:],
            op.attr("strides"),
            op.attr("paddings"),
            op.attr("dilations"),
            op.attr("padding_algorithm"),
        )
        attrs = {"pads": _onnx_pads(pads), "dilations": dils}
    e.node("Conv", [x, w], e.out(op, "Output"), strides=list(op.attr("strides")), group=op.attr("groups"), **attrs)


@exports("conv2d_transpose", "depthwise_conv2d_transpose", "conv3d_transpose")
def _conv_transpose(e: Emitter, op) -> None:
    """ConvTranspose with explicit pads (SAME's from the input's sizes, as Paddle's) and the
    output_padding that makes output_size."""
    _channel_first(op)
    x, w = e.x(op, "Input"), e.x(op, "Filter")
    k, strides = list(e.shape(w)[2:]), list(op.attr("strides"))
    sizes = _known_sizes(e, x, op.type) if op.attr("padding_algorithm") == "SAME" else [0] * len(k)
    pads, dils = conv_geometry(
        sizes, k, strides, op.attr("paddings"), op.attr("dilations"), op.attr("padding_algorithm")
    )
    attrs = {}
    if op.attr("output_size"):
        sizes = _known_sizes(e, x, "output_size")
        least = [
            (n - 1) * strides[i] - pads[2 * i] - pads[2 * i + 1] + dils[i] * (k[i] - 1) + 1 for i, n in enumerate(sizes)
        ]
        attrs["output_padding"] = [int(o) - m for o, m in zip(op.attr("output_size"), least)]
    e.node(
        "ConvTranspose",
        [x, w],
        e.out(op, "Output"),
        strides=strides,
        dilations=dils,
        group=op.attr("groups"),
        kernel_shape=k,
        pads=_onnx_pads(pads),
        **attrs,
    )


def _even_adaptive(e: Emitter, x: str, out_sizes) -> list[int]:
    """The kernel (= stride) of an adaptive pooling whose windows are even, as the kernel runs it."""
    sizes = _known_sizes(e, x, "adaptive pooling")
    if any(n % o for n, o in zip(sizes, out_sizes)):
        raise UnsupportedOp(f"adaptive pooling to {list(out_sizes)} of '{x}' {list(e.shape(x))}: expected even windows")
    return [n // o for n, o in zip(sizes, out_sizes)]


@exports("pool3d")
def _pool3d(e: Emitter, op) -> None:
    _channel_first(op)
    x, out, is_max = e.x(op, "X"), e.out(op, "Out"), op.attr("pooling_type") == "max"
    if op.attr("global_pooling"):  # a reduction: onnx's reference evaluator mis-shapes 5-D GlobalMaxPool
        e.node("ReduceMax" if is_max else "ReduceMean", [x, e.const([2, 3, 4])], out, keepdims=1)
        return
    kind = "MaxPool" if is_max else "AveragePool"
    if op.attr("adaptive"):
        k = _even_adaptive(e, x, op.attr("ksize"))
        e.node(kind, [x], out, kernel_shape=k, strides=k)
        return
    k, strides = list(op.attr("ksize")), list(op.attr("strides"))
    sizes = _known_sizes(e, x, "SAME pooling") if op.attr("padding_algorithm") == "SAME" else [0] * 3
    pads = resolve_pads(op.attr("padding_algorithm"), op.attr("paddings"), sizes, k, strides)
    attrs = {"kernel_shape": k, "strides": strides, "pads": _onnx_pads(pads), "ceil_mode": int(op.attr("ceil_mode"))}
    if not is_max:
        attrs["count_include_pad"] = 0 if op.attr("exclusive") else 1
    e.node(kind, [x], out, **attrs)


@exports("max_pool2d_with_index", "max_pool3d_with_index")
def _max_pool_with_index(e: Emitter, op) -> None:
    """MaxPool's Indices count over the whole [N, C, *sizes] tensor; Paddle's Mask within one plane:
    their remainder by the plane's size, as int32."""
    x = e.x(op, "X")
    sizes = _known_sizes(e, x, op.type)
    if op.attr("global_pooling"):
        k, strides, pads = sizes, [1] * len(sizes), [0] * len(sizes)
    elif op.attr("adaptive"):
        k = _even_adaptive(e, x, op.attr("ksize"))
        strides, pads = k, [0] * len(sizes)
    else:
        k, strides, pads = list(op.attr("ksize")), list(op.attr("strides")), list(op.attr("paddings"))
    indices = e.fresh("indices")
    e.node("MaxPool", [x], [e.out(op, "Out"), indices], kernel_shape=k, strides=strides, pads=pads + pads)
    plane = e.node("Mod", [indices, e.const([math.prod(sizes)])])
    e.node("Cast", [plane], e.out(op, "Mask"), to=TensorProto.INT32)
