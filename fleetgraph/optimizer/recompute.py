"""RecomputeOptimizer (`fluid.optimizer.RecomputeOptimizer`, `paddle.incubate.optimizer.
RecomputeOptimizer`): the inner optimizer's updates, with a backward pass that recomputes the
forward segments between the checkpoints given by `_set_checkpoints` instead of keeping their
activations (transpiler/backward.py builds it as Paddle's append_backward does). The values are the
inner optimizer's to the bit; the executor keeps a run's variables until the run ends, so the
program has Paddle's form but holds as much memory as one without recomputation.
"""

from __future__ import annotations

from ..ir import FleetgraphError, FleetgraphTypeError
from ..ir.program import Variable
from ..transpiler.backward import append_backward


class RecomputeOptimizer:
    def __init__(self, optimizer) -> None:
        if not callable(getattr(optimizer, "apply_optimize", None)):
            raise FleetgraphTypeError(f"RecomputeOptimizer: optimizer expected an optimizer, got {optimizer!r}")
        self._optimizer = optimizer
        self._checkpoints: list | None = None

    def _set_checkpoints(self, checkpoints) -> None:
        if not isinstance(checkpoints, (list, tuple)) or not all(isinstance(c, (Variable, str)) for c in checkpoints):
            raise FleetgraphTypeError(
                f"RecomputeOptimizer._set_checkpoints: expected a list of Variables, got {checkpoints!r}"
            )
        self._checkpoints = list(checkpoints)

    def backward(self, loss, startup_program=None, parameter_list=None, no_grad_set=None, callbacks=None):
        if not self._checkpoints:
            raise FleetgraphError(
                "RecomputeOptimizer: no checkpoints; call _set_checkpoints([...]) with the variables to keep first"
            )
        params = parameter_list if parameter_list is not None else self._optimizer._parameter_list
        return append_backward(loss, params, no_grad_set, checkpoints=self._checkpoints)

    def apply_optimize(self, loss, startup_program, params_grads):
        return self._optimizer.apply_optimize(loss, startup_program, params_grads)

    def apply_gradients(self, params_grads):
        return self._optimizer.apply_gradients(params_grads)

    def minimize(self, loss, startup_program=None, parameter_list=None, no_grad_set=None, parameters=None):
        if not isinstance(loss, Variable):
            raise FleetgraphTypeError(
                f"RecomputeOptimizer.minimize: loss expected a Variable, got {type(loss).__name__}"
            )
        params_grads = self.backward(loss, startup_program, parameters or parameter_list, no_grad_set)
        return self.apply_optimize(loss, startup_program, params_grads), params_grads

    def __getattr__(self, name):  # the inner optimizer's learning rate, state, ...
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self._optimizer, name)
