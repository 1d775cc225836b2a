"""`paddle.nn.initializer`: the 2.x initializers, whose arguments differ from Fluid's (`Normal(mean, std)`)."""

from __future__ import annotations

from .. import initializer as _fluid
from ..initializer import KaimingNormal, KaimingUniform, XavierNormal, XavierUniform


class Normal(_fluid.NormalInitializer):
    """`Normal(mean=0.0, std=1.0, name=None)`: a gaussian_random init op."""

    def __init__(self, mean=0.0, std=1.0, name=None) -> None:
        _fluid.require_values("Normal", mean=mean, std=std)
        super().__init__(mean, std, 0)


class TruncatedNormal(_fluid.TruncatedNormalInitializer):
    """`TruncatedNormal(mean=0.0, std=1.0, name=None)`: a truncated_gaussian_random init op."""

    def __init__(self, mean=0.0, std=1.0, name=None) -> None:
        _fluid.require_values("TruncatedNormal", mean=mean, std=std)
        super().__init__(mean, std, 0)


class Uniform(_fluid.UniformInitializer):
    """`Uniform(low=-1.0, high=1.0, name=None)`: a uniform_random init op."""

    def __init__(self, low=-1.0, high=1.0, name=None) -> None:
        super().__init__(low, high, 0)


class Constant(_fluid.ConstantInitializer):
    """`Constant(value=0.0)`: a fill_constant init op."""

    def __init__(self, value=0.0) -> None:
        super().__init__(value, False)


__all__ = [
    "Constant",
    "KaimingNormal",
    "KaimingUniform",
    "Normal",
    "TruncatedNormal",
    "Uniform",
    "XavierNormal",
    "XavierUniform",
]
