"""The loss layers Paddle 1.8 keeps in `fluid.dygraph.nn`: MSELoss, L1Loss and BCELoss, each checking
its reduction ('mean', 'sum' or 'none') when made, as Paddle's."""

from __future__ import annotations

from ...dygraph.dispatch import bind
from ...layers.loss import _check_reduction, _reduce, binary_cross_entropy
from ...nn import MSELoss as _MSELoss
from ...nn.layer.layers import Layer


class MSELoss(_MSELoss):
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
