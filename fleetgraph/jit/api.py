"""Tracing a dynamic Layer (or function) into a static Program, so it can be transpiled, inspected
and exported.

Steps of `trace(layer, input_spec)`:
  1. make a fresh Program pair, one data variable per input spec (`x`, `x_1`, ...);
  2. give every eager parameter of the layer (and its sublayers) a static Parameter of its shape
     and dtype in the program, swapped into the layer for the call: one per parameter object, named
     as it (`w_1`, ... after the first of a name: two models may have parameters of one name);
  3. call the layer on the data variables in static mode, the forward of the layer and of each
     sublayer written outside fleetgraph converted by dy2static: every layer function sees static
     inputs and appends its op, an `if` / `while` / `for range` over a static Variable becomes a
     cond / while_loop, and Python control flow on Python values is taken once, as it goes (all of
     it, with ProgramTranslator().enable(False));
  4. swap the eager parameters and forwards back and return the program, its feeds and its fetch
     targets.
Running the program feeds the inputs and reads the parameters' current eager values, so a traced
layer keeps following training.
"""

from __future__ import annotations

import contextlib
import os
import types

import numpy as np

from ..dygraph import mode
from ..dygraph.tensor import Tensor
from ..executor import Executor, Scope, scope_guard
from ..ir import FleetgraphError, Program, program_guard, unique_name
from ..ir.program import Variable
from .dy2static import ProgramTranslator, convert_function, refuse_unconvertible


class InputSpec:
    """The shape (None or -1 for a dimension known at run time), dtype and name of one input."""

    def __init__(self, shape, dtype="float32", name=None) -> None:
        self.shape = [-1 if d is None else int(d) for d in shape]
        self.dtype, self.name = dtype, name

    @classmethod
    def from_tensor(cls, tensor, name=None) -> InputSpec:
        return cls(tensor.shape, tensor.dtype, name)

    def __repr__(self) -> str:
        return f"InputSpec(shape={self.shape}, dtype={self.dtype}, name={self.name})"


class Traced:
    """A traced layer: its program, feed names, fetch variables and the eager parameters it reads."""

    def __init__(self, program: Program, feeds: list[str], fetches: list[Variable], params: dict) -> None:
        self.program, self.feed_names, self.fetch_vars, self.params = program, feeds, fetches, params
        self._exe = Executor()

    def scope(self) -> Scope:
        """A scope holding the parameters' current values (to run, save or export the program)."""
        scope = Scope()
        for name, p in self.params.items():
            scope.vars[name] = p.value
        return scope

    def run(self, *inputs) -> list[np.ndarray]:
        scope = self.scope()
        feed = {n: np.asarray(getattr(v, "value", v)) for n, v in zip(self.feed_names, inputs)}
        outs = self._exe.run(self.program, feed=feed, fetch_list=self.fetch_vars, scope=scope)
        for name, p in self.params.items():  # batch_norm's running statistics, in training
            p.value = scope.vars[name]
        return outs


def _named_layers(layer):
    return [layer] + layer.sublayers()


@contextlib.contextmanager
def _static_parameters(layer, block):
    """Step 2: each eager parameter replaced by a static one of the same name while tracing."""
    swapped, params, static_names = [], {}, {}
    for sub in _named_layers(layer):
        for key, p in list(sub._parameters.items()):
            if not isinstance(p, Tensor):
                continue
            # by identity, not name: models built in separate unique_name guards share names
            name = static_names.get(id(p))
            if name is None:
                name, n = p.name, 0
                while name in params:
                    n += 1
                    name = f"{p.name}_{n}"
                static_names[id(p)], params[name] = name, p
                block.create_parameter(
                    name, p.shape, p.dtype, trainable=getattr(p, "trainable", True), stop_gradient=p.stop_gradient
                )
            swapped.append((sub, key, p))
            sub._parameters[key] = block.var(name)
    try:
        yield params
    finally:
        for sub, key, p in swapped:  # step 4
            sub._parameters[key] = p


def _dygraph_function(layer):
    """The function a Layer's class runs as forward (the one under `@to_static`, if decorated)."""
    forward = type(layer).forward
    return forward._function if isinstance(forward, StaticFunction) else forward


@contextlib.contextmanager
def _dygraph_forwards(layer):
    """Step 3's forwards: each layer's own (not to_static's), converted where written outside
    fleetgraph, set on the instance for the call."""
    convert = ProgramTranslator().enable_to_static
    swapped = []
    for sub in _named_layers(layer):
        function = _dygraph_function(sub)
        if convert and not (getattr(function, "__module__", None) or "").startswith("fleetgraph."):
            function = convert_function(function)
        swapped.append((sub, sub.__dict__.pop("forward", None)))
        sub.__dict__["forward"] = types.MethodType(function, sub)
    try:
        yield
    finally:
        for sub, forward in swapped:
            del sub.__dict__["forward"]
            if forward is not None:
                sub.__dict__["forward"] = forward


def trace(layer, input_spec) -> Traced:
    """Steps 1-4: the layer's forward (or a function) as a static Program over `input_spec`
    (InputSpecs or Tensors)."""
    from ..nn.layer.layers import Layer

    specs = [s if isinstance(s, InputSpec) else InputSpec.from_tensor(s) for s in input_spec]
    program, startup = Program(), Program()
    with mode.static_guard(), program_guard(program, startup), unique_name.guard("traced_"):
        block = program.global_block()
        feeds = []
        for i, spec in enumerate(specs):  # step 1
            name = spec.name or ("x" if i == 0 else f"x_{i}")
            feeds.append(block.create_var(name, spec.shape, spec.dtype, is_data=True, stop_gradient=True))
        if isinstance(layer, Layer):
            with _static_parameters(layer, block) as params, _dygraph_forwards(layer):
                outputs = layer(*feeds)  # step 3
        else:
            params = {}
            outputs = ProgramTranslator().get_func(layer)(*feeds)
    outs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    bad = [o for o in outs if not isinstance(o, Variable) or isinstance(o, Tensor)]
    if bad:
        raise FleetgraphError(
            f"jit.to_static: forward returned {type(bad[0]).__name__}; expected the static Variables its ops "
            "build (a value computed outside paddle's functions cannot be traced)"
        )
    return Traced(program, [v.name for v in feeds], outs, params)


