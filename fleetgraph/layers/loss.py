"""Loss layer functions."""

from __future__ import annotations

from ..dygraph.dispatch import bind
from ..ir import FleetgraphError
from ..ir.program import Variable
from .helper import LayerHelper
from .math import reduce_mean as _mean


def square_error_cost(input, label):
    """(input - label)^2, elementwise: an elementwise_sub then a square, as Paddle emits it."""
    diff = bind("elementwise_sub", {"X": [input], "Y": [label]}, {"axis": -1})
    return bind("square", {"X": [diff]})


def cross_entropy(input, label, soft_label=False, ignore_index=-100):
    """Cross entropy of probabilities `input` (after softmax), one value per sample."""
    return bind(
        "cross_entropy",
        {"X": [input], "Label": [label]},
        {"soft_label": soft_label, "ignore_index": ignore_index},
        out_slot="Y",
    )


def softmax_with_cross_entropy(
    logits, label, soft_label=False, ignore_index=-100, numeric_stable_mode=True, return_softmax=False, axis=-1
):
    helper = LayerHelper("softmax_with_cross_entropy", inputs=[logits, label])
    softmax = helper.create_variable_for_type_inference(logits.dtype)
    loss = helper.create_variable_for_type_inference(logits.dtype)
    helper.append_op(
        "softmax_with_cross_entropy",
        {"Logits": [logits], "Label": [label]},
        {"Softmax": [softmax], "Loss": [loss]},
        {"soft_label": soft_label, "ignore_index": ignore_index, "axis": axis},
    )
    return (loss, softmax) if return_softmax else loss


def mse_loss(input, label, reduction="mean", name=None):
    return _reduce(square_error_cost(input, label), reduction, where="mse_loss")


def log_loss(input, label, epsilon=1e-4, name=None):
    """-label * log(input + epsilon) - (1 - label) * log(1 - input + epsilon), per row of an [N, 1]
    probability (`fluid.layers.log_loss` and `paddle.nn.functional.log_loss`)."""
    return bind(
        "log_loss",
        {"Predicted": [input], "Labels": [label]},
        {"epsilon": float(epsilon)},
        out_slot="Loss",
        name=name,
    )


def binary_cross_entropy(input, label, weight=None, reduction="mean", name=None):
    """`paddle.nn.functional.binary_cross_entropy`: bce_loss, times `weight` if given, then reduced;
    `name` goes to the last op, as in Paddle."""
    _check_reduction("binary_cross_entropy", reduction)
    if weight is not None and not isinstance(weight, Variable):
        raise FleetgraphError(f"binary_cross_entropy: weight expected a Variable or None, got {type(weight).__name__}")
    last = weight is None and reduction == "none"
    loss = bind("bce_loss", {"X": [input], "Label": [label]}, name=name if last else None)
    if weight is not None:
        named = name if reduction == "none" else None
        loss = bind("elementwise_mul", {"X": [loss], "Y": [weight]}, {"axis": -1}, name=named)
    return _reduce(loss, reduction, name)


def _check_reduction(where: str, reduction) -> None:
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{where}: reduction expected 'mean', 'sum' or 'none', got {reduction!r}")


def _reduce(loss, reduction, name=None, where="loss"):
    _check_reduction(where, reduction)
    if reduction == "mean":
        return _mean(loss, name=name)
    if reduction == "sum":
        return bind("reduce_sum", {"X": [loss]}, {"dim": [0], "keep_dim": False, "reduce_all": True}, name=name)
    return loss
