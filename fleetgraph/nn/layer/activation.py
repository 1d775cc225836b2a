"""Activation layers and the loss layers the seeds use."""

from __future__ import annotations

from .. import functional as F
from .layers import Layer


class ReLU(Layer):
    def __init__(self, name=None) -> None:
        super().__init__()

    def forward(self, x):
        return F.relu(x)


class Sigmoid(Layer):
    def __init__(self, name=None) -> None:
        super().__init__()

    def forward(self, x):
        return F.sigmoid(x)


class Tanh(Layer):
    def __init__(self, name=None) -> None:
        super().__init__()

    def forward(self, x):
        return F.tanh(x)


class Softmax(Layer):
    def __init__(self, axis=-1, name=None) -> None:
        super().__init__()
        self._axis = axis

    def forward(self, x):
        return F.softmax(x, self._axis)


class CrossEntropyLoss(Layer):
    def __init__(self, weight=None, ignore_index=-100, reduction="mean", soft_label=False, axis=-1, name=None):
        super().__init__()
        self._args = dict(
            weight=weight, ignore_index=ignore_index, reduction=reduction, soft_label=soft_label, axis=axis
        )

    def forward(self, input, label):
        return F.cross_entropy(input, label, **self._args)


class MSELoss(Layer):
    def __init__(self, reduction="mean") -> None:
        super().__init__()
        self._reduction = reduction

    def forward(self, input, label):
        return F.mse_loss(input, label, self._reduction)

__all__ = ["ReLU", "Sigmoid", "Tanh", "Softmax", "CrossEntropyLoss", "MSELoss"]
