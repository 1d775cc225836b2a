"""`fluid.dygraph.StaticModelRunner`: an inference model saved by `fluid.io.save_inference_model`,
loaded as a Layer that runs (and trains) in imperative mode, as Paddle 1.8's.

Steps:
  1. load the program and its persistable values (fluid.io.load_inference_model, into a scope of
     its own); a program whose ops run sub-blocks is refused (they cannot run eagerly);
  2. make each persistable an eager parameter named `<name>@LOADED`, as Paddle names them: those
     an op writes (batch_norm's running statistics) do not take gradients;
  3. forward replays the program's ops in order through the one dispatch on the inputs and the
     parameters, so the tape records them and backward() reaches the parameters and the inputs.
     Ops with an `is_test` attr run in training form after train() (the default, as Paddle's) and
     in inference form after eval().
"""

from __future__ import annotations

import numpy as np

from ...dygraph.dispatch import bind
from ...dygraph.tensor import ParamBase, Tensor
from ...executor import Executor, Scope, scope_guard
from ...ir import FleetgraphError
from ...store.persistence import load_inference_model
from .base import to_variable
from .layers import Layer

__all__ = ["StaticModelRunner"]

LOADED_SUFFIX = "@LOADED"


class StaticModelRunner(Layer):
    def __init__(self, model_dir: str, model_filename=None, params_filename=None) -> None:
        super().__init__()
        scope = Scope()  # step 1
        with scope_guard(scope):
            program, self._feed_names, fetches = load_inference_model(
                model_dir, Executor(), model_filename, params_filename
            )
        block = program.global_block()
        self._ops = list(block.ops)
        nested = sorted({op.type for op in self._ops if "sub_block" in op.attrs})
        if nested:
            raise NotImplementedError(
                f"StaticModelRunner: the model's ops {nested} run sub-blocks, which do not run in imperative mode"
            )
        self._fetch_names = [v.name for v in fetches]
        written = {n for op in self._ops for names in op.outputs.values() for n in names}
        self._persistables: dict[str, ParamBase] = {}
        for var in block.vars.values():  # step 2
            if not var.persistable or var.name not in scope.vars:
                continue
            param = ParamBase(np.array(scope.vars[var.name], copy=True), var.name + LOADED_SUFFIX)
            param.stop_gradient = var.name in written
            self._persistables[var.name] = param
            self.add_parameter(param.name, param)

    def forward(self, *inputs):
        """Step 3: the fetch targets for the feeds `inputs` (NumPy arrays or Tensors, in the saved
        feed order): one Tensor, or a list of them."""
        if len(inputs) != len(self._feed_names):
            raise FleetgraphError(f"StaticModelRunner: {len(inputs)} inputs; expected one per feed {self._feed_names}")
        env: dict[str, Tensor] = dict(self._persistables)
        for name, value in zip(self._feed_names, inputs):
            if not isinstance(value, (np.ndarray, Tensor)):
                raise TypeError(
                    f"StaticModelRunner: input {name!r} expected a numpy array or a Tensor, got {type(value).__name__}"
                )
            env[name] = to_variable(value) if isinstance(value, np.ndarray) else value
        for op in self._ops:
            inputs_ = {slot: [env[n] for n in names] for slot, names in op.inputs.items()}
            outputs = {slot: [env[n] if n in self._persistables else Tensor() for n in names]
                       for slot, names in op.outputs.items()}  # fmt: skip
            attrs = dict(op.attrs)
            if "is_test" in attrs:
                attrs["is_test"] = not self.training
            bind(op.type, inputs_, attrs, outputs)
            for slot, names in op.outputs.items():
                env.update(zip(names, outputs[slot]))
        outs = [env[n] for n in self._fetch_names]
        return outs[0] if len(outs) == 1 else outs
