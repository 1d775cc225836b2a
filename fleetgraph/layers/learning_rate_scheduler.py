"""Fluid's learning-rate schedules (`fluid.layers.exponential_decay`, ...): ops that compute the
rate from a global step counter, as Paddle 1.x builds them. Pass the returned variable to an
optimizer as its learning_rate.

The counter `@LR_DECAY_COUNTER@` is one persistable int64 [1] shared by every schedule of a program:
its startup value is begin - 1 and an `increment` op at the very start of the main program makes it
`begin` in the first step (0; noam_decay counts from 1). Every op carries the LRSched role, so the
parameter-server transpiler moves them to the pservers, which then step the schedule once per
optimization, and a single process, collective ranks and pservers all see the same rates.

Paddle's piecewise_decay and linear_lr_warmup choose their rate with a Switch of conditional blocks;
here they choose it with `where` ops (the same rates, no sub-blocks).

In Fluid's imperative mode (`fluid.dygraph.guard()`) each returns the `fluid.dygraph` decay object of
the same arguments instead (`noam_decay` a `NoamDecay`, ...), as Paddle 1.8's do: the object gives the
rate and steps itself when the optimizer calls it. Those classes sit above this package (they are
`paddle.optimizer.lr` schedulers to the optimizers), so `fluid.dygraph` hands them down with
`set_imperative_decays` when it is imported, as `import fleetgraph` does."""

from __future__ import annotations

import functools
import inspect
import math

from ..dygraph import mode
from ..initializer import Constant
from ..ir import FleetgraphError, OpRole
from ..ir.framework import default_main_program
from ..ir.program import Variable
from .helper import LayerHelper
from .math import (
    ceil,
    cos,
    elementwise_div,
    elementwise_max,
    elementwise_min,
    elementwise_pow,
    exp,
    floor,
    less_than,
    scale,
    where,
)
from .tensor import cast, fill_constant

LR_DECAY_COUNTER = "@LR_DECAY_COUNTER@"

__all__ = [
    "autoincreased_step_counter",
    "cosine_decay",
    "exponential_decay",
    "inverse_time_decay",
    "linear_lr_warmup",
    "natural_exp_decay",
    "noam_decay",
    "piecewise_decay",
    "polynomial_decay",
]


def autoincreased_step_counter(counter_name=None, begin=1, step=1) -> Variable:
    """A persistable int64 [1] counter: begin in the first run of the program, then + step per run."""
    helper = LayerHelper("global_step_counter")
    name = counter_name or "@STEP_COUNTER@"
    main = helper.main_program.global_block()
    if main.has_var(name):
        return main.var(name)
    counter = helper.create_global_variable([1], "int64", persistable=True, name=name)
    counter.stop_gradient = True
    helper.set_variable_initializer(counter, Constant(begin - 1, force_cpu=True))
    main._prepend_op("increment", {"X": [counter]}, {"Out": [counter]}, {"step": float(step)})
    return counter


_IMPERATIVE_DECAYS: dict[str, type] = {}  # fluid.dygraph's decay classes by name (set_imperative_decays)


def set_imperative_decays(classes: dict[str, type]) -> None:
    """The `fluid.dygraph` decay classes (`{"NoamDecay": NoamDecay, ...}`) the schedules return in
    imperative mode."""
    _IMPERATIVE_DECAYS.update(classes)


def _schedule(imperative: str, **fixed):
    """A schedule: in imperative mode the decay object `imperative` of the same arguments by name
    (plus `fixed`, as Paddle passes them); else its ops, tagged LRSched."""

    def decorate(build):
        signature = inspect.signature(build)

        @functools.wraps(build)
        def schedule(*args, **kwargs):
            if mode.in_dygraph_mode():
                if imperative not in _IMPERATIVE_DECAYS:
                    raise FleetgraphError(
                        f"{build.__name__}: imperative mode returns fluid.dygraph.{imperative}; expected "
                        "fleetgraph.fluid imported (import fleetgraph does it)"
                    )
                bound = signature.bind(*args, **kwargs)
                bound.apply_defaults()
                return _IMPERATIVE_DECAYS[imperative](**bound.arguments, **fixed)
            with default_main_program()._op_role_guard(OpRole.LRSched):
                return build(*args, **kwargs)

        return schedule

    return decorate


