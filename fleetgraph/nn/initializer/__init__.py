"""`paddle.nn.initializer`: the 2.x initializers, whose arguments differ from Fluid's (`Normal(mean,
std)`), in Paddle 2.0's submodules (constant, normal, uniform, xavier, kaiming, assign), plus
Fluid's Bilinear."""

from __future__ import annotations

from ...initializer import Bilinear, set_global_initializer
from . import assign, constant, kaiming, normal, uniform, xavier  # noqa: F401 (Paddle's submodules)
from .assign import Assign
from .constant import Constant
from .kaiming import KaimingNormal, KaimingUniform
from .normal import Normal, TruncatedNormal
from .uniform import Uniform
from .xavier import XavierNormal, XavierUniform

__all__ = [
    "Assign",
    "Bilinear",
    "Constant",
    "KaimingNormal",
    "KaimingUniform",
    "Normal",
    "TruncatedNormal",
    "Uniform",
    "XavierNormal",
    "XavierUniform",
    "set_global_initializer",
]
