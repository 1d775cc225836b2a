"""`fluid.average.WeightedAverage`: a running weighted mean of numbers or arrays, in Python (deprecated
in Paddle for fluid.metrics, and warns so)."""

from __future__ import annotations

import warnings

import numpy as np

__all__ = ["WeightedAverage"]


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) or (isinstance(value, np.ndarray) and value.shape == (1,))


class WeightedAverage:
    def __init__(self) -> None:
        warnings.warn(
            f"The {type(self).__name__} is deprecated, please use fluid.metrics.Accuracy instead.",
            Warning,
            stacklevel=2,
        )
        self.reset()

    def reset(self) -> None:
        self.numerator = None
        self.denominator = None

    def add(self, value, weight) -> None:
        if not (_is_number(value) or isinstance(value, np.ndarray)):
            raise ValueError("The 'value' must be a number(int, float) or a numpy ndarray.")
        if not _is_number(weight):
            raise ValueError("The 'weight' must be a number(int, float).")
        if self.numerator is None:
            self.numerator, self.denominator = value * weight, weight
        else:
            self.numerator += value * weight
            self.denominator += weight

    def eval(self):
        if self.numerator is None:
            raise ValueError("There is no data to be averaged in WeightedAverage.")
        return self.numerator / self.denominator
