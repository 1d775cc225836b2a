"""The node forms that changed between opsets 9 and 18, each rewritten from the form the export rules
write (OPSET's) to the older one: `REWRITES[op_type](lo, node)` returns the nodes replacing `node` at
`lo.opset` (each lowered again), or None where the node's form is already the opset's. `lo` is the
pass of opsets.py: `make` a node, `const` a constant, `value` of a constant input, `rank` of a value."""

from __future__ import annotations

import numpy as np
from onnx import helper


class Refused(Exception):
    """A node with no form at the opset asked for (the pass adds which op wrote it)."""


def _attrs(node) -> dict:
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _input(node, i: int) -> str:
    return node.input[i] if len(node.input) > i else ""


def _ints(array) -> list[int]:
    return [int(v) for v in np.asarray(array).reshape(-1)]


def _attributes_before(since: int, slots, check=None):
    """Inputs that were attributes before `since`: (input index, attribute, its value from the
    constant) per slot; `check(lo, node)` refuses what the older form cannot say."""

    def rewrite(lo, node):
        if check is not None:
            check(lo, node)
        if lo.opset >= since or len(node.input) < 2:
            return None
        attrs = _attrs(node)
        for i, key, convert in slots:
            value = lo.value(node, i, key)
            if value is not None:
                attrs[key] = convert(value)
        return [lo.make(node, node.op_type, node.input[:1], node.output, **attrs)]

    return rewrite


_AXES = ((1, "axes", _ints),)


def _split(lo, node):
    """num_outputs from 18 (before it, no sizes split evenly); the sizes an attribute before 13."""
    attrs = _attrs(node)
    if lo.opset >= 18 or ("num_outputs" not in attrs and (lo.opset >= 13 or not _input(node, 1))):
        return None
    attrs.pop("num_outputs", None)
    sizes = lo.value(node, 1, "split") if lo.opset < 13 else None
    if sizes is not None:
        attrs["split"] = _ints(sizes)
    return [lo.make(node, "Split", node.input[: 1 if lo.opset < 13 else 2], node.output, **attrs)]


def _unit_steps(lo, node) -> None:
    steps = lo.value(node, 4, "steps") if lo.opset < 10 else None
    if steps is not None and any(v != 1 for v in _ints(steps)):
        raise Refused("ONNX Slice with steps needs opset 10")


def _no_pad_axes(lo, node) -> None:
    if lo.opset < 18 and _input(node, 3):
        raise Refused("ONNX Pad with axes needs opset 18")


def _softmax(lo, node):
    """Before 13 the input is flattened to 2-D at axis: the last axis is the same, any other axis is
    moved last and back."""
    if lo.opset >= 13:
        return None
    attrs, x = _attrs(node), node.input[0]
    axis = attrs.get("axis", -1)
    if x not in lo.ranks and axis == -1 and lo.opset >= 11:
        return None  # flattened at the last axis: the last axis' softmax
    rank = lo.rank(x, node)
    axis %= rank
    if axis == rank - 1:
        return None if "axis" in attrs else [lo.make(node, node.op_type, [x], node.output, axis=rank - 1)]
    perm = list(range(rank))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    moved = lo.make(node, "Transpose", [x], perm=perm)
    normed = lo.make(node, node.op_type, moved.output, axis=rank - 1)
    lo.ranks[moved.output[0]] = lo.ranks[normed.output[0]] = rank
    return [moved, normed, lo.make(node, "Transpose", normed.output, node.output, perm=perm)]


def _shape(lo, node):
    """start and end from 15: before, the whole shape sliced."""
    attrs = _attrs(node)
    if lo.opset >= 15 or not attrs:
        return None
    whole = lo.make(node, "Shape", node.input)
    lo.ranks[whole.output[0]] = 1
    bounds = [
        lo.const([attrs.get("start", 0)], np.int64),
        lo.const([attrs.get("end", np.iinfo(np.int64).max)], np.int64),
    ]
    return [whole, lo.make(node, "Slice", [whole.output[0], *bounds, lo.const([0], np.int64)], node.output)]


def _or_equal(strict: str):
    """LessOrEqual and GreaterOrEqual come at 12: the strict comparison or Equal."""

    def rewrite(lo, node):
        if lo.opset >= 12:
            return None
        first, same = lo.make(node, strict, node.input), lo.make(node, "Equal", node.input)
        return [first, same, lo.make(node, "Or", [first.output[0], same.output[0]], node.output)]

    return rewrite


