"""`paddle.nn.initializer.assign`: Assign, a parameter set to a given array, list or tensor."""

from __future__ import annotations

import numpy as np

from ...dygraph.tensor import Tensor
from ...initializer import NumpyArrayInitializer
from ...ir.program import Variable


class Assign(NumpyArrayInitializer):
    """`Assign(value, name=None)`: an assign_value init op writing `value` (a NumPy array, a list, or
    an eager Tensor, read once here) into the parameter, whose shape it must have."""

    def __init__(self, value, name=None) -> None:
        if isinstance(value, Tensor):
            value = value.numpy()
        elif isinstance(value, Variable) or not isinstance(value, (np.ndarray, list)):
            raise TypeError(f"Assign: value expected a numpy.ndarray, a list or a Tensor, got {type(value).__name__}")
        super().__init__(np.array(value))


__all__ = ["Assign"]
