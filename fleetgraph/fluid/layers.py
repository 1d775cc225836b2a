"""`fluid.layers`, with the submodules scripts reach through it (`fluid.layers.nn`, `fluid.layers.tensor`,
`fluid.layers.math_op_patch`...)."""

from .. import absent
from ..layers import *  # noqa: F401,F403
from ..layers import (  # noqa: F401
    __all__,  # noqa: F401
    control_flow,
    io,
    loss,
    nn,
    pointwise,
    tensor,
)
from ..layers import math as math_op_patch  # noqa: F401
from ..layers import nn as metric_op  # noqa: F401

ops = pointwise  # Paddle's layers/ops.py: the generated unary activations

__getattr__ = absent.getattr_for(__name__)
