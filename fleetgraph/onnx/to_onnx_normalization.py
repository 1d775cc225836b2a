"""Export rules of the normalization and projection ops of Paddle 1.8's fluid.layers: layer_norm,
instance_norm, group_norm, norm (l2_normalize), lrn, affine_channel, inplace_abn and data_norm in test
mode, and bilinear_tensor_product.

Each rule writes the op's main output as its kernel computes it; the statistics an op saves for its
gradient (Mean, Variance, SavedMean, MidOut, ...) are not written, since an inference program reads
none of them. Paddle's flat or optional parameters are reshaped or made up (ones, zeros) to the
shapes the ONNX ops take. LRN's alpha is multiplied by the window, as ONNX divides it by the window.
"""

from __future__ import annotations

import numpy as np

from ..ir.program import Operator
from .emitter import Emitter, UnsupportedOp, exports


def _known(e: Emitter, op: Operator, slot: str, dims) -> list[int]:
    """`dims` of input `slot`, each of which the rule needs to be static."""
    dims = [int(d) for d in dims]
    if any(d < 0 for d in dims):
        name = e.x(op, slot)
        raise UnsupportedOp(
            f"input {slot} '{name}' {list(e.shape(name))}: expected static sizes where it is normalized"
        )
    return dims


def _vector_or(e: Emitter, op: Operator, slot: str, size: int, value: float, like: str) -> str:
    """The op's input `slot`, or a constant vector of `value` where Paddle's op leaves it out."""
    if op.input(slot):
        return e.x(op, slot)
    return e.const(np.full(size, value, dtype=e.dtype(like)))


def _per_channel(e: Emitter, vector: str, rank: int) -> str:
    """A [C] vector reshaped to [C, 1, ...] to broadcast over NCHW's channel axis."""
    return e.node("Reshape", [vector, e.const([-1] + [1] * (rank - 2))])


@exports("layer_norm")
def _layer_norm(e: Emitter, op: Operator) -> None:
    x = e.x(op, "X")
    axis = op.attr("begin_norm_axis")
    shape = _known(e, op, "X", e.shape(x)[axis:])
    size = int(np.prod(shape))
    scale, bias = (
        e.node("Reshape", [_vector_or(e, op, slot, size, fill, x), e.const(shape)])
        for slot, fill in (("Scale", 1.0), ("Bias", 0.0))
    )
    e.node("LayerNormalization", [x, scale, bias], e.out(op, "Y"), axis=axis, epsilon=op.attr("epsilon"))


@exports("instance_norm")
def _instance_norm(e: Emitter, op: Operator) -> None:
    x = e.x(op, "X")
    (c,) = _known(e, op, "X", e.shape(x)[1:2])
    inputs = [x, _vector_or(e, op, "Scale", c, 1.0, x), _vector_or(e, op, "Bias", c, 0.0, x)]
    e.node("InstanceNormalization", inputs, e.out(op, "Y"), epsilon=op.attr("epsilon"))


@exports("group_norm")
def _group_norm(e: Emitter, op: Operator) -> None:
    """[N, groups, -1] through InstanceNormalization (one 'channel' per group), back to X's shape,
    then Paddle's per-channel Scale and Bias."""
    if op.attr("data_layout") != "NCHW":
        raise UnsupportedOp(f"data_layout {op.attr('data_layout')!r}; expected NCHW")
    x, groups = e.x(op, "X"), op.attr("groups")
    grouped = e.node("Reshape", [x, e.const([0, groups, -1])])
    ones, zeros = (e.const(np.full(groups, v, dtype=e.dtype(x))) for v in (1.0, 0.0))
    normed = e.node("InstanceNormalization", [grouped, ones, zeros], epsilon=op.attr("epsilon"))
    y = e.node("Reshape", [normed, e.node("Shape", [x])])
    rank = len(e.shape(x))
    if op.input("Scale"):
        y = e.node("Mul", [y, _per_channel(e, e.x(op, "Scale"), rank)])
    if op.input("Bias"):
        y = e.node("Add", [y, _per_channel(e, e.x(op, "Bias"), rank)])
    e.node("Identity", [y], e.out(op, "Y"))


