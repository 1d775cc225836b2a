"""`paddle.jit.TracedLayer` (also fluid.dygraph's): `TracedLayer.trace(layer, inputs)` gives the
layer's outputs for `inputs` and a TracedLayer, the layer's forward as a static program that reads the
layer's current parameters; called on a list of inputs it gives NumPy arrays, and it saves itself as
an inference model."""

from __future__ import annotations

from ..executor import Executor, scope_guard
from ..executor.strategy import BuildStrategy, ExecutionStrategy
from ..ir import FleetgraphError
from ..nn.layer.layers import Layer
from ..store.persistence import save_inference_model
from .api import trace


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
