"""`paddle.nn` loss layers (Paddle 2.0's python/paddle/nn/layer/loss.py), each calling its
`paddle.nn.functional` loss with the arguments it was made with and checking its reduction when made,
as Paddle's; HSigmoidLoss owns the weights of its tree. CrossEntropyLoss and MSELoss live in
activation.py (fluid.dygraph's loss layers import them from there)."""

from __future__ import annotations

from ...layers.loss import _check_reduction
from .. import functional as F
from .layers import Layer


class BCELoss(Layer):
    def __init__(self, weight=None, reduction="mean", name=None) -> None:
        _check_reduction("BCELoss", reduction)
        super().__init__()
        self.weight, self.reduction, self.name = weight, reduction, name

    def forward(self, input, label):
        return F.binary_cross_entropy(input, label, self.weight, self.reduction, self.name)


class BCEWithLogitsLoss(Layer):
    def __init__(self, weight=None, reduction="mean", pos_weight=None, name=None) -> None:
        _check_reduction("BCEWithLogitsLoss", reduction)
        super().__init__()
        self.weight, self.reduction, self.pos_weight, self.name = weight, reduction, pos_weight, name

    def forward(self, logit, label):
        return F.binary_cross_entropy_with_logits(logit, label, self.weight, self.reduction, self.pos_weight, self.name)


class L1Loss(Layer):
    def __init__(self, reduction="mean", name=None) -> None:
        _check_reduction("L1Loss", reduction)
        super().__init__()
        self.reduction, self.name = reduction, name

    def forward(self, input, label):
        return F.l1_loss(input, label, self.reduction, self.name)


class NLLLoss(Layer):
    def __init__(self, weight=None, ignore_index=-100, reduction="mean", name=None) -> None:
        _check_reduction("NLLLoss", reduction)
        super().__init__()
        self._weight, self._ignore_index, self._reduction, self._name = weight, ignore_index, reduction, name

    def forward(self, input, label):
        return F.nll_loss(input, label, self._weight, self._ignore_index, self._reduction, self._name)


class KLDivLoss(Layer):
    def __init__(self, reduction="mean") -> None:
        super().__init__()
        self.reduction = reduction

    def forward(self, input, label):
        return F.kl_div(input, label, self.reduction)


class MarginRankingLoss(Layer):
    def __init__(self, margin=0.0, reduction="mean", name=None) -> None:
        _check_reduction("MarginRankingLoss", reduction)
        super().__init__()
        self.margin, self.reduction, self.name = margin, reduction, name

    def forward(self, input, other, label):
        return F.margin_ranking_loss(input, other, label, self.margin, self.reduction, self.name)


class CTCLoss(Layer):
    def __init__(self, blank=0, reduction="mean") -> None:
        super().__init__()
        self.blank, self.reduction = blank, reduction

    def forward(self, log_probs, labels, input_lengths, label_lengths):
        return F.ctc_loss(log_probs, labels, input_lengths, label_lengths, self.blank, self.reduction)


class SmoothL1Loss(Layer):
    def __init__(self, reduction="mean", delta=1.0, name=None) -> None:
        super().__init__()
        self.reduction, self.delta, self.name = reduction, delta, name

    def forward(self, input, label):
        return F.smooth_l1_loss(input, label, self.reduction, self.delta, self.name)


class HSigmoidLoss(Layer):
    """The hierarchical sigmoid loss over a tree of num_classes leaves: the default complete binary
    tree (weight [num_classes - 1, feature_size]) or, with is_custom, the tree of num_classes inner
    nodes that forward's path_table and path_code give (weight [num_classes, feature_size])."""

    def __init__(
        self, feature_size, num_classes, weight_attr=None, bias_attr=None, is_custom=False, is_sparse=False, name=None
    ) -> None:
        super().__init__()
        if num_classes < 2 and not is_custom:
            raise ValueError(f"HSigmoidLoss: num_classes expected 2 or more for the default tree, got {num_classes}")
        self._num_classes, self._is_sparse, self._name = int(num_classes), bool(is_sparse), name
        nodes = self._num_classes if is_custom else self._num_classes - 1
        self.weight = self.create_parameter([nodes, int(feature_size)], weight_attr)
        self.bias = None if bias_attr is False else self.create_parameter([nodes, 1], bias_attr, is_bias=True)

    def forward(self, input, label, path_table=None, path_code=None):
        return F.hsigmoid_loss(
            input,
            label,
            self._num_classes,
            self.weight,
            self.bias,
            path_table=path_table,
            path_code=path_code,
            is_sparse=self._is_sparse,
            name=self._name,
        )


__all__ = [
    "BCELoss",
    "BCEWithLogitsLoss",
    "CTCLoss",
    "HSigmoidLoss",
    "KLDivLoss",
    "L1Loss",
    "MarginRankingLoss",
    "NLLLoss",
    "SmoothL1Loss",
]
