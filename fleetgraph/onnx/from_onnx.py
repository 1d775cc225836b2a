"""Import rules: each ONNX op type as the fleetgraph ops that compute it."""

from __future__ import annotations

import numpy as np
from onnx import helper

from .builder import Builder, Unsupported, imports

_BINARY = {"Add": "elementwise_add", "Sub": "elementwise_sub", "Mul": "elementwise_mul", "Div": "elementwise_div"}
_BINARY.update(Pow="elementwise_pow", Min="elementwise_min", Max="elementwise_max")
_BINARY.update(Less="less_than", LessOrEqual="less_equal", Greater="greater_than", GreaterOrEqual="greater_equal")
_BINARY.update(Equal="equal")


@imports(*_BINARY)
def _binary(b: Builder, node, attrs) -> None:  # NumPy broadcasting is Paddle's axis=-1
    if len(node.input) != 2:  # Min and Max take any number
        raise Unsupported(f"{len(node.input)} inputs; expected 2")
    a, c = node.input
    b.op(_BINARY[node.op_type], {"X": a, "Y": c}, {"Out": node.output[0]}, {"axis": -1})


_UNARY = {"Relu": "relu", "Sigmoid": "sigmoid", "Tanh": "tanh", "Identity": "assign", "Exp": "exp", "Log": "log"}
_UNARY.update(Sqrt="sqrt", Abs="abs", Floor="floor", Ceil="ceil", Cos="cos", Sign="sign")


@imports(*_UNARY)
def _unary(b: Builder, node, attrs) -> None:
    b.op(_UNARY[node.op_type], {"X": node.input[0]}, {"Out": node.output[0]})


def _softmax_axis(b: Builder, node, attrs) -> int:
    rank = len(b.shape(node.input[0]))
    axis = attrs.get("axis", -1 if b.opset >= 13 else 1)
    if b.opset < 13 and axis % rank != rank - 1:  # before opset 13 the input is flattened at axis
        raise Unsupported(f"axis {axis} of a rank-{rank} input at opset {b.opset}; expected the last axis")
    return axis


@imports("Softmax")
def _softmax(b: Builder, node, attrs) -> None:
    b.op("softmax", {"X": node.input[0]}, {"Out": node.output[0]}, {"axis": _softmax_axis(b, node, attrs)})


@imports("LogSoftmax")
def _log_softmax(b: Builder, node, attrs) -> None:
    b.op("log_softmax", {"X": node.input[0]}, {"Out": node.output[0]}, {"axis": _softmax_axis(b, node, attrs)})


@imports("MatMul")
def _matmul(b: Builder, node, attrs) -> None:
    b.op("matmul", {"X": node.input[0], "Y": node.input[1]}, {"Out": node.output[0]})


@imports("Gemm")
def _gemm(b: Builder, node, attrs) -> None:
    """alpha * A' B' + beta * C: a matmul, a scale of C when beta is not 1, an add."""
    has_c = len(node.input) > 2 and node.input[2]
    product = b.temp() if has_c else node.output[0]
    b.op(
        "matmul",
        {"X": node.input[0], "Y": node.input[1]},
        {"Out": product},
        {
            "transpose_X": bool(attrs.get("transA", 0)),
            "transpose_Y": bool(attrs.get("transB", 0)),
            "alpha": attrs.get("alpha", 1.0),
        },
    )
    if not has_c:
        return
    c, beta = node.input[2], attrs.get("beta", 1.0)
    if beta != 1.0:
        scaled = b.temp(b.dtype(c))
        b.op("scale", {"X": c}, {"Out": scaled}, {"scale": beta})
        c = scaled
    b.op("elementwise_add", {"X": product, "Y": c}, {"Out": node.output[0]}, {"axis": -1})


def _paddle_pads(attrs) -> list[int]:
    """ONNX's [top, left, bottom, right] as Paddle's [top, bottom, left, right]."""
    top, left, bottom, right = attrs.get("pads", [0, 0, 0, 0])
    return [top, bottom, left, right]


