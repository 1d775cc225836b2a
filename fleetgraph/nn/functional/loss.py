"""`paddle.nn.functional.loss` (Paddle 2.0's python/paddle/nn/functional/loss.py): the 2.0 losses,
each composed of the loss ops of ops/losses.py, ops/ctc.py and ops/sampled.py and elementwise ops as
Paddle 2.0 composes them, then reduced by 'mean', 'sum' or 'none' (anything else is a ValueError)."""

from __future__ import annotations

from ...dygraph.dispatch import bind
from ...layers import ctc as _ctc
from ...layers import losses as _losses
from ...layers import math as _math
from ...layers import tensor as _tensor
from ...layers import tensor_shape as _shape
from ...layers.loss import (
    _check_reduction,
    _reduce,
    binary_cross_entropy,
    log_loss,
    softmax_with_cross_entropy,
    square_error_cost,
)
from ...layers.loss import cross_entropy as _cross_entropy_of_probabilities
from ...layers.losses import dice_loss, npair_loss
from ...layers.pointwise import _check

_FLOATS = ("float32", "float64")


def mse_loss(input, label, reduction="mean", name=None):
    """(input - label)^2, reduced."""
    _check_reduction("mse_loss", reduction)
    return _reduce(square_error_cost(input, label), reduction, name)


def l1_loss(input, label, reduction="mean", name=None):
    """|input - label|, reduced."""
    _check_reduction("l1_loss", reduction)
    diff = _math.elementwise_sub(input, label)
    return _reduce(_math.abs(diff, name if reduction == "none" else None), reduction, name)


def binary_cross_entropy_with_logits(logit, label, weight=None, reduction="mean", pos_weight=None, name=None):
    """The binary cross entropy of sigmoid(logit) against label, computed from the logits (stable),
    times 1 + (pos_weight - 1) label when pos_weight is given and times weight, then reduced."""
    _check_reduction("binary_cross_entropy_with_logits", reduction)
    _check("binary_cross_entropy_with_logits", "logit", logit, _FLOATS)
    _check("binary_cross_entropy_with_logits", "label", label, _FLOATS)
    out = _losses.sigmoid_cross_entropy_with_logits(logit, label)
    if pos_weight is not None:
        _check("binary_cross_entropy_with_logits", "pos_weight", pos_weight, _FLOATS)
        excess = _math.scale(pos_weight, 1.0, -1.0)
        out = _math.elementwise_mul(out, _math.scale(_math.elementwise_mul(label, excess), 1.0, 1.0))
    if weight is not None:
        _check("binary_cross_entropy_with_logits", "weight", weight, _FLOATS)
        out = _math.elementwise_mul(out, weight)
    return _reduce(out, reduction, name)


def cross_entropy(
    input,
    label,
    weight=None,
    ignore_index=-100,
    reduction="mean",
    soft_label=False,
    axis=-1,
    use_softmax=True,
    name=None,
):
    """Softmax of `input` along `axis`, then its cross entropy against class indices (label with or
    without the size-1 class axis) or, with soft_label, against distributions; `weight` [C] scales each
    sample by its class's weight. 'mean' divides by the weights picked (or, with an ignore_index other
    than -100, by the samples not ignored), as Paddle 2.0's. use_softmax=False (Paddle 2.1's) takes
    `input` as probabilities already (the cross_entropy op, classes last)."""
    _check_reduction("cross_entropy", reduction)
    in_rank, label_rank = len(input.shape), len(label.shape)
    if in_rank - 1 != label_rank and in_rank != label_rank:
        raise ValueError(f"cross_entropy: label of rank {label_rank}; expected {in_rank - 1} or {in_rank} (input's)")
    if in_rank - 1 == label_rank:
        label = _shape.unsqueeze(label, [axis])
    if use_softmax:
        out = softmax_with_cross_entropy(input, label, soft_label, ignore_index, axis=axis)
    elif axis in (-1, in_rank - 1):
        out = _cross_entropy_of_probabilities(input, label, soft_label, ignore_index)
    else:
        raise NotImplementedError("cross_entropy: use_softmax=False with a class axis other than the last")
    picked = None
    if weight is not None:
        if soft_label or axis not in (-1, in_rank - 1):
            raise NotImplementedError("cross_entropy: weight with soft_label or a class axis other than the last")
        _check("cross_entropy", "weight", weight, _FLOATS)
        picked = _tensor.reshape(_shape.gather_nd(weight, label), list(label.shape))
        out = _math.elementwise_mul(out, picked, name=name if reduction == "none" else None)
    if reduction == "mean" and (ignore_index != -100 or picked is not None):
        total = _reduce(out, "sum")
        if ignore_index != -100:
            kept = _tensor.cast(_math.not_equal(label, _math.scale(label, 0.0, float(ignore_index))), out.dtype)
            picked = kept if picked is None else _math.elementwise_mul(kept, picked)
        return _math.elementwise_div(total, _reduce(picked, "sum"), name=name)
    if reduction == "none" and in_rank - 1 == label_rank:
        return _shape.squeeze(out, [axis], name=name)
    return _reduce(out, reduction, name)