def _resize(lo, node):
    """axes come at 18 (before, sizes of every dim: the others' taken from X's shape); roi and
    scales must be given (empty) before 13; below 11 Resize had no sizes or coordinate modes."""
    if lo.opset >= 18:
        return None
    if lo.opset < 11:
        raise Refused("ONNX Resize with sizes and coordinate_transformation_mode needs opset 11")
    attrs = _attrs(node)
    axes = attrs.pop("axes", None)
    x, roi, scales, sizes = (_input(node, i) for i in range(4))
    if axes is None and (lo.opset >= 13 or (roi and scales)):
        return None
    nodes = []
    if axes is not None:
        if not sizes:
            raise Refused("ONNX Resize with axes and scales needs opset 18")
        rank = lo.rank(x, node)
        axes = [a % rank for a in axes]
        shape = lo.make(node, "Shape", [x])
        both = lo.make(node, "Concat", [shape.output[0], sizes], axis=0)
        index = [rank + axes.index(i) if i in axes else i for i in range(rank)]
        full = lo.make(node, "Gather", [both.output[0], lo.const(index, np.int64)], axis=0)
        nodes, sizes = [shape, both, full], full.output[0]
    if lo.opset < 13:
        roi, scales = roi or lo.const(np.zeros(0, np.float32)), scales or lo.const(np.zeros(0, np.float32))
    return nodes + [lo.make(node, "Resize", [x, roi, scales, sizes], node.output, **attrs)]


def _layer_normalization(lo, node):
    """LayerNormalization comes at 17: before, (x - mean) / sqrt(var + epsilon) * scale + bias over
    the axes from axis on."""
    if lo.opset >= 17:
        return None
    if any(node.output[1:]):
        raise Refused("ONNX LayerNormalization's Mean and InvStdDev outputs need opset 17")
    attrs, x = _attrs(node), node.input[0]
    rank = lo.rank(x, node)
    axes = lo.const(list(range(attrs.get("axis", -1) % rank, rank)), np.int64)
    epsilon = lo.const(attrs.get("epsilon", 1e-5), helper.tensor_dtype_to_np_dtype(lo.types[x]))
    mean = lo.make(node, "ReduceMean", [x, axes], keepdims=1)
    centred = lo.make(node, "Sub", [x, mean.output[0]])
    square = lo.make(node, "Mul", [centred.output[0], centred.output[0]])
    var = lo.make(node, "ReduceMean", [square.output[0], axes], keepdims=1)
    shifted = lo.make(node, "Add", [var.output[0], epsilon])
    std = lo.make(node, "Sqrt", shifted.output)
    nodes = [mean, centred, square, var, shifted, std]
    normed = lo.make(node, "Div", [centred.output[0], std.output[0]])
    bias = _input(node, 2)
    scaled = lo.make(node, "Mul", [normed.output[0], node.input[1]], None if bias else node.output[:1])
    nodes += [normed, scaled]
    if bias:
        nodes.append(lo.make(node, "Add", [scaled.output[0], bias], node.output[:1]))
    return nodes


def _if(lo, node):
    """If-1 wants both branches' outputs of one shape; the rules' branches may hand on an empty
    tensor for a value the other computes (conditional_block), which If-11 allows."""
    if lo.opset < 11:
        raise Refused("ONNX If with branches of different shapes needs opset 11")


REWRITES = {
    # noop_with_empty_axes came with the axes input: the attribute check refuses it before
    **dict.fromkeys(("ReduceSum", "Squeeze", "Unsqueeze"), _attributes_before(13, _AXES)),
    **dict.fromkeys(
        ("ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSumSquare", "ReduceL1", "ReduceL2"),
        _attributes_before(18, _AXES),
    ),
    "Split": _split,
    "Slice": _attributes_before(10, ((1, "starts", _ints), (2, "ends", _ints), (3, "axes", _ints)), _unit_steps),
    "Clip": _attributes_before(11, ((1, "min", float), (2, "max", float))),
    "Pad": _attributes_before(11, ((1, "pads", _ints), (2, "value", float)), _no_pad_axes),
    "TopK": _attributes_before(10, ((1, "k", lambda k: _ints(k)[0]),)),
    "Softmax": _softmax,
    "LogSoftmax": _softmax,
    "Shape": _shape,
    "LessOrEqual": _or_equal("Less"),
    "GreaterOrEqual": _or_equal("Greater"),
    "Resize": _resize,
    "If": _if,
    "LayerNormalization": _layer_normalization,
}
