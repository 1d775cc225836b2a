"""Loss layer functions."""

from __future__ import annotations

from ..ir import FleetgraphError
from ._apply import apply_op
from .helper import LayerHelper
from .math import mean as _mean


def square_error_cost(input, label):
    """(input - label)^2, elementwise: an elementwise_sub then a square, as Paddle emits it."""
    diff = apply_op("elementwise_sub", {"X": [input], "Y": [label]}, {"axis": -1})
    return apply_op("square", {"X": [diff]})


def cross_entropy(input, label, soft_label=False, ignore_index=-100):
    """Cross entropy of probabilities `input` (after softmax), one value per sample."""
    return apply_op(
        "cross_entropy",
        {"X": [input], "Label": [label]},
        {"soft_label": soft_label, "ignore_index": ignore_index},
        out_slot="Y",
    )


def softmax_with_cross_entropy(
    logits, label, soft_label=False, ignore_index=-100, numeric_stable_mode=True, return_softmax=False, axis=-1
):
    helper = LayerHelper("softmax_with_cross_entropy")
    softmax = helper.create_variable_for_type_inference(logits.dtype)
    loss = helper.create_variable_for_type_inference(logits.dtype)
    helper.append_op(
        "softmax_with_cross_entropy",
        {"Logits": [logits], "Label": [label]},
        {"Softmax": [softmax], "Loss": [loss]},
        {"soft_label": soft_label, "ignore_index": ignore_index, "axis": axis},
    )
    return (loss, softmax) if return_softmax else loss


def functional_cross_entropy(
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
    """`paddle.nn.functional.cross_entropy`: softmax (unless use_softmax=False) + cross entropy + reduction."""
    if weight is not None:
        raise FleetgraphError(f"cross_entropy: per-class weight is not supported; expected None, got {weight!r}")
    if use_softmax:
        loss = softmax_with_cross_entropy(input, label, soft_label, ignore_index, axis=axis)
    else:
        loss = cross_entropy(input, label, soft_label, ignore_index)
    return _reduce(loss, reduction)


def mse_loss(input, label, reduction="mean", name=None):
    return _reduce(square_error_cost(input, label), reduction)


def _reduce(loss, reduction):
    if reduction == "mean":
        return _mean(loss)
    if reduction == "sum":
        return apply_op("reduce_sum", {"X": [loss]}, {"dim": [0], "keep_dim": False, "reduce_all": True})
    if reduction == "none":
        return loss
    raise ValueError(f"reduction: expected 'mean', 'sum' or 'none', got {reduction!r}")
