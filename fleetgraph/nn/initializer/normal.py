"""`paddle.nn.initializer.normal`: Normal and TruncatedNormal with the 2.x arguments (`Normal(mean, std)`)."""

from __future__ import annotations

from ... import initializer as _fluid


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


__all__ = ["Normal", "TruncatedNormal"]
