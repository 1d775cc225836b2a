"""The loss layers Paddle 1.8 keeps in `fluid.dygraph.nn`: MSELoss, L1Loss, BCELoss and NLLLoss, each
checking its reduction ('mean', 'sum' or 'none') when made."""

from __future__ import annotations

from ...dygraph.dispatch import bind
from ...layers.loss import _check_reduction, _reduce, binary_cross_entropy
from ...nn.layer.activation import MSELoss as _MSELoss
from .layers import Layer


class MSELoss(Layer, _MSELoss):
    """(input - label)^2, reduced."""

    def __init__(self, reduction="mean") -> None:
        _check_reduction("MSELoss", reduction)
        super().__init__(reduction)


class L1Loss(Layer):
    """|input - label|, reduced."""

    def __init__(self, reduction="mean") -> None:
        _check_reduction("L1Loss", reduction)
        super().__init__()
        self.reduction = reduction

    def forward(self, input, label):
        diff = bind("elementwise_sub", {"X": [input], "Y": [label]}, {"axis": -1})
        return _reduce(bind("abs", {"X": [diff]}), self.reduction, where="L1Loss")


class BCELoss(Layer):
    """The binary cross entropy of probabilities `input` against `label` (the bce_loss op), times
    `weight` (a Variable broadcast over the last axes) when given, reduced."""

    def __init__(self, weight=None, reduction="mean") -> None:
        _check_reduction("BCELoss", reduction)
        super().__init__()
        self.weight, self.reduction = weight, reduction

    def forward(self, input, label):
        return binary_cross_entropy(input, label, self.weight, self.reduction)


class NLLLoss(Layer):
    """The negative log likelihood of log-probabilities `input` [N, C, d1, ...] for class indices
    `label` [N, d1, ...] (int64): out = -input[n, label, ...] * weight[label] (weight [C] a Variable,
    or ones), 0 where label is ignore_index; 'mean' divides the sum by the sum of the weights picked,
    as Paddle's nll_loss. Built from one_hot_v2 and elementwise ops (the gradient follows them); a
    label outside [0, C) that is not ignore_index is refused by one_hot_v2, as Paddle refuses it."""

    def __init__(self, weight=None, reduction="mean", ignore_index=-100) -> None:
        _check_reduction("NLLLoss", reduction)
        super().__init__()
        self.weight, self.reduction, self.ignore_index = weight, reduction, int(ignore_index)

    def forward(self, input, label):
        rank = len(input.shape)
        if rank < 2:
            raise ValueError(f"NLLLoss: input shape {list(input.shape)}; expected 2 or more dimensions [N, C, ...]")
        logs = input
        if rank > 2:  # the classes last, as one_hot_v2 lays them out
            logs = bind("transpose2", {"X": [input]}, {"axis": [0, *range(2, rank), 1]}, extra_outputs=("XShape",))
        ignored = bind("scale", {"X": [label]}, {"scale": 0.0, "bias": float(self.ignore_index)})
        kept = bind("not_equal", {"X": [label], "Y": [ignored]})
        safe = bind("elementwise_mul", {"X": [label], "Y": [_cast(kept, "int64")]})
        picked = bind("one_hot_v2", {"X": [safe]}, {"depth": int(input.shape[1]), "dtype": input.dtype})
        picked = bind("elementwise_mul", {"X": [picked], "Y": [_cast(kept, input.dtype)]}, {"axis": 0})
        if self.weight is not None:
            picked = bind("elementwise_mul", {"X": [picked], "Y": [self.weight]}, {"axis": -1})
        products = bind("elementwise_mul", {"X": [logs], "Y": [picked]})
        out = bind("scale", {"X": [_sum(products, [rank - 1])]}, {"scale": -1.0})
        if self.reduction != "mean":
            return _reduce(out, self.reduction, where="NLLLoss")
        return bind("elementwise_div", {"X": [_sum(out, None)], "Y": [_sum(picked, None)]})


def _cast(x, dtype: str):
    return bind("cast", {"X": [x]}, {"in_dtype": x.dtype, "out_dtype": dtype}, dtype=dtype)


def _sum(x, dims):
    """The sum over `dims`, or over everything (as a [1]) for None."""
    attrs = {"dim": [0], "keep_dim": False, "reduce_all": True} if dims is None else {"dim": dims, "keep_dim": False}
    return bind("reduce_sum", {"X": [x]}, attrs)
