"""Paddle 2.0's tensor functions (`paddle.arange`, `paddle.gather`, `paddle.pow` ...), one module per
family as Paddle's python/paddle/tensor; each also names the Tensor methods it adds, installed here on
eager Tensors and static Variables alike (a name either class already has is left as it is)."""

from __future__ import annotations

from ..dygraph.tensor import Tensor
from ..ir.program import Variable
from . import creation, linalg, logic, manipulation, math, random, search, stat
from .creation import *  # noqa: F401,F403
from .linalg import *  # noqa: F401,F403
from .logic import *  # noqa: F401,F403
from .manipulation import *  # noqa: F401,F403
from .math import *  # noqa: F401,F403
from .random import *  # noqa: F401,F403
from .search import *  # noqa: F401,F403
from .stat import *  # noqa: F401,F403

_FAMILIES = (creation, linalg, logic, manipulation, math, random, search, stat)

__all__ = [name for family in _FAMILIES for name in family.__all__]


def install_methods() -> None:
    """Each family's TENSOR_METHODS onto Tensor and Variable, where the class lacks the name."""
    for family in _FAMILIES:
        for name, function in family.TENSOR_METHODS.items():
            for cls in (Tensor, Variable):
                if name not in vars(cls):
                    setattr(cls, name, function)


install_methods()
