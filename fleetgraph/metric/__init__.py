"""`paddle.metric`."""

from ..layers.nn import accuracy_v2 as accuracy

__all__ = ["accuracy"]
