"""`fluid.dygraph.jit`: Paddle 1.8's ways from dygraph code to a static program, over paddle.jit's
tracer and translator.

- `declarative`: paddle.jit.to_static (a function or a Layer's forward run as its traced program).
- `dygraph_to_static_func`: a function whose control flow is converted when it is called while
  building a program, run as it is in imperative mode.
- `TracedLayer.trace(layer, inputs)`: the layer's outputs for `inputs` and a TracedLayer, the
  layer's forward as a static program that reads the layer's current parameters; called on a list
  of inputs it gives NumPy arrays, and it saves itself as an inference model.
"""

from __future__ import annotations

import functools

from ...dygraph import mode
from ...executor import Executor, scope_guard
from ...ir import FleetgraphError
from ...jit.api import declarative, trace
from ...jit.dy2static import ProgramTranslator
from ...nn.layer.layers import Layer
from ...static import BuildStrategy, ExecutionStrategy
from ...store.persistence import save_inference_model

__all__ = ["TracedLayer", "declarative", "dygraph_to_static_func"]


def dygraph_to_static_func(dygraph_func):
    """`dygraph_func` that builds a program (control flow converted) when called outside imperative
    mode, and runs as written in it or while ProgramTranslator is disabled."""

    @functools.wraps(dygraph_func)
    def call(*args, **kwargs):
        if mode.in_dygraph_mode():
            return dygraph_func(*args, **kwargs)
        return ProgramTranslator().get_func(dygraph_func)(*args, **kwargs)

    return call


class TracedLayer:
    """A Layer's forward as a static program (paddle.jit's trace over the inputs' shapes and dtypes),
    run by an Executor over the layer's parameters as they are at each call."""

    def __init__(self, traced) -> None:
        self._traced = traced
        self._strategies = None
        self._ran = False

    @property
    def program(self):
        return self._traced.program

    @staticmethod
    def trace(layer, inputs):
        """(the layer's outputs for `inputs`, run eagerly; the TracedLayer)."""
        if not isinstance(layer, Layer):
            raise FleetgraphError(
                f"TracedLayer.trace: layer expected a fluid.dygraph.Layer, got {type(layer).__name__}"
            )
        inputs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        outs = layer(*inputs)
        return outs, TracedLayer(trace(layer, inputs))

    def set_strategy(self, build_strategy=None, exec_strategy=None) -> None:
        """Paddle compiles the program with these for its one place: they change how it runs, never
        what it computes, so they are checked and kept (before the first call only, as Paddle's)."""
        if self._ran:
            raise FleetgraphError("TracedLayer.set_strategy: the layer already ran; expected it before the first call")
        for value, kind in ((build_strategy, BuildStrategy), (exec_strategy, ExecutionStrategy)):
            if value is not None and not isinstance(value, kind):
                raise TypeError(f"TracedLayer.set_strategy: expected a {kind.__name__}, got {type(value).__name__}")
        self._strategies = (build_strategy, exec_strategy)

    def __call__(self, inputs) -> list:
        if not isinstance(inputs, (list, tuple)) or len(inputs) != len(self._traced.feed_names):
            raise FleetgraphError(
                f"TracedLayer: expected a list of {len(self._traced.feed_names)} inputs, got {inputs!r}"
            )
        self._ran = True
        return self._traced.run(*inputs)

    def save_inference_model(self, dirname: str, feed=None, fetch=None) -> None:
        """The program pruned to outputs `fetch` (indices; all by default) from inputs `feed`, with
        the parameters' current values, as fluid.io.save_inference_model writes it."""
        feeds = self._traced.feed_names
        fetches = self._traced.fetch_vars
        feeds = feeds if feed is None else [feeds[i] for i in feed]
        fetches = fetches if fetch is None else [fetches[i] for i in fetch]
        with scope_guard(self._traced.scope()):
            save_inference_model(dirname, feeds, fetches, Executor(), self._traced.program.clone())
