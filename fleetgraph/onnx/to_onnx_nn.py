"""Export rules of the layer ops: conv2d, pool2d, batch_norm, dropout, embeddings, top_k, sequence_pool."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, numpy_helper

from .emitter import DOMAIN, Emitter, UnsupportedOp, exports, onnx_dtype


def _onnx_pads(paddings) -> list[int]:
    """Paddle's [h, w] or [top, bottom, left, right] as ONNX's [top, left, bottom, right]."""
    p = [int(v) for v in paddings]
    top, bottom, left, right = (p[0], p[0], p[1], p[1]) if len(p) == 2 else p
    return [top, left, bottom, right]


def _window_attrs(op) -> dict:
    algorithm = op.attr("padding_algorithm")
    if op.attr("data_format") not in ("NCHW", "AnyLayout"):
        raise UnsupportedOp(f"data_format {op.attr('data_format')!r}; expected NCHW")
    if algorithm == "SAME":  # TensorFlow's SAME puts the odd pad at the end: ONNX's SAME_UPPER
        return {"auto_pad": "SAME_UPPER"}
    if algorithm == "VALID":
        return {"pads": [0, 0, 0, 0]}
    return {"pads": _onnx_pads(op.attr("paddings"))}


@exports("conv2d")
def _conv2d(e: Emitter, op) -> None:
    attrs = _window_attrs(op)
    if "auto_pad" not in attrs:
        attrs["dilations"] = list(op.attr("dilations"))
    e.node(
        "Conv",
        [e.x(op, "Input"), e.x(op, "Filter")],
        e.out(op, "Output"),
        strides=list(op.attr("strides")),
        group=op.attr("groups"),
        **attrs,
    )


@exports("pool2d")
def _pool2d(e: Emitter, op) -> None:
    x, out, is_max = e.x(op, "X"), e.out(op, "Out"), op.attr("pooling_type") == "max"
    ksize, strides = list(op.attr("ksize")), list(op.attr("strides"))
    if op.attr("adaptive") and not op.attr("global_pooling"):
        hw = e.shape(x)[2:]
        if ksize != [1, 1] and not all(n > 0 and n % o == 0 for n, o in zip(hw, ksize)):
            raise UnsupportedOp(f"adaptive pooling to {ksize} of X '{x}' {list(e.shape(x))}: expected even windows")
        if ksize != [1, 1]:  # even windows: a plain pooling, as the kernel runs it
            ksize = strides = [n // o for n, o in zip(hw, ksize)]
            e.node("MaxPool" if is_max else "AveragePool", [x], out, kernel_shape=ksize, strides=strides)
            return
    if op.attr("global_pooling") or op.attr("adaptive"):
        e.node("GlobalMaxPool" if is_max else "GlobalAveragePool", [x], out)
        return
    attrs = dict(_window_attrs(op), kernel_shape=ksize, strides=strides, ceil_mode=int(op.attr("ceil_mode")))
    if not is_max:
        attrs["count_include_pad"] = 0 if op.attr("exclusive") else 1
    e.node("MaxPool" if is_max else "AveragePool", [x], out, **attrs)


@exports("batch_norm", "sync_batch_norm")
def _batch_norm(e: Emitter, op) -> None:
    if not (op.attr("use_global_stats") or (op.attr("is_test") and not op.attr("trainable_statistics"))):
        raise UnsupportedOp("training mode (batch statistics); expected is_test (prune or clone(for_test=True))")
    if op.attr("data_layout") not in ("NCHW", "AnyLayout"):
        raise UnsupportedOp(f"data_layout {op.attr('data_layout')!r}; expected NCHW")
    inputs = [e.x(op, s) for s in ("X", "Scale", "Bias", "Mean", "Variance")]
    e.node("BatchNormalization", inputs, e.out(op, "Y"), epsilon=op.attr("epsilon"))
    for slot, src in (("MeanOut", "Mean"), ("VarianceOut", "Variance")):  # in test mode: the running stats
        if e.has_out(op, slot) and e.out(op, slot) != e.x(op, src):
            e.node("Identity", [e.x(op, src)], e.out(op, slot))


@exports("dropout")
def _dropout(e: Emitter, op) -> None:
    if not op.attr("is_test"):
        raise UnsupportedOp("training mode (a random mask); expected is_test (prune or clone(for_test=True))")
    x, out = e.x(op, "X"), e.out(op, "Out")
    if op.attr("dropout_implementation") == "upscale_in_train":
        e.node("Identity", [x], out)
    else:
        e.node("Mul", [x, e.scalar(1.0 - op.attr("dropout_prob"), x)], out)


@exports("lookup_table", "lookup_table_v2")
def _lookup_table(e: Emitter, op) -> None:
    if op.attr("is_distributed"):
        raise UnsupportedOp("a distributed table lives on the pservers; expected a local embedding")
    w, ids = e.x(op, "W"), e.x(op, "Ids")
    if op.type == "lookup_table":  # ids [..., 1]
        ids = e.node("Squeeze", [ids, e.const([-1])])
    pad = op.attr("padding_idx")
    if pad == -1:
        e.node("Gather", [w, ids], e.out(op, "Out"), axis=0)
        return
    rows = e.node("Gather", [w, ids], axis=0)
    is_pad = e.node("Equal", [ids, e.const(np.asarray(pad, dtype=e.dtype(e.x(op, "Ids"))))])
    keep = e.node("Sub", [e.scalar(1, w), e.node("Cast", [is_pad], to=onnx_dtype(e.dtype(w)))])  # 1 - (id == pad)
    keep = e.node("Unsqueeze", [keep, e.const([-1])])
    e.node("Mul", [rows, keep], e.out(op, "Out"))


@exports("top_k", "top_k_v2")
def _top_k(e: Emitter, op) -> None:
    axis = op.attr("axis") if op.type == "top_k_v2" else -1
    largest = int(op.attr("largest")) if op.type == "top_k_v2" else 1
    indices = e.out(op, "Indices") if e.has_out(op, "Indices") else e.fresh("indices")
    e.node(
        "TopK",
        [e.x(op, "X"), e.const([op.attr("k")])],
        [e.out(op, "Out"), indices],
        axis=axis,
        largest=largest,
        sorted=1,
    )


@exports("sequence_pool")
def _sequence_pool(e: Emitter, op) -> None:
    """A call of the model-local function fleetgraph.sequence_pool_<type>(X, LOD, PAD), X's LoD
    offsets coming from an extra graph input `<feed>@LOD` (load maps the call back to one op)."""
    kind, x = op.attr("pooltype"), e.x(op, "X")
    if kind not in _POOL_TYPES:
        raise UnsupportedOp(f"pooltype {kind!r}; expected one of {', '.join(_POOL_TYPES)}")
    name = e.function(f"sequence_pool_{kind.lower()}", ["X", "LOD", "PAD"], ["Out"], lambda f: _pool_body(f, kind))
    pad = e.scalar(op.attr("pad_value"), x)
    e.node(name, [x, e.lod(op, "X"), pad], e.out(op, "Out"), domain=DOMAIN)


_POOL_TYPES = ("SUM", "AVERAGE", "SQRT", "MAX", "FIRST", "LAST")


def _pool_body(f, kind: str) -> None:
    """Row r belongs to the sequence counting the ends at or before r; ScatterND adds (or takes the
    max of) each row into its sequence; an empty sequence gets PAD."""
    starts = f.node("Slice", ["LOD", f.const([0]), f.const([-1])])
    ends = f.node("Slice", ["LOD", f.const([1]), f.const([2**62])])
    lengths = f.node("Sub", [ends, starts])
    count = f.node("Shape", [lengths])
    rows = f.node("Squeeze", [f.node("Shape", ["X"], start=0, end=1), f.const([0])])
    tail = f.node("Shape", ["X"], start=1)
    # [sequences, 1, 1, ...]: a per-sequence value broadcast over a row's dims
    column = f.node("Concat", [count, f.node("ConstantOfShape", [f.node("Shape", [tail])], value=_one64())], axis=0)
    if kind in ("FIRST", "LAST"):
        at = starts if kind == "FIRST" else f.node("Sub", [ends, f.const([1])])
        last = f.node("Max", [f.node("Sub", [rows, f.const(1)]), f.const(0)])
        pooled = f.node("Gather", ["X", f.node("Clip", [at, f.const(0), last])], axis=0)
    else:
        row_ids = f.node("Range", [f.const(0), rows, f.const(1)])
        ended = f.node(
            "GreaterOrEqual", [f.node("Unsqueeze", [row_ids, f.const([1])]), f.node("Unsqueeze", [ends, f.const([0])])]
        )
        sequence = f.node("ReduceSum", [f.node("Cast", [ended], to=TensorProto.INT64), f.const([1])], keepdims=1)
        start = f.node("CastLike", [f.const(np.float32(-np.inf if kind == "MAX" else 0.0)), "X"])
        base = f.node("Expand", [start, f.node("Concat", [count, tail], axis=0)])
        pooled = f.node("ScatterND", [base, sequence, "X"], reduction="max" if kind == "MAX" else "add")
        if kind in ("AVERAGE", "SQRT"):
            n = f.node("CastLike", [f.node("Max", [lengths, f.const([1])]), "X"])
            n = f.node("Sqrt", [n]) if kind == "SQRT" else n
            pooled = f.node("Div", [pooled, f.node("Reshape", [n, column])])
    nonempty = f.node("Reshape", [f.node("Greater", [lengths, f.const([0])]), column])
    f.node("Where", [nonempty, pooled, "PAD"], "Out")


def _one64():
    return numpy_helper.from_array(np.ones(1, np.int64))
