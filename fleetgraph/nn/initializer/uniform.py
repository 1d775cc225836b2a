"""`paddle.nn.initializer.uniform`: Uniform with the 2.x arguments (`Uniform(low, high)`)."""

from __future__ import annotations

from ... import initializer as _fluid


class Uniform(_fluid.UniformInitializer):
    """`Uniform(low=-1.0, high=1.0, name=None)`: a uniform_random init op."""

    def __init__(self, low=-1.0, high=1.0, name=None) -> None:
        super().__init__(low, high, 0)


__all__ = ["Uniform"]
