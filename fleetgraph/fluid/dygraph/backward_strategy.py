"""`fluid.dygraph.BackwardStrategy`: how backward() adds up the gradients a tensor gets from several ops.

Paddle 1.8 sums them in a fixed order (the reverse of the ops' creation) with sort_sum_gradient=True
and in whatever order they arrive otherwise. The eager tape here always sums them in one fixed
order (newest op first), which is what sort_sum_gradient=True asks for and one of the orders
False allows, so either value gives what it promises.
"""

from __future__ import annotations

__all__ = ["BackwardStrategy"]


class BackwardStrategy:
    """`strategy = BackwardStrategy(); strategy.sort_sum_gradient = True; loss.backward(strategy)`."""

    def __init__(self) -> None:
        self.sort_sum_gradient = False
