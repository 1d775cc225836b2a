"""`fluid.dygraph.base`: entering and leaving Fluid 1.x's imperative mode, `to_variable`, `no_grad`.

The mode itself is the eager engine's (`dygraph.mode`); what Fluid 1.x adds is that a dygraph
guard also opens a fresh program pair and a fresh unique-name scope, so parameter names start
again at `linear_0.w_0` inside each guard, as Paddle 1.8's do.
"""

from __future__ import annotations

import contextlib

import numpy as np

from ...dygraph import mode, tape
from ...dygraph.tensor import Tensor
from ...ir import FleetgraphError, FleetgraphTypeError, Program, program_guard, unique_name
from ...ir.dtypes import convert_dtype
from ...ir.program import Variable

__all__ = [
    "no_grad",
    "grad",
    "guard",
    "enable_dygraph",
    "disable_dygraph",
    "enable_imperative",
    "disable_imperative",
    "enabled",
    "to_variable",
]

_functional_guard: contextlib.ExitStack | None = None


@contextlib.contextmanager
def guard(place=None):
    """`with fluid.dygraph.guard(place):` imperative mode inside, on `place` when given, with a
    fresh program pair and unique-name scope; the previous mode, place and names after."""
    with program_guard(Program(), Program()), unique_name.guard(), mode.guard(place):
        yield


def enabled() -> bool:
    """Whether imperative mode is on (inside a guard or after enable_dygraph)."""
    return mode.in_dygraph_mode()


def enable_dygraph(place=None) -> None:
    """Imperative mode until disable_dygraph(): a guard(place) entered now (once; a second call
    while it is on does nothing, as Paddle's)."""
    global _functional_guard
    if _functional_guard is None:
        stack = contextlib.ExitStack()
        stack.enter_context(guard(place))
        _functional_guard = stack


def disable_dygraph() -> None:
    """Leave the mode enable_dygraph() entered (nothing if it was not)."""
    global _functional_guard
    if _functional_guard is not None:
        stack, _functional_guard = _functional_guard, None
        stack.close()


enable_imperative, disable_imperative = enable_dygraph, disable_dygraph


def no_grad(func=None):
    """`with no_grad():`, `@no_grad` or `@no_grad()`: ops inside record nothing for backward."""
    return mode.no_grad() if func is None else mode.no_grad()(func)


def to_variable(value, name: str | None = None, zero_copy: bool | None = None, dtype=None) -> Tensor:
    """A NumPy array as an eager Tensor (stop_gradient True); a Tensor or Variable comes back as it
    is. On the CPU the Tensor shares the array's memory unless zero_copy=False, as Paddle's;
    `dtype` casts (a copy)."""
    if isinstance(value, Variable):
        return value
    if not isinstance(value, np.ndarray):
        raise FleetgraphTypeError(
            f"to_variable: value expected a numpy.ndarray, a Tensor or a Variable, got {type(value).__name__}"
        )
    if np.iscomplexobj(value):
        raise NotImplementedError("to_variable: a complex array (Paddle's ComplexVariable) is not supported")
    xp = mode.array_module()
    if xp is not np and zero_copy:
        raise FleetgraphError("to_variable: zero_copy=True; expected it only on the CPU place (a GPU copies)")
    array = value
    if dtype is not None:
        array = array.astype(convert_dtype(dtype))
    elif zero_copy is False:
        array = array.copy()
    if xp is not np:
        array = xp.asarray(array)
    return Tensor(array, name=name or None, stop_gradient=True)


def _tensors(what: str, values, allow_none: bool = False) -> list:
    items = list(values) if isinstance(values, (list, tuple, set)) else [values]
    for v in items:
        if not isinstance(v, Tensor) and not (allow_none and v is None):
            raise FleetgraphTypeError(f"grad: {what} expected eager Tensors, got {type(v).__name__} {v!r}")
    return items


def _graph_leaves(outputs: list) -> list:
    """The tensors with no recorded producer that `outputs` depend on through the tape."""
    leaves, seen, stack = [], set(), [t._node for t in outputs]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        for t in node.parents.values():
            if t._node is None:
                leaves.append(t)
            else:
                stack.append(t._node)
    return leaves


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=False, no_grad_vars=None, backward_strategy=None) -> tuple:  # fmt: skip
    """The sum of the gradients of `outputs` (seeded with ones, or grad_outputs[i] where given) with
    respect to each of `inputs`, as a tuple of Tensors, leaving every `.grad` as it was; no gradient
    flows through no_grad_vars. Steps:
      1. cut the graph at the inputs and no_grad_vars (their producers are out of reach through
         them), so each is a leaf of this backward, and set aside the .grad of every leaf;
      2. run backward from each output (the graph kept for the next; for the last, as retain_graph
         says, default create_graph) and read the inputs' .grad;
      3. put the producers and the set-aside gradients back.
    A DataParallel model's post-backward all-reduce runs as after any backward() (on every rank
    alike); its results are set aside with the rest. `backward_strategy` is honoured as by
    backward() (see BackwardStrategy)."""
    if create_graph:
        raise NotImplementedError("fluid.dygraph.grad: create_graph=True (higher-order gradients) is not supported")
    if not only_inputs:
        raise NotImplementedError("fluid.dygraph.grad: only_inputs=False is not supported (nor in Paddle 1.8)")
    outputs, inputs = _tensors("outputs", outputs), _tensors("inputs", inputs)
    seeds = [None] * len(outputs) if grad_outputs is None else _tensors("grad_outputs", grad_outputs, True)
    if len(seeds) != len(outputs):
        raise FleetgraphError(f"grad: {len(seeds)} grad_outputs for {len(outputs)} outputs; expected one each")
    cut = inputs + ([] if no_grad_vars is None else _tensors("no_grad_vars", no_grad_vars))
    retain = create_graph if retain_graph is None else bool(retain_graph)
    producers = [(t, t._node) for t in cut]  # step 1
    held = {id(t): (t, t._grad) for t in _graph_leaves(outputs) + cut}
    for t, _ in producers:
        t._node = None
    for t, _ in held.values():
        t._grad = None
    try:
        for i, (out, seed) in enumerate(zip(outputs, seeds)):  # step 2
            tape.backward(out, seed, retain if i == len(outputs) - 1 else True)
        result = tuple(t.grad for t in inputs)
    finally:
        for t, node in producers:  # step 3
            t._node = node
        for t, g in held.values():
            t._grad = g
    unused = [i for i, g in enumerate(result) if g is None]
    if unused and not allow_unused:
        raise FleetgraphError(
            f"grad: inputs {unused} are not reached from the outputs; expected each used (or allow_unused=True)"
        )
    return result
