"""`fluid.dygraph.tracer`: the object that runs and records each op in imperative mode. Here that is
the eager engine's dispatch; Tracer is its 1.x face for code that traces ops itself."""

from __future__ import annotations

from ...dygraph import mode
from ...dygraph.engine import run_op

__all__ = ["Tracer"]


class Tracer:
    """`trace_op(type, inputs, outputs, attrs, stop_gradient)` runs an op on Tensors now, recorded
    for backward in train mode unless stop_gradient; eval_mode() records nothing."""

    def __init__(self) -> None:
        self._train_mode = True

    def trace_op(self, type, inputs, outputs, attrs, stop_gradient=False) -> None:
        listed = {slot: v if isinstance(v, (list, tuple)) else [v] for slot, v in inputs.items()}
        written = {slot: v if isinstance(v, (list, tuple)) else [v] for slot, v in outputs.items()}
        if self._train_mode and not stop_gradient:
            run_op(type, listed, written, attrs)
            return
        with mode.no_grad():
            run_op(type, listed, written, attrs)

    def train_mode(self) -> None:
        self._train_mode = True

    def eval_mode(self) -> None:
        self._train_mode = False