def _global_step(begin=0) -> Variable:
    return cast(autoincreased_step_counter(LR_DECAY_COUNTER, begin=begin, step=1), "float32")


def _const(value: float) -> Variable:
    return fill_constant([1], "float32", float(value))


def _epochs(decay_steps, staircase) -> Variable:
    div = scale(_global_step(), 1.0 / decay_steps)
    return floor(div) if staircase else div


@_schedule("ExponentialDecay")
def exponential_decay(learning_rate, decay_steps, decay_rate, staircase=False):
    """learning_rate * decay_rate ^ (step / decay_steps) (the exponent floored when staircase)."""
    epochs = _epochs(decay_steps, staircase)  # the counter's ops first, as Paddle's order
    return scale(elementwise_pow(_const(decay_rate), epochs), learning_rate)


@_schedule("NaturalExpDecay")
def natural_exp_decay(learning_rate, decay_steps, decay_rate, staircase=False):
    """learning_rate * exp(-decay_rate * step / decay_steps)."""
    return scale(exp(scale(_epochs(decay_steps, staircase), -decay_rate)), learning_rate)


@_schedule("InverseTimeDecay")
def inverse_time_decay(learning_rate, decay_steps, decay_rate, staircase=False):
    """learning_rate / (1 + decay_rate * step / decay_steps)."""
    return elementwise_div(_const(learning_rate), scale(_epochs(decay_steps, staircase), decay_rate, 1.0))


@_schedule("PolynomialDecay")
def polynomial_decay(learning_rate, decay_steps, end_learning_rate=0.0001, power=1.0, cycle=False):
    """(learning_rate - end) * (1 - step / decay_steps) ^ power + end, the step held at decay_steps;
    with cycle, decay_steps grows to the next multiple of itself past the step instead."""
    step = _global_step()
    if cycle:
        periods = elementwise_max(ceil(scale(step, 1.0 / decay_steps)), _const(1.0))
        fraction = elementwise_div(step, scale(periods, float(decay_steps)))
    else:
        fraction = scale(elementwise_min(step, _const(decay_steps)), 1.0 / decay_steps)
    remaining = scale(fraction, -1.0, 1.0)
    return scale(elementwise_pow(remaining, _const(power)), learning_rate - end_learning_rate, end_learning_rate)


@_schedule("PiecewiseDecay", begin=0)
def piecewise_decay(boundaries, values):
    """values[i] while the step is below boundaries[i]; values[-1] from the last boundary on."""
    if len(values) != len(boundaries) + 1:
        raise ValueError(
            f"piecewise_decay: {len(boundaries)} boundaries need {len(boundaries) + 1} values; got {len(values)}"
        )
    step = _global_step()
    lr = _const(values[-1])
    for boundary, value in reversed(list(zip(boundaries, values))):
        lr = where(less_than(step, _const(boundary)), _const(value), lr)
    return lr


@_schedule("NoamDecay")
def noam_decay(d_model, warmup_steps, learning_rate=1.0):
    """learning_rate * d_model^-0.5 * min(step^-0.5, warmup_steps^-1.5 * step), the step from 1."""
    step = _global_step(begin=1)
    a = elementwise_pow(step, _const(-0.5))
    b = scale(step, warmup_steps**-1.5)
    return scale(elementwise_min(a, b), learning_rate * d_model**-0.5)


@_schedule("CosineDecay")
def cosine_decay(learning_rate, step_each_epoch, epochs):
    """learning_rate * 0.5 * (cos(epoch * pi / epochs) + 1), epoch = floor(step / step_each_epoch)."""
    epoch = floor(scale(_global_step(), 1.0 / step_each_epoch))
    angle = scale(scale(epoch, math.pi), 1.0 / epochs)
    return scale(scale(cos(angle), 1.0, 1.0), learning_rate * 0.5)


@_schedule("LinearLrWarmup")
def linear_lr_warmup(learning_rate, warmup_steps, start_lr, end_lr):
    """start_lr + (end_lr - start_lr) * step / warmup_steps for the first warmup_steps steps, then
    learning_rate (a float, or another schedule's variable)."""
    step = _global_step()
    warming = scale(scale(step, 1.0 / warmup_steps), float(end_lr) - float(start_lr), float(start_lr))
    after = learning_rate if isinstance(learning_rate, Variable) else _const(learning_rate)
    return where(less_than(step, _const(warmup_steps)), warming, after)
