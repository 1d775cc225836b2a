"""`fluid.dygraph.parallel`: Paddle 1.8's data parallelism in imperative mode, over the eager
engine's trainer environment and collective ring (`dygraph.parallel`).

A 1.8 script asks for each step of it itself, and this module does exactly those steps:
  1. `strategy = prepare_context()`: the trainers' ring started from the launcher's environment
     (None for a single trainer, as Paddle's);
  2. `model = DataParallel(model, strategy)`: calls go to the model (no parameter broadcast: 1.8
     scripts start every trainer from one seed);
  3. `loss = model.scale_loss(loss)`: the loss divided by the number of trainers;
  4. `loss.backward(); model.apply_collective_grads()`: each trainable parameter's gradient summed
     over the trainers (c_allreduce_sum), so the step follows the mean gradient.
"""

from __future__ import annotations

import numpy as np

from ...dygraph.dispatch import bind
from ...dygraph.engine import run_op
from ...dygraph.mode import no_grad
from ...dygraph.parallel import RING_ID, init_ring
from ...dygraph.parallel import ParallelEnv as _ParallelEnv
from ...dygraph.tensor import Tensor
from ...ir import FleetgraphError
from ...nn.layer.layers import Layer as _AnyLayer
from ...ops.selected_rows import SelectedRows
from .layers import Layer

__all__ = ["prepare_context", "ParallelEnv", "DataParallel"]


class ParallelEnv(_ParallelEnv):
    """This trainer's place among the trainers (`nranks`, `local_rank`, `dev_id`, endpoints)."""

    dev_id = property(lambda self: self.device_id)


class ParallelStrategy:
    """The trainers a DataParallel model averages over: their number, this one's rank and endpoints."""

    def __init__(self) -> None:
        env = ParallelEnv()
        self.nranks, self.local_rank = env.nranks, env.local_rank
        self.trainer_endpoints, self.current_endpoint = env.trainer_endpoints, env.current_endpoint


def prepare_context(strategy: ParallelStrategy | None = None) -> ParallelStrategy | None:
    """Step 1: join the ring of the trainers the launcher started; the strategy, or None alone."""
    strategy = ParallelStrategy() if strategy is None else strategy
    if strategy.nranks < 2:
        return None
    init_ring(strategy.local_rank, strategy.nranks, strategy.trainer_endpoints)
    return strategy


class DataParallel(Layer):
    """Steps 2-4: wraps a Layer (and is one); scale_loss and apply_collective_grads do nothing for a
    single trainer (no strategy, or one of one trainer)."""

    def __init__(self, layers, strategy: ParallelStrategy | None = None) -> None:
        if not isinstance(layers, _AnyLayer):
            raise FleetgraphError(f"DataParallel: expected a Layer, got {type(layers).__name__}")
        super().__init__()
        self._layers, self._strategy = layers, strategy
        self._nranks = 1 if strategy is None else strategy.nranks

    def forward(self, *inputs, **kwargs):
        return self._layers(*inputs, **kwargs)

    def scale_loss(self, loss):
        """Step 3."""
        return loss if self._nranks < 2 else bind("scale", {"X": [loss]}, {"scale": 1.0 / self._nranks})

    def apply_collective_grads(self) -> None:
        """Step 4, after backward(): every trainer must call it, with gradients of the same parameters."""
        if self._nranks < 2:
            return
        with no_grad():
            for p in self._layers.parameters():
                if not getattr(p, "trainable", True) or p._grad is None:
                    continue
                grad = p._grad.to_dense(np) if isinstance(p._grad, SelectedRows) else p._grad
                summed = Tensor(grad)
                run_op("c_allreduce_sum", {"X": [summed]}, {"Out": [summed]}, {"ring_id": RING_ID})
                p._grad = summed.value

    def state_dict(self, *args, **kwargs):
        return self._layers.state_dict(*args, **kwargs)

    def set_dict(self, *args, **kwargs):
        return self._layers.set_dict(*args, **kwargs)

    load_dict = set_state_dict = set_dict
