"""`paddle.metric`."""

from ..layers.nn import accuracy

__all__ = ["accuracy"]
