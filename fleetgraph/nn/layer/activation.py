"""`paddle.nn` activation layers (Paddle 2.0's python/paddle/nn/layer/activation.py), each calling its
`paddle.nn.functional` activation with the arguments it was made with; PReLU owns its slopes.
CrossEntropyLoss and MSELoss stay here, where fluid.dygraph's loss layers import them from."""

from __future__ import annotations

from ...initializer import Constant
from .. import functional as F
from .layers import Layer


class _Activation(Layer):
    """forward(x) = _function(x, **the arguments given to __init__)."""

    _function = None

    def __init__(self, name=None, **attrs) -> None:
        super().__init__()
        self._name, self._attrs = name, attrs

    def forward(self, x):
        return type(self)._function(x, **self._attrs, name=self._name)

    def extra_repr(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self._attrs.items())


class ReLU(_Activation):
    _function = staticmethod(F.relu)

    def __init__(self, name=None) -> None:
        super().__init__(name)


class ReLU6(_Activation):
    _function = staticmethod(F.relu6)

    def __init__(self, name=None) -> None:
        super().__init__(name)


class Sigmoid(_Activation):
    _function = staticmethod(F.sigmoid)

    def __init__(self, name=None) -> None:
        super().__init__(name)


class Tanh(_Activation):
    _function = staticmethod(F.tanh)

    def __init__(self, name=None) -> None:
        super().__init__(name)


class ELU(_Activation):
    _function = staticmethod(F.elu)

    def __init__(self, alpha=1.0, name=None) -> None:
        super().__init__(name, alpha=alpha)


class GELU(_Activation):
    _function = staticmethod(F.gelu)

    def __init__(self, approximate=False, name=None) -> None:
        super().__init__(name, approximate=approximate)


class Hardshrink(_Activation):
    _function = staticmethod(F.hardshrink)

    def __init__(self, threshold=0.5, name=None) -> None:
        super().__init__(name, threshold=threshold)


class Hardswish(_Activation):
    _function = staticmethod(F.hardswish)

    def __init__(self, name=None) -> None:
        super().__init__(name)


class Hardtanh(_Activation):
    _function = staticmethod(F.hardtanh)

    def __init__(self, min=-1.0, max=1.0, name=None) -> None:  # noqa: A002
        super().__init__(name, min=min, max=max)


class Hardsigmoid(_Activation):
    """Paddle 2.0's layer: slope 1/6 and offset 0.5, fixed (the functional form takes others)."""

    _function = staticmethod(F.hardsigmoid)

    def __init__(self, name=None) -> None:
        super().__init__(name)


class LeakyReLU(_Activation):
    _function = staticmethod(F.leaky_relu)

    def __init__(self, negative_slope=0.01, name=None) -> None:
        super().__init__(name, negative_slope=negative_slope)


class SELU(_Activation):
    _function = staticmethod(F.selu)

    def __init__(
        self, scale=1.0507009873554804934193349852946, alpha=1.6732632423543772848170429916717, name=None
    ) -> None:
        super().__init__(name, scale=scale, alpha=alpha)


class Softplus(_Activation):
    _function = staticmethod(F.softplus)

    def __init__(self, beta=1, threshold=20, name=None) -> None:
        super().__init__(name, beta=beta, threshold=threshold)


class Softshrink(_Activation):
    _function = staticmethod(F.softshrink)

    def __init__(self, threshold=0.5, name=None) -> None:
        super().__init__(name, threshold=threshold)


class Softsign(_Activation):
    _function = staticmethod(F.softsign)

    def __init__(self, name=None) -> None:
        super().__init__(name)


class Swish(_Activation):
    _function = staticmethod(F.swish)

    def __init__(self, name=None) -> None:
        super().__init__(name)


class Tanhshrink(_Activation):
    _function = staticmethod(F.tanhshrink)

    def __init__(self, name=None) -> None:
        super().__init__(name)


class ThresholdedReLU(_Activation):
    _function = staticmethod(F.thresholded_relu)

    def __init__(self, threshold=1.0, name=None) -> None:
        super().__init__(name, threshold=threshold)


class LogSigmoid(_Activation):
    _function = staticmethod(F.log_sigmoid)

    def __init__(self, name=None) -> None:
        super().__init__(name)


class Softmax(_Activation):
    _function = staticmethod(F.softmax)

    def __init__(self, axis=-1, name=None) -> None:
        super().__init__(name, axis=axis)


class LogSoftmax(_Activation):
    _function = staticmethod(F.log_softmax)

    def __init__(self, axis=-1, name=None) -> None:
        super().__init__(name, axis=axis)


class Maxout(_Activation):
    _function = staticmethod(F.maxout)

    def __init__(self, groups, axis=1, name=None) -> None:
        super().__init__(name, groups=groups, axis=axis)


class PReLU(Layer):
    """leaky_relu with learned slopes: one shared (num_parameters=1) or one per channel, from `init`."""

    def __init__(self, num_parameters=1, init=0.25, weight_attr=None, name=None) -> None:
        super().__init__()
        self._num_parameters, self._init = int(num_parameters), float(init)
        self._weight = self.create_parameter(
            [self._num_parameters], weight_attr, default_initializer=Constant(self._init)
        )

    def forward(self, x):
        return F.prelu(x, self._weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self._num_parameters}, init={self._init}, dtype={self._dtype}"


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


__all__ = [
    "CrossEntropyLoss",
    "ELU",
    "GELU",
    "Hardshrink",
    "Hardsigmoid",
    "Hardswish",
    "Hardtanh",
    "LeakyReLU",
    "LogSigmoid",
    "LogSoftmax",
    "MSELoss",
    "Maxout",
    "PReLU",
    "ReLU",
    "ReLU6",
    "SELU",
    "Sigmoid",
    "Softmax",
    "Softplus",
    "Softshrink",
    "Softsign",
    "Swish",
    "Tanh",
    "Tanhshrink",
    "ThresholdedReLU",
]
