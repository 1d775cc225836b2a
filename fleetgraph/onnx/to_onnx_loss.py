"""Export rules of the losses and accuracy an evaluation program may fetch beside its predictions."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto

from ..ops.loss import _BCE_LOG_MIN
from .emitter import Emitter, UnsupportedOp, exports


def _picked_nll(e: Emitter, log_p: str, label: str, ignore_index: int, out: str, like: str) -> None:
    """-log_p[row, label] per row ([..., 1]), 0 where the label is ignore_index (`like`: a variable
    of log_p's dtype)."""
    ids = e.node("Cast", [label], to=TensorProto.INT64)
    keep = e.node("Not", [e.node("Equal", [ids, e.const(np.int64(ignore_index))])])
    safe = e.node("Where", [keep, ids, e.const(np.int64(0))])
    # log_p at the label: a one-hot mask summed over the classes (GatherElements' reference kernel
    # wants the index as wide as the data)
    classes = e.node("Squeeze", [e.node("Shape", [log_p], start=-1), e.const([0])])
    one_hot = e.node("Equal", [safe, e.node("Range", [e.const(np.int64(0)), classes, e.const(np.int64(1))])])
    zero = e.scalar(0, like)
    picked = e.node("ReduceSum", [e.node("Where", [one_hot, log_p, zero]), e.const([-1])], keepdims=1)
    e.node("Where", [keep, e.node("Neg", [picked]), zero], out)


def _soft_nll(e: Emitter, log_p: str, label: str, out: str) -> None:
    product = e.node("Mul", [label, log_p])
    e.node("Neg", [e.node("ReduceSum", [product, e.const([-1])], keepdims=1)], out)


@exports("cross_entropy")
def _cross_entropy(e: Emitter, op) -> None:
    log_p = e.node("Log", [e.x(op, "X")])
    if op.attr("soft_label"):
        _soft_nll(e, log_p, e.x(op, "Label"), e.out(op, "Y"))
    else:
        _picked_nll(e, log_p, e.x(op, "Label"), op.attr("ignore_index"), e.out(op, "Y"), e.x(op, "X"))


@exports("softmax_with_cross_entropy")
def _softmax_with_cross_entropy(e: Emitter, op) -> None:
    logits = e.x(op, "Logits")
    if op.attr("axis") not in (-1, len(e.shape(logits)) - 1):
        raise UnsupportedOp(f"axis {op.attr('axis')}; expected the last axis")
    if op.attr("use_softmax"):
        log_p = e.node("LogSoftmax", [logits], axis=-1)
        softmax = e.out(op, "Softmax") if e.has_out(op, "Softmax") else e.fresh("softmax")
        e.node("Softmax", [logits], softmax, axis=-1)
    else:
        log_p = e.node("Log", [logits])
        if e.has_out(op, "Softmax"):
            e.node("Identity", [logits], e.out(op, "Softmax"))
    if op.attr("soft_label"):
        _soft_nll(e, log_p, e.x(op, "Label"), e.out(op, "Loss"))
    else:
        _picked_nll(e, log_p, e.x(op, "Label"), op.attr("ignore_index"), e.out(op, "Loss"), logits)


@exports("log_loss")
def _log_loss(e: Emitter, op) -> None:
    p, label = e.x(op, "Predicted"), e.x(op, "Labels")
    eps, one = e.scalar(op.attr("epsilon"), p), e.scalar(1, p)
    hit = e.node("Mul", [label, e.node("Log", [e.node("Add", [p, eps])])])
    miss_p = e.node("Add", [e.node("Sub", [one, p]), eps])
    miss = e.node("Mul", [e.node("Sub", [one, label]), e.node("Log", [miss_p])])
    e.node("Neg", [e.node("Add", [hit, miss])], e.out(op, "Loss"))


@exports("bce_loss")
def _bce_loss(e: Emitter, op) -> None:
    x, label = e.x(op, "X"), e.x(op, "Label")
    floor, one = e.scalar(_BCE_LOG_MIN, x), e.scalar(1, x)
    log_x = e.node("Max", [e.node("Log", [x]), floor])
    log_1mx = e.node("Max", [e.node("Log", [e.node("Sub", [one, x])]), floor])
    loss = e.node("Sub", [e.node("Mul", [e.node("Sub", [label, one]), log_1mx]), e.node("Mul", [label, log_x])])
    e.node("Identity", [loss], e.out(op, "Out"))


@exports("accuracy")
def _accuracy(e: Emitter, op) -> None:
    """A row is correct when its label is among its k indices."""
    indices = e.x(op, "Indices")
    label = e.node("Cast", [e.x(op, "Label")], to=TensorProto.INT64)
    hits = e.node(
        "Cast", [e.node("Equal", [e.node("Cast", [indices], to=TensorProto.INT64), label])], to=TensorProto.INT32
    )
    correct = e.node("ReduceSum", [e.node("ReduceMax", [hits, e.const([1])], keepdims=0)], keepdims=1)
    total = e.node("Shape", [indices], start=0, end=1)
    outs = {s: e.out(op, s) if e.has_out(op, s) else e.fresh(s.lower()) for s in ("Accuracy", "Correct", "Total")}
    e.node("Cast", [correct], outs["Correct"], to=TensorProto.INT32)
    e.node("Cast", [total], outs["Total"], to=TensorProto.INT32)
    n = e.node("Max", [e.node("Cast", [total], to=TensorProto.FLOAT), e.const(np.float32([1.0]))])
    e.node("Div", [e.node("Cast", [correct], to=TensorProto.FLOAT), n], outs["Accuracy"])
