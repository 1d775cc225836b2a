"""Paddle 1.8's ProgramTranslator (`fluid.dygraph.ProgramTranslator`): besides dy2static's switch,
`get_func` and `get_code`, it turns a dygraph function and its arguments into a static program
(`get_program`), runs that program for the function's output (`get_output`) and saves the program
translated last as an inference model (`save_inference_model`).

Steps of translating `dygraph_func(*args, **kwargs)` (Paddle's ConcreteProgram.from_func_spec):
  1. each NumPy array argument becomes a feed variable `feed_N` of its shape and dtype, each eager
     Tensor one of its name; other arguments and the keyword arguments stay Python values;
  2. the function, its control flow converted, is traced over them into a fresh Program pair
     (api.trace);
  3. a Parameter the function created is refused, as Paddle does: it would be made anew at each
     call (a Layer made in `__init__` owns its parameters).
The outputs are computed by the Executor from the program, so they carry no gradient back into the
eager graph, as fleetgraph's to_static.
"""

from __future__ import annotations

import numpy as np

from ..dygraph.tensor import Tensor
from ..executor import Executor, scope_guard
from ..ir import FleetgraphError, Program, unique_name
from ..ir.framework import default_startup_program
from ..ir.program import Parameter
from ..nn.layer.layers import Layer
from ..store.persistence import save_inference_model
from . import dy2static
from .api import InputSpec, Traced, trace


class ProgramTranslator(dy2static.ProgramTranslator):
    """The singleton of `fluid.dygraph.ProgramTranslator()`; its enable() is dy2static's switch."""

    def get_output(self, dygraph_func, *args, **kwargs):
        """The function's output for these arguments computed by its static program (a Tensor, or a
        list of Tensors for several); the function's own while the translator is disabled."""
        _check_callable("get_output", dygraph_func)
        if not self.enable_to_static:
            return dygraph_func(*args, **kwargs)
        traced, _ = self._translate("get_output", dygraph_func, args, kwargs)
        outs = [Tensor(value) for value in traced.run(*[a for a in args if _is_feed(a)])]
        return outs[0] if len(outs) == 1 else outs

    def get_program(self, dygraph_func, *args, **kwargs):
        """(main_program, startup_program, inputs, outputs): the function's static program for these
        arguments, its feed variables and its output variables; the function's output while the
        translator is disabled."""
        _check_callable("get_program", dygraph_func)
        if not self.enable_to_static:
            return dygraph_func(*args, **kwargs)
        traced, startup = self._translate("get_program", dygraph_func, args, kwargs)
        block = traced.program.global_block()
        return traced.program, startup, [block.var(n) for n in traced.feed_names], list(traced.fetch_vars)

    def save_inference_model(self, dirname: str, feed=None, fetch=None) -> None:
        """The program translated last, pruned to its outputs `fetch` (indices; all by default)
        from its inputs `feed` (indices; all by default), with the parameters' current values, as
        fluid.io.save_inference_model writes it."""
        traced = self.last_translated
        if traced is None:
            raise FleetgraphError(
                "ProgramTranslator.save_inference_model: no program translated yet; expected get_output or "
                "get_program called first"
            )
        save_traced(traced, dirname, feed, fetch)

    def _translate(self, where: str, dygraph_func, args, kwargs) -> tuple[Traced, Program]:
        """Steps 1-3: the traced program and its startup program."""
        if isinstance(getattr(dygraph_func, "__self__", None), Layer) or (args and isinstance(args[0], Layer)):
            raise NotImplementedError(
                f"ProgramTranslator.{where}: a Layer's method; translate the layer with "
                "fluid.dygraph.declarative (jit.to_static) on its forward instead"
            )
        specs = [_feed_spec(a) for a in args if _is_feed(a)]
        static_func, startup = self.get_func(dygraph_func), []

        def call(*feeds):
            startup.append(default_startup_program())  # the tracer's, under its program_guard
            feeds = iter(feeds)
            return static_func(*[next(feeds) if _is_feed(a) else a for a in args], **kwargs)

        traced = trace(call, specs)
        made = [v.name for v in traced.program.global_block().vars.values() if isinstance(v, Parameter)]
        if made:
            raise ValueError(
                f"ProgramTranslator.{where}: {dygraph_func.__name__} created the parameters {made}; expected "
                "none (they would be made anew at each call): define the layers with parameters in a Layer's "
                "__init__ and declarative its forward"
            )
        self.remember(traced)
        return traced, startup[0]


def save_traced(traced: Traced, dirname: str, feed=None, fetch=None) -> None:
    """`traced` pruned to its outputs `fetch` from its inputs `feed` (indices; all when None) and
    written with its parameters' current values by fluid.io.save_inference_model."""
    feeds = traced.feed_names if feed is None else [traced.feed_names[i] for i in feed]
    fetches = traced.fetch_vars if fetch is None else [traced.fetch_vars[i] for i in fetch]
    with scope_guard(traced.scope()):
        save_inference_model(dirname, feeds, fetches, Executor(), traced.program.clone())


def _check_callable(where: str, dygraph_func) -> None:
    if not callable(dygraph_func):
        raise TypeError(f"ProgramTranslator.{where}: dygraph_func expected a callable, got {dygraph_func!r}")


def _is_feed(value) -> bool:
    return isinstance(value, (np.ndarray, Tensor))


def _feed_spec(value) -> InputSpec:
    if isinstance(value, Tensor):
        return InputSpec.from_tensor(value, name=value.name)
    return InputSpec(list(value.shape), str(value.dtype), unique_name.generate("feed"))
