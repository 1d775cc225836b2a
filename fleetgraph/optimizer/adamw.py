"""Paddle 2.0's AdamW: Adam with decoupled weight decay (Loshchilov & Hutter), the decay scaled by the
learning rate.

Not Fluid 1.8's `extend_with_decoupled_weight_decay` (fluid/contrib/extend_optimizer), which
subtracts coeff * param after the backward pass: 2.0's AdamW multiplies each parameter by
(1 - learning_rate * weight_decay) right before its adam op, after gradient clipping, so the update
reads the decayed parameter and the gradient of the old one."""

from __future__ import annotations

from ..ir import Variable, unique_name
from .base import update_block
from .optimizer import Adam


class AdamW(Adam):
    """param = param * (1 - lr * weight_decay), then Adam's update, for each parameter whose name
    `apply_decay_param_fun` accepts (all when it is None). With a float learning rate the factor is
    that float's (a parameter's own ParamAttr learning_rate does not scale it); with a scheduler it
    is the parameter's learning rate variable's, as Paddle 2.0's."""

    def __init__(
        self,
        learning_rate=0.001,
        beta1=0.9,
        beta2=0.999,
        epsilon=1e-8,
        parameters=None,
        weight_decay=0.01,
        apply_decay_param_fun=None,
        grad_clip=None,
        lazy_mode=False,
        multi_precision=False,
        name=None,
    ) -> None:
        if not 0 <= beta1 < 1:
            raise ValueError("Invaild value of beta1, expect beta1 in [0,1).")
        if not 0 <= beta2 < 1:
            raise ValueError("Invaild value of beta2, expect beta2 in [0,1).")
        if not 0 <= epsilon:
            raise ValueError("Invaild value of epsilon, expect epsilon >= 0.")
        if isinstance(weight_decay, Variable):
            raise NotImplementedError("AdamW: weight_decay as a Tensor is not built; expected a float")
        if not isinstance(weight_decay, float):
            raise TypeError("coeff should be float or Tensor.")
        super().__init__(
            learning_rate=learning_rate,
            beta1=beta1,
            beta2=beta2,
            epsilon=epsilon,
            parameters=parameters,
            grad_clip=grad_clip,
            lazy_mode=lazy_mode,
            multi_precision=multi_precision,
            name=name,
        )
        self._coeff, self._apply_decay_param_fun, self._params_name = weight_decay, apply_decay_param_fun, set()

    def _op_slots(self, program, startup, param, grad, lr):
        if self._apply_decay_param_fun is None or self._apply_decay_param_fun(param.name):
            self._append_decoupled_weight_decay(update_block(program), param, lr)
        return super()._op_slots(program, startup, param, grad, lr)

    def _append_decoupled_weight_decay(self, block, param, lr) -> None:
        """param *= 1 - lr * coeff, in place, before the adam op."""
        self._params_name.add(param.name)
        stop_gradient = param.stop_gradient  # an eager op writing into a Tensor marks it stop-gradient
        if isinstance(self._learning_rate, float):
            factor = 1.0 - self._learning_rate * self._coeff
            block.append_op("scale", {"X": [param]}, {"Out": [param]}, {"scale": factor})
        else:
            factor_var = block.create_var(unique_name.generate(f"{param.name}_decay_coeff"), [1], lr.dtype)
            block.append_op("scale", {"X": [lr]}, {"Out": [factor_var]}, {"scale": -self._coeff, "bias": 1.0})
            block.append_op("elementwise_mul", {"X": [param], "Y": [factor_var]}, {"Out": [param]}, {"axis": -1})
        param.stop_gradient = stop_gradient

    def __str__(self) -> str:
        return " ".join(["Weight Decay, params:", ",".join(self._params_name)])
