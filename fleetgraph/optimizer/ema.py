"""`fluid.optimizer.ExponentialMovingAverage` / `paddle.static.ExponentialMovingAverage`: a shadow
copy of every parameter, averaged after each step, to evaluate with.

    ema = fluid.optimizer.ExponentialMovingAverage(0.999)   # after the network is built
    ema.update()                                            # after optimizer.minimize(loss)
    ...train...
    with ema.apply(exe):                                    # parameters <- bias-corrected averages
        ...evaluate...                                      # and back afterwards

As Paddle's: `update()` appends, in the name scope /moving_average/, ema = decay * ema + (1 - decay) *
param per parameter (the averages start at zero) and a step counter `@EMA_STEP_COUNTER@`; with
`thres_steps` (a variable holding the step) the decay is min(decay, (1 + t) / (10 + t)). `apply`
runs a program that keeps each parameter aside and writes ema / (1 - decay^steps) into it (the
nominal decay, also with thres_steps); `restore` puts the parameters back.
"""

from __future__ import annotations

from ..ir import FleetgraphTypeError, FleetgraphValueError, Program, name_scope, program_guard, unique_name
from ..ir.framework import default_main_program
from ..ir.program import Variable
from ..layers import learning_rate_scheduler as schedules
from ..layers.math import elementwise_add, elementwise_div, elementwise_min, elementwise_mul, elementwise_pow, scale
from ..layers.tensor import assign, cast, create_global_var, fill_constant

STEP_COUNTER = "@EMA_STEP_COUNTER@"


class AveragedParameters:
    """What ExponentialMovingAverage and ModelAverage share: `apply` runs `apply_program` (each
    parameter kept aside as '<param>@EMA_KEPT', its average written into it), `restore` puts the
    parameters back."""

    _params: list

    def _restore_program(self) -> Program:
        program, startup = Program(), Program()
        block = program.global_block()
        with program_guard(program, startup):
            for param in self._params:
                p = block.create_var(param.name, param.shape, param.dtype, persistable=True)
                kept = block.create_var(_kept(param.name), param.shape, param.dtype, persistable=True)
                assign(kept, p)
        return program

    def apply(self, executor, need_restore=True):
        """A context: the parameters hold their averages inside, their own values again after
        (unless need_restore=False; then call restore)."""
        return _Applied(self, executor, need_restore)

    def restore(self, executor) -> None:
        executor.run(self.restore_program)


class ExponentialMovingAverage(AveragedParameters):
    def __init__(self, decay=0.999, thres_steps=None, name=None) -> None:
        if isinstance(decay, bool) or not isinstance(decay, (int, float)) or not 0.0 <= decay <= 1.0:
            raise FleetgraphValueError(f"ExponentialMovingAverage: decay expected a float in [0, 1], got {decay!r}")
        if thres_steps is not None and not isinstance(thres_steps, Variable):
            raise FleetgraphTypeError(
                f"ExponentialMovingAverage: thres_steps expected a Variable (the step) or None, got "
                f"{type(thres_steps).__name__}"
            )
        self._decay, self._thres_steps, self._name = float(decay), thres_steps, name or ""
        program = default_main_program()
        self._params = [p for p in program.global_block().all_parameters() if p.trainable]
        if not self._params:
            raise FleetgraphValueError(
                "ExponentialMovingAverage: the program has no parameters; build the network first"
            )
        self._emas = {
            p.name: create_global_var(
                p.shape, 0.0, p.dtype, persistable=True, name=unique_name.generate(f"{p.name}.ema")
            )
            for p in self._params
        }
        self._updated = False
        self.apply_program, self.restore_program = self._apply_program(), self._restore_program()

    def _decay_var(self) -> Variable:
        decay = fill_constant([1], "float32", self._decay)
        if self._thres_steps is None:
            return decay
        t = cast(self._thres_steps, "float32")
        return elementwise_min(decay, elementwise_div(scale(t, 1.0, 1.0), scale(t, 1.0, 10.0)))

    def update(self) -> None:
        """Append the averaging ops to the main program (once, after minimize)."""
        if self._updated:
            raise FleetgraphValueError("ExponentialMovingAverage.update: called twice; the ops are already there")
        self._updated = True
        program = default_main_program()
        with name_scope("moving_average"):
            schedules.autoincreased_step_counter(STEP_COUNTER, begin=1)
            decay = self._decay_var()
            keep = scale(decay, -1.0, 1.0)  # 1 - decay
            for param in self._params:
                ema = self._emas[param.name]
                with program._optimized_guard([param, ema]):
                    new = elementwise_add(elementwise_mul(ema, decay), elementwise_mul(param, keep))
                    assign(new, ema)

    def _apply_program(self) -> Program:
        program, startup = Program(), Program()
        block = program.global_block()
        with program_guard(program, startup), name_scope("moving_average"):
            steps = cast(block.create_var(STEP_COUNTER, [1], "int64", persistable=True), "float32")
            decay_pow = elementwise_pow(fill_constant([1], "float32", self._decay), steps)
            correction = scale(decay_pow, -1.0, 1.0)  # 1 - decay^steps
            for param in self._params:
                p = block.create_var(param.name, param.shape, param.dtype, persistable=True)
                kept = block.create_var(_kept(param.name), param.shape, param.dtype, persistable=True)
                ema = block.create_var(self._emas[param.name].name, param.shape, param.dtype, persistable=True)
                assign(p, kept)
                assign(elementwise_div(ema, correction, axis=-1), p)
        return program

    def apply(self, executor, need_restore=True):
        if not self._updated:
            raise FleetgraphValueError("ExponentialMovingAverage.apply: call update() after minimize first")
        return super().apply(executor, need_restore)


class _Applied:
    def __init__(self, ema, executor, need_restore) -> None:
        self.ema, self.executor, self.need_restore = ema, executor, need_restore
        executor.run(ema.apply_program)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        if self.need_restore:
            self.ema.restore(self.executor)


def _kept(name: str) -> str:
    return f"{name}@EMA_KEPT"
