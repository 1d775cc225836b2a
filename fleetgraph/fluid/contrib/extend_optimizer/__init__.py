"""`fluid.contrib.extend_with_decoupled_weight_decay`: an optimizer class whose minimize also decays
each parameter by its value before the update (AdamW's decoupled weight decay), as Paddle 1.8's."""

from __future__ import annotations

from ....ir import Variable, name_scope
from ....layers.math import elementwise_sub, scale
from ....layers.tensor import assign
from ....optimizer import Optimizer

__all__ = ["extend_with_decoupled_weight_decay"]


class DecoupledWeightDecay:
    """Mixed in before an optimizer class: param -= coeff * param, appended after the backward ops and
    before the update, so the update reads the decayed parameter and the gradient of the old one."""

    def __init__(self, coeff=0.0, apply_decay_param_fun=None, **kwargs) -> None:
        if isinstance(coeff, bool) or not isinstance(coeff, (float, Variable)):
            raise TypeError("coeff should be float or Variable.")
        self._coeff, self._apply_decay_param_fun, self._params_name = coeff, apply_decay_param_fun, set()
        super().__init__(**kwargs)

    def _decay(self, params_grads) -> None:
        if isinstance(self._coeff, float) and self._coeff == 0.0:
            return
        for param, grad in params_grads:
            if grad is None or (
                self._apply_decay_param_fun is not None and not self._apply_decay_param_fun(param.name)
            ):
                continue
            if isinstance(self._coeff, Variable) and self._coeff.dtype != param.dtype:
                raise TypeError(
                    f"the type of coeff({self._coeff.dtype}) and parameter({param.dtype}) is not consistent."
                )
            with param.block.program._optimized_guard([param, grad]), name_scope("weight decay"):
                decayed = param * self._coeff if isinstance(self._coeff, Variable) else scale(param, self._coeff)
                assign(elementwise_sub(param, decayed), output=param)
            self._params_name.add(param.name)

    def minimize(self, loss, startup_program=None, parameter_list=None, no_grad_set=None):
        params_grads = self.backward(loss, startup_program, parameter_list, no_grad_set)
        self._decay(params_grads)
        return self.apply_optimize(loss, startup_program, params_grads), params_grads

    def __str__(self) -> str:
        return " ".join(["Weight Decay, params:", ",".join(self._params_name)])


def extend_with_decoupled_weight_decay(base_optimizer):
    """`AdamW = extend_with_decoupled_weight_decay(fluid.optimizer.Adam)`;
    `AdamW(weight_decay=0.01, learning_rate=0.1, apply_decay_param_fun=None)`."""
    if not (isinstance(base_optimizer, type) and issubclass(base_optimizer, Optimizer)):
        raise TypeError("The input(base_optimizer) should be a derived class of Optimizer.")

    class OptimizerWithDecoupledWeightDecay(DecoupledWeightDecay, base_optimizer):
        def __init__(self, weight_decay, apply_decay_param_fun=None, **kwargs) -> None:
            super().__init__(weight_decay, apply_decay_param_fun, **kwargs)

    return OptimizerWithDecoupledWeightDecay
