"""`paddle.incubate.optimizer`."""

from ...optimizer.lookahead import LookAhead

__all__ = ["LookAhead"]
