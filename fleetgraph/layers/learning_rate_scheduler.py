"""Fluid's learning-rate schedules (`fluid.layers.exponential_decay`, ...): ops that compute the
rate from a global step counter, as Paddle 1.x builds them. Pass the returned variable to an
optimizer as its learning_rate.

The counter `@LR_DECAY_COUNTER@` is one persistable int64 [1] shared by every schedule of a program:
its startup value is begin - 1 and an `increment` op at the very start of the main program makes it
`begin` in the first step (0; noam_decay counts from 1). Every op carries the LRSched role, so the
parameter-server transpiler moves them to the pservers, which then step the schedule once per
optimization, and a single process, collective ranks and pservers all see the same rates.

Paddle's piecewise_decay and linear_lr_warmup choose their rate with a Switch of conditional blocks;
here they choose it with `where` ops (the same rates, no sub-blocks)."""

from __future__ import annotations

import functools
import math

from ..initializer import Constant
from ..ir import OpRole
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


def _lr_ops(build):
    """A schedule's ops, tagged LRSched."""

    @functools.wraps(build)
    def schedule(*args, **kwargs):
        with default_main_program()._op_role_guard(OpRole.LRSched):
            return build(*args, **kwargs)

    return schedule


def _global_step(begin=0) -> Variable:
    return cast(autoincreased_step_counter(LR_DECAY_COUNTER, begin=begin, step=1), "float32")


def _const(value: float) -> Variable:
    return fill_constant([1], "float32", float(value))


def _epochs(decay_steps, staircase) -> Variable:
    div = scale(_global_step(), 1.0 / decay_steps)
    return floor(div) if staircase else div


@_lr_ops
def exponential_decay(learning_rate, decay_steps, decay_rate, staircase=False):
    """learning_rate * decay_rate ^ (step / decay_steps) (the exponent floored when staircase)."""
    epochs = _epochs(decay_steps, staircase)  # the counter's ops first, as Paddle's order
    return scale(elementwise_pow(_const(decay_rate), epochs), learning_rate)


@_lr_ops
def natural_exp_decay(learning_rate, decay_steps, decay_rate, staircase=False):
    """learning_rate * exp(-decay_rate * step / decay_steps)."""
    return scale(exp(scale(_epochs(decay_steps, staircase), -decay_rate)), learning_rate)


@_lr_ops
def inverse_time_decay(learning_rate, decay_steps, decay_rate, staircase=False):
    """learning_rate / (1 + decay_rate * step / decay_steps)."""
    return elementwise_div(_const(learning_rate), scale(_epochs(decay_steps, staircase), decay_rate, 1.0))


@_lr_ops
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


@_lr_ops
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


@_lr_ops
def noam_decay(d_model, warmup_steps, learning_rate=1.0):
    """learning_rate * d_model^-0.5 * min(step^-0.5, warmup_steps^-1.5 * step), the step from 1."""
    step = _global_step(begin=1)
    a = elementwise_pow(step, _const(-0.5))
    b = scale(step, warmup_steps**-1.5)
    return scale(elementwise_min(a, b), learning_rate * d_model**-0.5)


@_lr_ops
def cosine_decay(learning_rate, step_each_epoch, epochs):
    """learning_rate * 0.5 * (cos(epoch * pi / epochs) + 1), epoch = floor(step / step_each_epoch)."""
    epoch = floor(scale(_global_step(), 1.0 / step_each_epoch))
    angle = scale(scale(epoch, math.pi), 1.0 / epochs)
    return scale(scale(cos(angle), 1.0, 1.0), learning_rate * 0.5)


@_lr_ops
def linear_lr_warmup(learning_rate, warmup_steps, start_lr, end_lr):
    """start_lr + (end_lr - start_lr) * step / warmup_steps for the first warmup_steps steps, then
    learning_rate (a float, or another schedule's variable)."""
    step = _global_step()
    warming = scale(scale(step, 1.0 / warmup_steps), float(end_lr) - float(start_lr), float(start_lr))
    after = learning_rate if isinstance(learning_rate, Variable) else _const(learning_rate)
    return where(less_than(step, _const(warmup_steps)), warming, after)