def nll_loss(input, label, weight=None, ignore_index=-100, reduction="mean", name=None):
    """-input[n, label[n, ...], ...] weight[label] for log-probabilities input [N, C, d1, ...] and
    class indices label [N, d1, ...], 0 where label is ignore_index; 'mean' divides the sum by the
    weights of the samples not ignored. Composed as index_sample over the rows [M, C] of input."""
    _check_reduction("nll_loss", reduction)
    _check("nll_loss", "input", input, _FLOATS)
    _check("nll_loss", "label", label, ("int64",))
    shape = list(input.shape)
    if len(shape) < 2:
        raise ValueError(f"nll_loss: input shape {shape}; expected 2 or more dimensions [N, C, ...]")
    rows = input
    if len(shape) > 2:  # the classes last, as index_sample picks along them
        rows = bind("transpose2", {"X": [input]}, {"axis": [0, *range(2, len(shape)), 1]}, extra_outputs=("XShape",))
    rows = _tensor.reshape(rows, [-1, shape[1]])
    kept = _math.not_equal(label, _math.scale(label, 0.0, float(ignore_index)))
    safe = _math.elementwise_mul(label, _tensor.cast(kept, "int64"))
    index = _tensor.reshape(safe, [-1, 1])
    scale = _tensor.reshape(_tensor.cast(kept, input.dtype), [-1, 1])
    if weight is not None:
        _check("nll_loss", "weight", weight, _FLOATS)
        scale = _math.elementwise_mul(
            scale, _tensor.reshape(bind("gather", {"X": [weight], "Index": [index]}), [-1, 1])
        )
    picked = bind("index_sample", {"X": [rows], "Index": [index]})
    out = _math.scale(_math.elementwise_mul(picked, scale), -1.0)
    if reduction == "mean":
        return _math.elementwise_div(_reduce(out, "sum"), _reduce(scale, "sum"), name=name)
    if reduction == "sum":
        return _reduce(out, "sum", name)
    return _tensor.reshape(out, [shape[0], *shape[2:]], name=name)


def kl_div(input, label, reduction="mean", name=None):
    """label (log(label) - input) for log-probabilities input, reduced by 'mean', 'batchmean', 'sum'
    or 'none'; a float32 side is cast to the other's float64, as Paddle 2.0's."""
    if input.dtype == "float32" and label.dtype == "float64":
        input = _tensor.cast(input, "float64")
    elif input.dtype == "float64" and label.dtype == "float32":
        label = _tensor.cast(label, "float64")
    return _losses.kldiv_loss(input, label, reduction, name)


def smooth_l1_loss(input, label, reduction="mean", delta=1.0, name=None):
    """0.5 r^2 where |r| <= delta, else delta (|r| - delta / 2), for r = input - label; reduced."""
    _check_reduction("smooth_l1_loss", reduction)
    return _reduce(_losses.huber_loss(input, label, delta), reduction, name)


def margin_ranking_loss(input, other, label, margin=0.0, reduction="mean", name=None):
    """max(0, -label (input - other) + margin), reduced."""
    _check_reduction("margin_ranking_loss", reduction)
    for what, var in (("input", input), ("other", other), ("label", label)):
        _check("margin_ranking_loss", what, var, _FLOATS)
    out = _math.elementwise_mul(_math.elementwise_sub(other, input), label)
    if margin != 0.0:
        out = _math.scale(out, 1.0, float(margin))
    return _reduce(_math.relu(out, name if reduction == "none" else None), reduction, name)


def ctc_loss(log_probs, labels, input_lengths, label_lengths, blank=0, reduction="mean"):
    """The CTC loss of each sequence of log_probs [max_time, batch, classes] for labels
    [batch, max_labels] (warpctc); 'mean' averages the losses divided by their label lengths."""
    _check_reduction("ctc_loss", reduction)
    loss = _shape.squeeze(_ctc.warpctc(log_probs, labels, blank, False, input_lengths, label_lengths), [-1])
    if reduction == "mean":
        loss = _math.elementwise_div(loss, _tensor.cast(label_lengths, loss.dtype))
    return _reduce(loss, reduction)


def hsigmoid_loss(
    input, label, num_classes, weight, bias=None, path_table=None, path_code=None, is_sparse=False, name=None
):
    """The hierarchical sigmoid loss [N, 1] of each row of input [N, D] for its class label: the
    binary cross entropies along the class's path through the default complete binary tree (weight
    [num_classes - 1, D]) or through the custom tree path_table and path_code give."""
    _check("hsigmoid_loss", "input", input, _FLOATS)
    _check("hsigmoid_loss", "label", label, ("int64",))
    inputs = {"X": [input], "W": [weight], "Label": [label]}
    if bias is not None:
        inputs["Bias"] = [bias]
    if (path_table is None) != (path_code is None):
        raise ValueError("hsigmoid_loss: a custom tree expects both path_table and path_code")
    if path_table is not None:
        inputs.update(PathTable=[path_table], PathCode=[path_code])
    attrs = {"num_classes": int(num_classes), "is_sparse": bool(is_sparse), "remote_prefetch": bool(is_sparse)}
    return bind("hierarchical_sigmoid", inputs, attrs, extra_outputs=("PreOut",), name=name)


__all__ = [
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "cross_entropy",
    "ctc_loss",
    "dice_loss",
    "hsigmoid_loss",
    "kl_div",
    "l1_loss",
    "log_loss",
    "margin_ranking_loss",
    "mse_loss",
    "nll_loss",
    "npair_loss",
    "smooth_l1_loss",
    "softmax_with_cross_entropy",
    "square_error_cost",
]
