"""py_func: an op that calls a registered Python function on its inputs (Paddle 1.8's py_func_op).

The function is kept in a process-wide list and the op holds its index (`forward_callable_id`), so
a program stays data; as in Paddle, a program with py_func ops runs only in the process that
registered its functions. The function gets each input as a LoDTensor on the host and returns
NumPy-convertible values (or None), one per output. Its gradient is another py_func op calling
`backward_callable_id` on the forward inputs and outputs (less `backward_skip_vars`) and the
outputs' gradients, writing the inputs' gradients (Paddle's PyFuncOpGradDescMaker)."""

from __future__ import annotations

import numpy as np

from ..ir import FleetgraphError, register_op
from ..ir.registry import grad_name
from ._xp import host
from .lod_tensor import LoDTensor

_CALLABLES: list = []


def register_callable(func) -> int:
    """Keep `func` for py_func ops; returns the id they name it by."""
    _CALLABLES.append(func)
    return len(_CALLABLES) - 1


def registered_callable(idx: int):
    return _CALLABLES[idx]


def registered_count() -> int:
    return len(_CALLABLES)


def _on_host(value):
    if value is None:
        return None
    if isinstance(value, LoDTensor):
        return LoDTensor(host(value.data), value.levels)
    return LoDTensor(host(value))


def _result(xp, value):
    """A returned value as an output: a LoDTensor keeps its LoD, anything else becomes an array."""
    if value is None:
        return None
    if isinstance(value, LoDTensor):
        return LoDTensor(xp.asarray(np.asarray(value.data)), value.levels)
    return xp.asarray(np.asarray(value))


def _py_func(xp, xs, *, forward_callable_id, backward_callable_id, backward_skip_vars):
    if not 0 <= forward_callable_id < len(_CALLABLES):
        raise FleetgraphError(
            f"py_func: callable id {forward_callable_id} is not registered in this process "
            f"({len(_CALLABLES)} are); expected the process that built the program"
        )
    returned = _CALLABLES[forward_callable_id](*[_on_host(x) for x in xs or ()])
    if not isinstance(returned, (list, tuple)):
        returned = (returned,)
    return [_result(xp, v) for v in returned]


def _py_func_grad(op) -> list[dict]:
    """No gradient op without a backward function; else a py_func op over the kept forward inputs and
    outputs and the outputs' gradients, writing every input's gradient."""
    backward = op.attrs.get("backward_callable_id", -1)
    if backward < 0:
        return []
    skip = set(op.attrs.get("backward_skip_vars", []))
    xs, outs = op.inputs.get("X", []), op.outputs.get("Out", [])
    ins = [n for n in [*xs, *outs] if n not in skip] + [grad_name(n) for n in outs]
    return [
        dict(
            type="py_func",
            inputs={"X": ins},
            outputs={"Out": [grad_name(n) for n in xs]},
            attrs={"forward_callable_id": backward, "backward_callable_id": -1, "backward_skip_vars": []},
        )
    ]


register_op(
    "py_func",
    inputs=("X*?",),
    outputs=("Out*?",),
    attrs={"forward_callable_id": -1, "backward_callable_id": -1, "backward_skip_vars": []},
    grad=_py_func_grad,
    kernel=_py_func,
    side_effect=True,
    takes_lod=True,
)