def _padding(attrs, what: str) -> dict:
    auto = attrs.get("auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else auto
    if auto in ("NOTSET", ""):
        return {"paddings": _paddle_pads(attrs), "padding_algorithm": "EXPLICIT"}
    if auto == "VALID":
        return {"paddings": [0, 0], "padding_algorithm": "VALID"}
    if auto == "SAME_UPPER":
        return {"paddings": [0, 0], "padding_algorithm": "SAME"}
    raise Unsupported(f"{what} auto_pad {auto}; expected NOTSET, VALID or SAME_UPPER")


def _check_2d(b: Builder, name: str, what: str) -> None:
    if len(b.shape(name)) != 4:
        raise Unsupported(f"{what} of a rank-{len(b.shape(name))} input; expected NCHW (rank 4)")


@imports("Conv")
def _conv(b: Builder, node, attrs) -> None:
    x, w = node.input[0], node.input[1]
    _check_2d(b, x, "Conv")
    has_bias = len(node.input) > 2 and node.input[2]
    out = b.temp(b.dtype(x)) if has_bias else node.output[0]
    strides, dilations = list(attrs.get("strides", [1, 1])), list(attrs.get("dilations", [1, 1]))
    padding = _padding(attrs, "Conv")
    if padding["padding_algorithm"] == "SAME" and dilations != [1, 1]:  # Paddle's SAME drops dilations
        padding = _dilated_same_pads(b, x, w, strides, dilations)
    conv_attrs = {"strides": strides, "dilations": dilations, "groups": attrs.get("group", 1), **padding}
    b.op("conv2d", {"Input": x, "Filter": w}, {"Output": out}, conv_attrs)
    if has_bias:  # [C] added along the channels
        b.op("elementwise_add", {"X": out, "Y": node.input[2]}, {"Out": node.output[0]}, {"axis": 1})


def _dilated_same_pads(b: Builder, x: str, w: str, strides: list, dilations: list) -> dict:
    """ONNX's SAME_UPPER for a dilated kernel as explicit pads: ceil(size / stride) outputs, the odd
    pad at the end (Paddle's SAME, which the conv2d kernel runs, ignores the dilations)."""
    sizes, kernel = b.shape(x)[2:], b.shape(w)[2:]
    if any(n < 0 for n in sizes):
        raise Unsupported(f"auto_pad SAME_UPPER, dilations {dilations}, X {list(b.shape(x))}: expected static H, W")
    pads = []
    for n, k, s, d in zip(sizes, kernel, strides, dilations):
        total = max((-(-n // s) - 1) * s + (k - 1) * d + 1 - n, 0)
        pads += [total // 2, total - total // 2]
    return {"paddings": pads, "padding_algorithm": "EXPLICIT"}


@imports("BatchNormalization")
def _batch_norm(b: Builder, node, attrs) -> None:
    """Inference: the running statistics normalize (a fine-tuned model keeps them as they are)."""
    if attrs.get("training_mode", 0):
        raise Unsupported("training_mode 1; expected an inference model's BatchNormalization")
    x, scale, bias, mean, var = node.input[:5]
    mean_v, var_v = b.var(mean, trainable=False), b.var(var, trainable=False)
    outputs = {"Y": node.output[0], "MeanOut": mean_v.name, "VarianceOut": var_v.name}
    outputs.update(SavedMean=b.temp(b.dtype(x)), SavedVariance=b.temp(b.dtype(x)))
    b.op(
        "batch_norm",
        {"X": x, "Scale": scale, "Bias": bias, "Mean": mean, "Variance": var},
        outputs,
        {"epsilon": attrs.get("epsilon", 1e-5), "is_test": True, "use_global_stats": True},
    )


@imports("MaxPool", "AveragePool")
def _pool(b: Builder, node, attrs) -> None:
    x = node.input[0]
    _check_2d(b, x, node.op_type)
    if any(d != 1 for d in attrs.get("dilations", [1, 1])):
        raise Unsupported(f"dilations {attrs['dilations']}; expected 1")
    if len(node.output) > 1 and node.output[1]:
        raise Unsupported("the Indices output; expected only Y")
    kernel = list(attrs["kernel_shape"])
    pool_attrs = {
        "pooling_type": "max" if node.op_type == "MaxPool" else "avg",
        "ksize": kernel,
        "strides": list(attrs.get("strides", [1, 1])),
        "ceil_mode": bool(attrs.get("ceil_mode", 0)),
        "exclusive": not attrs.get("count_include_pad", 0),
        **_padding(attrs, node.op_type),
    }
    b.op("pool2d", {"X": x}, {"Out": node.output[0]}, pool_attrs)


@imports("GlobalAveragePool", "GlobalMaxPool")
def _global_pool(b: Builder, node, attrs) -> None:
    _check_2d(b, node.input[0], node.op_type)
    kind = "avg" if node.op_type == "GlobalAveragePool" else "max"
    attrs = {"pooling_type": kind, "ksize": [1, 1], "global_pooling": True}
    b.op("pool2d", {"X": node.input[0]}, {"Out": node.output[0]}, attrs)


def _reshape(b: Builder, x: str, out: str, shape) -> None:
    b.op("reshape2", {"X": x}, {"Out": out}, {"shape": [int(d) for d in shape]})


@imports("Reshape")
def _reshape_node(b: Builder, node, attrs) -> None:
    shape = b.value(node.input[1], "Reshape shape").tolist()
    if attrs.get("allowzero", 0) and 0 in shape:
        raise Unsupported("allowzero 1 with a 0 in the shape; expected 0 to copy the input's dim")
    _reshape(b, node.input[0], node.output[0], shape)


@imports("Flatten")
def _flatten(b: Builder, node, attrs) -> None:
    """[prod(dims before axis), prod(dims from axis)], a negative axis counting from the back; the
    side with a dim known only at run time is the reshape's -1 (or 0, a lone leading dim)."""
    shape = list(b.shape(node.input[0]))
    axis = attrs.get("axis", 1)
    axis = axis + len(shape) if axis < 0 else axis
    lead, rest = shape[:axis], shape[axis:]
    if all(d >= 0 for d in rest):
        target = [-1, int(np.prod(rest))]
    elif axis == 1:
        target = [0, -1]
    elif all(d >= 0 for d in lead):
        target = [int(np.prod(lead)), -1]
    else:
        raise Unsupported(f"Flatten at axis {axis} of {shape}: expected the dims on one side of it static")
    _reshape(b, node.input[0], node.output[0], target)


def _restack(b: Builder, x: str, out: str, target: list[tuple[int, int | None]]) -> None:
    """Reshape to `target`, (dim, index of that dim in the input or None) pairs: a dim known only at
    run time is copied with 0 when it keeps its index, else it is the one -1."""
    shape = [d if d >= 0 else (0 if src == i else -1) for i, (d, src) in enumerate(target)]
    if shape.count(-1) > 1:
        raise Unsupported(
            f"{list(b.shape(x))} into {[d for d, _ in target]}: more than one dim known only at run time moves"
        )
    _reshape(b, x, out, shape or [1])


def _axes(b: Builder, node, attrs) -> list[int]:
    if len(node.input) > 1 and node.input[1]:
        return [int(a) for a in b.value(node.input[1], f"{node.op_type} axes")]
    return [int(a) for a in attrs.get("axes", [])]


@imports("Squeeze")
def _squeeze(b: Builder, node, attrs) -> None:
    src = list(b.shape(node.input[0]))
    axes = {a % len(src) for a in _axes(b, node, attrs)} or {i for i, d in enumerate(src) if d == 1}
    target = [(d, i) for i, d in enumerate(src) if i not in axes]
    _restack(b, node.input[0], node.output[0], target or [(1, None)])


@imports("Unsqueeze")
def _unsqueeze(b: Builder, node, attrs) -> None:
    src = list(b.shape(node.input[0]))
    rank = len(src) + len(_axes(b, node, attrs))
    axes = sorted(a % rank for a in _axes(b, node, attrs))
    rest = iter(enumerate(src))
    target = [(1, None) if i in axes else next(rest)[::-1] for i in range(rank)]
    _restack(b, node.input[0], node.output[0], target)


@imports("Transpose")
def _transpose(b: Builder, node, attrs) -> None:
    perm = attrs.get("perm") or list(reversed(range(len(b.shape(node.input[0])))))
    b.op("transpose2", {"X": node.input[0]}, {"Out": node.output[0]}, {"axis": list(perm)})


@imports("Concat")
def _concat(b: Builder, node, attrs) -> None:
    b.op("concat", {"X": list(node.input)}, {"Out": node.output[0]}, {"axis": attrs["axis"]})


@imports("Split")
def _split(b: Builder, node, attrs) -> None:
    axis = attrs.get("axis", 0)
    if len(node.input) > 1 and node.input[1]:
        sections = [int(s) for s in b.value(node.input[1], "Split split")]
    else:
        sections = [int(s) for s in attrs.get("split", [])]
    split_attrs = {"axis": axis, "sections": sections} if sections else {"axis": axis, "num": len(node.output)}
    b.op("split", {"X": node.input[0]}, {"Out": list(node.output)}, split_attrs)


@imports("Gather")
def _gather(b: Builder, node, attrs) -> None:
    """Rows of the data (axis 0) looked up as an embedding; data of another rank is seen as
    [rows, -1] and the looked-up rows reshaped back."""
    data, ids = node.input
    if attrs.get("axis", 0) != 0:
        raise Unsupported(f"axis {attrs['axis']}; expected 0 (rows, as an embedding looks up)")
    shape = list(b.shape(data))
    if len(shape) == 2:
        b.op("lookup_table_v2", {"W": data, "Ids": ids}, {"Out": node.output[0]})
        return
    if any(d < 0 for d in shape[1:]):
        raise Unsupported(f"data {shape}: expected static dims after the first")
    table, rows = b.temp(b.dtype(data)), b.temp(b.dtype(data))
    _reshape(b, data, table, [shape[0] if shape[0] >= 0 else -1, int(np.prod(shape[1:]))])
    b.op("lookup_table_v2", {"W": table, "Ids": ids}, {"Out": rows})
    lead = list(enumerate(b.shape(ids)))  # the looked-up rows keep the ids' dims in front
    _restack(b, rows, node.output[0], [(d, i) for i, d in lead] + [(d, None) for d in shape[1:]])


@imports("ReduceMean", "ReduceSum")
def _reduce(b: Builder, node, attrs) -> None:
    axes = _axes(b, node, attrs)
    if not axes and attrs.get("noop_with_empty_axes", 0):
        b.op("assign", {"X": node.input[0]}, {"Out": node.output[0]})
        return
    keep = bool(attrs.get("keepdims", 1))
    kind = "reduce_mean" if node.op_type == "ReduceMean" else "reduce_sum"
    b.op(
        kind,
        {"X": node.input[0]},
        {"Out": node.output[0]},
        {"dim": axes or [0], "keep_dim": keep, "reduce_all": not axes},
    )


@imports("Cast")
def _cast(b: Builder, node, attrs) -> None:
    out = str(helper.tensor_dtype_to_np_dtype(attrs["to"]))
    b.op("cast", {"X": node.input[0]}, {"Out": node.output[0]}, {"in_dtype": b.dtype(node.input[0]), "out_dtype": out})


@imports("Dropout")
def _dropout(b: Builder, node, attrs) -> None:
    """An inference graph's Dropout passes its input through (training_mode, if given, must be false)."""
    if len(node.input) > 2 and node.input[2] and bool(b.value(node.input[2], "Dropout training_mode")):
        raise Unsupported("training_mode true; expected an inference graph")
    if len(node.output) > 1 and node.output[1]:
        raise Unsupported("the mask output; expected only the output")
    b.op("assign", {"X": node.input[0]}, {"Out": node.output[0]})


@imports("fleetgraph.sequence_pool_sum", "fleetgraph.sequence_pool_average", "fleetgraph.sequence_pool_sqrt")
@imports("fleetgraph.sequence_pool_max", "fleetgraph.sequence_pool_first", "fleetgraph.sequence_pool_last")
def _sequence_pool(b: Builder, node, attrs) -> None:
    """fleetgraph's own export of sequence_pool: X's LoD travels with X (a LoD feed), so the
    offsets input is not read again."""
    x, _, pad = node.input
    kind = node.op_type.removeprefix("sequence_pool_").upper()
    outputs = {"Out": node.output[0]}
    if kind == "MAX":
        outputs["MaxIndex"] = b.temp("int32")
    attrs = {"pooltype": kind, "is_test": True, "pad_value": float(b.value(pad, "sequence_pool pad value"))}
    b.op("sequence_pool", {"X": x}, outputs, attrs)


@imports("Sum")
def _sum(b: Builder, node, attrs) -> None:
    b.op("sum", {"X": list(node.input)}, {"Out": node.output[0]})


@imports("Where")
def _where(b: Builder, node, attrs) -> None:
    cond, x, y = node.input
    b.op("where", {"Condition": cond, "X": x, "Y": y}, {"Out": node.output[0]})


@imports("Clip")
def _clip(b: Builder, node, attrs) -> None:
    bounds = [node.input[i] if len(node.input) > i and node.input[i] else None for i in (1, 2)]
    lo, hi = (float(b.value(n, "Clip bound")) if n else None for n in bounds)
    lo = attrs.get("min", -3.4e38) if lo is None else lo
    hi = attrs.get("max", 3.4e38) if hi is None else hi
    b.op("clip", {"X": node.input[0]}, {"Out": node.output[0]}, {"min": lo, "max": hi})


@imports("Slice")
def _slice(b: Builder, node, attrs) -> None:
    x, rank = node.input[0], len(b.shape(node.input[0]))
    if b.opset < 10:  # the bounds were attributes
        starts, ends = list(attrs["starts"]), list(attrs["ends"])
        axes = list(attrs.get("axes", range(len(starts))))
    else:
        starts, ends = (b.value(n, "Slice bound").tolist() for n in node.input[1:3])
        axes = (
            b.value(node.input[3], "Slice axes").tolist()
            if len(node.input) > 3 and node.input[3]
            else list(range(len(starts)))
        )
    if len(node.input) > 4 and node.input[4] and any(s != 1 for s in b.value(node.input[4], "Slice steps").tolist()):
        raise Unsupported("steps other than 1; expected contiguous slices")
    clamp = [min(max(int(v), -(2**62)), 2**62) for v in ends]
    attrs = {"axes": [a % rank for a in axes], "starts": [int(v) for v in starts], "ends": clamp}
    b.op("slice", {"Input": x}, {"Out": node.output[0]}, attrs)


@imports("TopK")
def _top_k(b: Builder, node, attrs) -> None:
    k = int(attrs["k"] if b.opset < 10 else b.value(node.input[1], "TopK k").reshape(-1)[0])  # an attr before 10
    outputs = {"Out": node.output[0], "Indices": node.output[1] if len(node.output) > 1 else b.temp("int64")}
    if not outputs["Indices"]:
        outputs["Indices"] = b.temp("int64")
    if not b.block.has_var(outputs["Indices"]):
        b.temp("int64", outputs["Indices"])
    topk_attrs = {"k": k, "axis": attrs.get("axis", -1), "largest": bool(attrs.get("largest", 1)), "sorted": True}
    b.op("top_k_v2", {"X": node.input[0]}, outputs, topk_attrs)
