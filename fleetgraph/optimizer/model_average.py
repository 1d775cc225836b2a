"""`fluid.optimizer.ModelAverage`: the parameters averaged over a sliding window of recent steps, to
evaluate with (Paddle 1.x's).

    optimizer.minimize(loss)
    model_average = fluid.optimizer.ModelAverage(0.15, min_average_window=10000, max_average_window=20000)
    ...train...
    with model_average.apply(exe):        # parameters <- their window averages, and back afterwards
        ...evaluate...

As Paddle's: one `average_accumulates` op per parameter (in /move_average/) keeps three partial sums
and three counters; the window restarts once it holds min_average_window steps and at least
min(max_average_window, steps * average_window_rate). `apply` keeps each parameter aside and writes
(sum_1 + sum_2 + sum_3) / (num_accumulates + old_num_accumulates) into it; `restore` puts it back.
"""

from __future__ import annotations

import numbers

from ..ir import FleetgraphValueError, Program, name_scope, program_guard, unique_name
from ..ir.framework import default_main_program
from ..layers.math import elementwise_div, sums
from ..layers.tensor import assign, cast, create_global_var
from .ema import AveragedParameters, _kept

_SUMS = ("sum_1", "sum_2", "sum_3")
_COUNTS = ("num_accumulates", "old_num_accumulates", "num_updates")


class ModelAverage(AveragedParameters):
    def __init__(
        self, average_window_rate, min_average_window=10000, max_average_window=10000, regularization=None, name=None
    ) -> None:
        if isinstance(average_window_rate, bool) or not isinstance(average_window_rate, numbers.Real):
            raise FleetgraphValueError(
                f"ModelAverage: average_window_rate expected a float, got {average_window_rate!r}"
            )
        if not 0 < int(min_average_window) <= int(max_average_window):
            raise FleetgraphValueError(
                f"ModelAverage: expected 0 < min_average_window ({min_average_window}) <= max_average_window "
                f"({max_average_window})"
            )
        self.average_window = float(average_window_rate)
        self.min_average_window, self.max_average_window = int(min_average_window), int(max_average_window)
        program = default_main_program()
        self._params = [p for p in program.global_block().all_parameters() if p.trainable]
        if not self._params:
            raise FleetgraphValueError("ModelAverage: the program has no parameters; build the network first")
        self._state = {p.name: self._accumulators(p) for p in self._params}
        block = program.global_block()
        attrs = {
            "average_window": self.average_window,
            "max_average_window": self.max_average_window,
            "min_average_window": self.min_average_window,
        }
        with name_scope("move_average"):
            for param in self._params:
                state = self._state[param.name]
                with program._optimized_guard([param, state["sum_1"]]):
                    ins = {"param": [param], **{f"in_{k}": [v] for k, v in state.items()}}
                    block.append_op("average_accumulates", ins, {f"out_{k}": [v] for k, v in state.items()}, attrs)
        self.apply_program, self.restore_program = self._apply_program(), self._restore_program()

    def _accumulators(self, param) -> dict:
        """Zeros in the main program and the startup program, per sum and counter."""
        state = {}
        for key in _SUMS + _COUNTS:
            shape, dtype = (param.shape, param.dtype) if key in _SUMS else ([1], "int64")
            name = unique_name.generate(f"{param.name}_{key}")
            state[key] = create_global_var(shape, 0.0, dtype, persistable=True, name=name)
        return state

    def _apply_program(self) -> Program:
        program, startup = Program(), Program()
        block = program.global_block()
        with program_guard(program, startup):
            for param in self._params:
                state = {
                    k: block.create_var(v.name, v.shape, v.dtype, persistable=True)
                    for k, v in self._state[param.name].items()
                }
                p = block.create_var(param.name, param.shape, param.dtype, persistable=True)
                assign(p, block.create_var(_kept(param.name), param.shape, param.dtype, persistable=True))
                count = cast(sums([state["num_accumulates"], state["old_num_accumulates"]]), param.dtype)
                total = sums([state[k] for k in _SUMS])
                assign(elementwise_div(total, count), p)
        return program