@exports("norm")
def _norm(e: Emitter, op: Operator) -> None:
    x = e.x(op, "X")
    axis = op.attr("axis") % len(e.shape(x))
    squares = e.node("ReduceSumSquare", [x, e.const([axis])], keepdims=1)
    norm = e.node("Sqrt", [e.node("Add", [squares, e.scalar(op.attr("epsilon"), x)])])
    e.node("Div", [x, norm], e.out(op, "Out"))
    if e.has_out(op, "Norm"):
        e.node("Identity", [norm], e.out(op, "Norm"))


@exports("lrn")
def _lrn(e: Emitter, op: Operator) -> None:
    """ONNX's window [c - (n-1)//2, c + n//2] is the one Paddle's forward kernel sums."""
    if op.attr("data_format") == "NHWC":
        raise UnsupportedOp("data_format 'NHWC'; expected NCHW")
    n = op.attr("n")
    attrs = {"size": n, "alpha": op.attr("alpha") * n, "beta": op.attr("beta"), "bias": op.attr("k")}
    e.node("LRN", [e.x(op, "X")], e.out(op, "Out"), **attrs)


@exports("affine_channel")
def _affine_channel(e: Emitter, op: Operator) -> None:
    x, scale, bias = (e.x(op, s) for s in ("X", "Scale", "Bias"))
    if op.attr("data_layout") != "NHWC":
        rank = len(e.shape(x))
        scale, bias = _per_channel(e, scale, rank), _per_channel(e, bias, rank)
    e.node("Add", [e.node("Mul", [x, scale]), bias], e.out(op, "Out"))


@exports("inplace_abn")
def _inplace_abn(e: Emitter, op: Operator) -> None:
    if not (op.attr("use_global_stats") or (op.attr("is_test") and not op.attr("trainable_statistics"))):
        raise UnsupportedOp("training mode (batch statistics); expected is_test (prune or clone(for_test=True))")
    if op.attr("data_layout") not in ("NCHW", "AnyLayout"):
        raise UnsupportedOp(f"data_layout {op.attr('data_layout')!r}; expected NCHW")
    inputs = [e.x(op, s) for s in ("X", "Scale", "Bias", "Mean", "Variance")]
    activation, alpha = op.attr("activation"), op.attr("alpha")
    if activation in ("", "identity"):
        e.node("BatchNormalization", inputs, e.out(op, "Y"), epsilon=op.attr("epsilon"))
        return
    y = e.node("BatchNormalization", inputs, epsilon=op.attr("epsilon"))
    if activation == "leaky_relu":  # Paddle's max(y, alpha y)
        e.node("Max", [y, e.node("Mul", [y, e.scalar(alpha, inputs[0])])], e.out(op, "Y"))
    else:
        e.node("Elu", [y], e.out(op, "Y"), alpha=alpha)


@exports("data_norm")
def _data_norm(e: Emitter, op: Operator) -> None:
    if op.attr("slot_dim") > 0:
        raise UnsupportedOp(f"slot_dim {op.attr('slot_dim')}: slots that are not shown give zeros; expected -1")
    size, total, square = (e.x(op, s) for s in ("BatchSize", "BatchSum", "BatchSquareSum"))
    means = e.node("Div", [total, size])
    scales = e.node("Sqrt", [e.node("Div", [size, square])])
    y = e.node("Mul", [e.node("Sub", [e.x(op, "X"), means]), scales])
    if op.attr("enable_scale_and_shift"):
        y = e.node("Add", [e.node("Mul", [y, e.x(op, "scale_w")]), e.x(op, "bias")])
    e.node("Identity", [y], e.out(op, "Y"))


@exports("bilinear_tensor_product")
def _bilinear_tensor_product(e: Emitter, op: Operator) -> None:
    inputs = [e.x(op, s) for s in ("X", "Weight", "Y")]
    if not op.input("Bias"):
        e.node("Einsum", inputs, e.out(op, "Out"), equation="nm,imk,nk->ni")
        return
    product = e.node("Einsum", inputs, equation="nm,imk,nk->ni")
    e.node("Add", [product, e.x(op, "Bias")], e.out(op, "Out"))
