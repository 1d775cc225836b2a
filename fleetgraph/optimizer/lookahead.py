"""Lookahead (`fluid.optimizer.LookaheadOptimizer`, `paddle.incubate.optimizer.LookAhead`): an inner
optimizer moves the parameters (the fast weights); every k steps the slow weights move alpha of the
way to them, and the fast weights restart from there.

As Paddle's: `param@SLOW` starts as a copy of the parameter (an assign in the startup program, after
its init), a step counter `lookahead_step` counts the steps, and at each k-th step
slow = alpha * fast + (1 - alpha) * slow is written to both. The ops follow the inner optimizer's;
Paddle picks the k-th step with a Switch, these with `where`. The step counter and the k-th-step
test are tagged as a learning-rate schedule's ops (LRSched: run once per step, on every pserver in
parameter-server training), each parameter's ops as its optimize ops (op_role_var [param, slow]: a
pserver runs them on the blocks it holds, after the inner update), so that data-parallel replicas
and parameter-server training move the slow weights as one process does.
"""

from __future__ import annotations

import numbers

from ..ir import FleetgraphTypeError, FleetgraphValueError, OpRole
from ..ir.framework import default_startup_program
from ..ir.program import Variable
from ..layers.math import elementwise_add, equal, floor, scale, where
from ..layers.tensor import assign, create_global_var


class LookAhead:
    def __init__(self, inner_optimizer, alpha=0.5, k=5, name=None) -> None:
        if not callable(getattr(inner_optimizer, "minimize", None)):
            raise FleetgraphTypeError(f"LookAhead: inner_optimizer expected an optimizer, got {inner_optimizer!r}")
        if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not 0.0 <= alpha <= 1.0:
            raise FleetgraphValueError(f"LookAhead: alpha expected a float in [0, 1], got {alpha!r}")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise FleetgraphValueError(f"LookAhead: k expected a positive int, got {k!r}")
        self.inner_optimizer, self.alpha, self.k = inner_optimizer, float(alpha), k

    def minimize(self, loss, startup_program=None, parameters=None, no_grad_set=None, parameter_list=None):
        if not isinstance(loss, Variable):
            raise FleetgraphTypeError(f"LookAhead.minimize: loss expected a Variable, got {type(loss).__name__}")
        result = self.inner_optimizer.minimize(
            loss, startup_program, parameters=parameters, no_grad_set=no_grad_set, parameter_list=parameter_list
        )
        program = loss.block.program
        startup = (startup_program or default_startup_program()).global_block()
        params = [p for p in program.global_block().all_parameters() if p.trainable]
        with program._op_role_guard(OpRole.LRSched):
            step = create_global_var([1], 0.0, "float32", persistable=True, name="lookahead_step")
            program.global_block().append_op("increment", {"X": [step]}, {"Out": [step]}, {"step": 1.0})
            at_k = equal(step, scale(floor(scale(step, 1.0 / self.k)), float(self.k)))  # step % k == 0
        for param in params:
            slow = program.global_block().create_var(f"{param.name}@SLOW", param.shape, param.dtype, persistable=True)
            twin = startup.create_var(slow.name, param.shape, param.dtype, persistable=True)
            startup.append_op("assign", {"X": [param.name]}, {"Out": [twin]})
            with program._optimized_guard([param, slow]):
                moved = elementwise_add(scale(param, self.alpha), scale(slow, 1.0 - self.alpha))
                assign(where(at_k, moved, slow), slow)
                assign(where(at_k, moved, param), param)
        return result

    def __getattr__(self, name):
        if name == "inner_optimizer":
            raise AttributeError(name)
        return getattr(self.inner_optimizer, name)


LookaheadOptimizer = LookAhead
