"""`paddle.nn.initializer.constant`: Constant with the 2.x arguments (`Constant(value)`)."""

from __future__ import annotations

from ... import initializer as _fluid


class Constant(_fluid.ConstantInitializer):
    """`Constant(value=0.0)`: a fill_constant init op."""

    def __init__(self, value=0.0) -> None:
        super().__init__(value, False)


__all__ = ["Constant"]
