"""`paddle.nn.initializer`."""

from ..initializer import (
    Constant,
    KaimingNormal,
    KaimingUniform,
    Normal,
    TruncatedNormal,
    Uniform,
    XavierNormal,
    XavierUniform,
)

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