def trace_for_export(layer, input_spec):
    """(program, feed_names, fetch_vars, parameter values): what paddle.onnx.export writes."""
    traced = trace(layer, input_spec)
    return traced.program, traced.feed_names, traced.fetch_vars, traced.scope().vars


class StaticFunction:
    """What `to_static` makes of a Layer's forward or of a function: traced once per input
    signature, then run by the Executor (no gradients flow through it); the dynamic code itself
    while ProgramTranslator is disabled. On a class's forward (`@to_static` in the class body) it
    becomes, per instance, the instance's StaticFunction."""

    def __init__(self, function, input_spec=None) -> None:
        self._function, self._input_spec = function, input_spec
        self._traced: dict[tuple, Traced] = {}

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        bound = instance.__dict__.get("_static_function")
        if bound is None:
            bound = StaticFunction(instance, self._input_spec)
            object.__setattr__(instance, "_static_function", bound)
        return bound

    def _training(self):
        return getattr(self._function, "training", None)

    def _get(self, inputs) -> Traced:
        specs = self._input_spec or [InputSpec([-1, *t.shape[1:]], t.dtype) for t in inputs]
        key = tuple((tuple(s.shape), s.dtype) for s in specs) + (self._training(),)
        if key not in self._traced:
            self._traced[key] = trace(self._function, specs)
            ProgramTranslator.remember(self._traced[key])  # what ProgramTranslator.save_inference_model saves
        return self._traced[key]

    def __call__(self, *inputs):
        if not ProgramTranslator().enable_to_static:
            return self.dygraph_function(*inputs)
        outs = [Tensor(v) for v in self._get(inputs).run(*inputs)]
        return outs[0] if len(outs) == 1 else outs

    @property
    def dygraph_function(self):
        """The dynamic code: the layer's own forward, bound, or the function."""
        from ..nn.layer.layers import Layer

        if isinstance(self._function, Layer):
            return types.MethodType(_dygraph_function(self._function), self._function)
        return self._function

    @property
    def code(self) -> str:
        """The converted source of the dynamic code."""
        return ProgramTranslator().get_code(self.dygraph_function)

    def concrete_program(self, *inputs) -> Program:
        """The traced Program for these inputs (or the input_spec given)."""
        return self._get(inputs).program

    @property
    def main_program(self) -> Program:
        if not self._traced:
            if self._input_spec is None:
                raise FleetgraphError("jit.to_static: not traced yet; call the layer once or give input_spec")
            self._get([])
        return next(iter(self._traced.values())).program


def to_static(function=None, input_spec=None, build_strategy=None, **kwargs):
    """`paddle.jit.to_static(layer_or_function, input_spec)`: a layer, whose calls now run its
    traced Program, or a StaticFunction of a function (or, in a class body, of its forward)."""
    if function is None:
        return lambda f: to_static(f, input_spec)
    from ..nn.layer.layers import Layer

    if not isinstance(function, Layer):
        refuse_unconvertible(function)
        return StaticFunction(function, input_spec)
    static = StaticFunction(function, input_spec)
    object.__setattr__(function, "forward", static)
    object.__setattr__(function, "_static_function", static)
    return function


declarative = to_static  # Paddle 2.0's earlier name of the decorator


def save(layer, path: str, input_spec=None, **configs) -> None:
    """`paddle.jit.save`: the traced program (pruned to its outputs) and parameters under `path`
    (`path.json` and the parameters beside it, fleetgraph's inference-model files)."""
    static = getattr(layer, "_static_function", None)
    if input_spec is None and static is not None:
        traced = next(iter(static._traced.values()), None) if not static._input_spec else static._get([])
    else:
        if input_spec is None:
            raise FleetgraphError("jit.save: expected input_spec (or a layer already called through to_static)")
        traced = trace(layer, input_spec)
    if traced is None:
        raise FleetgraphError("jit.save: the to_static layer was never called; expected input_spec")
    from ..store.persistence import static_save_inference_model

    exe = Executor()
    scope = traced.scope()
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with scope_guard(scope):
        static_save_inference_model(path, traced.feed_names, traced.fetch_vars, exe, traced.program)


class TranslatedLayer:
    """What `paddle.jit.load` returns: a callable over the saved program and parameters."""

    def __init__(self, program, feed_names, fetch_vars, scope) -> None:
        self.program, self._feeds, self._fetches, self._scope = program, feed_names, fetch_vars, scope
        self._exe = Executor()

    def __call__(self, *inputs):
        feed = {n: np.asarray(getattr(v, "value", v)) for n, v in zip(self._feeds, inputs)}
        outs = [Tensor(v) for v in self._exe.run(self.program, feed=feed, fetch_list=self._fetches, scope=self._scope)]
        return outs[0] if len(outs) == 1 else outs

    def eval(self):
        return self

    def train(self):
        return self


def load(path: str, **configs) -> TranslatedLayer:
    from ..store.persistence import static_load_inference_model

    scope = Scope()
    with scope_guard(scope):
        program, feeds, fetches = static_load_inference_model(path, Executor())
    return TranslatedLayer(program, feeds, fetches, scope)
