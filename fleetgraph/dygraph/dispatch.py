"""Where a layer function's op goes: run at once on Tensors, or appended to the program on static
Variables. LayerHelper.append_op and apply_op ask here, so every layer function works in both modes."""

from __future__ import annotations

import contextlib

from ..ir import FleetgraphError
from ..ir.program import Variable
from . import engine
from .tensor import Tensor


def _entries(slots: dict | None):
    for value in (slots or {}).values():
        if isinstance(value, (list, tuple)):
            yield from value
        elif value is not None:
            yield value


def is_eager(op_type: str, inputs: dict | None, outputs: dict | None) -> bool:
    """Tensor inputs run eagerly, static ones build a program; with no input at all, Tensor outputs
    (made in dynamic mode) say eager. Tensors and static Variables in one op are an error."""
    tensors = statics = 0
    for v in _entries(inputs):
        if isinstance(v, Tensor):
            tensors += 1
        elif isinstance(v, Variable) or isinstance(v, str):
            statics += 1
    if tensors and statics:
        raise FleetgraphError(
            f"{op_type}: inputs mix eager Tensors and static Variables; expected one kind (a layer function "
            "that creates parameters, such as fluid.layers.fc, runs eagerly only after paddle.disable_static(); "
            "paddle.nn layers work in both modes)"
        )
    if tensors:
        return True
    return not statics and any(isinstance(v, Tensor) for v in _entries(outputs))


def eager_inputs(op_type: str, inputs: dict) -> dict | None:
    """`inputs` with every slot a list, when they are Tensors (the op runs eagerly); None when they
    are static Variables. One pass: apply_op asks this on every call."""
    out = {}
    tensors = statics = False
    for slot, vs in inputs.items():
        if vs is None:
            continue
        if vs.__class__ is not list:
            vs = list(vs) if isinstance(vs, tuple) else [vs]
        for v in vs:
            if isinstance(v, Tensor):
                tensors = True
            elif isinstance(v, (Variable, str)):
                statics = True
        out[slot] = vs
    if tensors and statics:
        is_eager(op_type, inputs, None)  # raises, saying what was mixed
    return out if tensors else None


def _as_tensors(value) -> list:
    values = value if isinstance(value, (list, tuple)) else [value]
    out = []
    for v in values:
        if isinstance(v, Tensor) or v is None:
            out.append(v)
        elif isinstance(v, Variable):  # a placeholder the layer function made before it saw Tensors
            block = v.block
            if block is not None and block.vars.get(v.name) is v:
                block._remove_var(v.name)
            out.append(Tensor._from_placeholder(v))
        else:
            raise FleetgraphError(f"eager op: expected Tensors, got {type(v).__name__} {v!r}")
    return out


def run_eagerly(op_type: str, inputs: dict | None, outputs: dict | None, attrs: dict | None):
    ins = {slot: _as_tensors(v) for slot, v in (inputs or {}).items() if v is not None}
    outs = {slot: _as_tensors(v) for slot, v in (outputs or {}).items() if v is not None}
    engine.run_op(op_type, ins, outs, attrs)
    return None


def to_static_outputs(block, outputs: dict | None) -> None:
    """Tensor placeholders (made in dynamic mode) of an op on static inputs become the block's variables."""
    for v in _entries(outputs):
        if isinstance(v, Tensor) and v.value is None and v._node is None:
            name, dtype, stop = v.name, v.dtype, v.stop_gradient
            v.__dict__.clear()
            v.__class__ = Variable
            Variable.__init__(v, block, name, (), dtype, stop_gradient=stop)
            block._add_var(v)


@contextlib.contextmanager
def _nothing():
    yield


class EagerProgram:
    """What the optimizers and initializers see of a program in eager mode: one block whose
    append_op runs the op at once and whose variables are Tensors kept by name (optimizer state)."""

    def __init__(self, random_seed: int = 0) -> None:
        self.random_seed = random_seed
        self.lr_scheduler = None
        self._block = EagerBlock(self)

    def global_block(self):
        return self._block

    def current_block(self):
        return self._block

    def block(self, index: int = 0):
        return self._block

    def _optimized_guard(self, param_and_grad):
        return _nothing()

    def _op_role_guard(self, *args, **kwargs):
        return _nothing()

    def _backward_role_guard(self):
        return _nothing()


class EagerBlock:
    idx, parent_idx, forward_block_idx = 0, -1, -1

    def __init__(self, program: EagerProgram) -> None:
        self.program = program
        self.vars: dict[str, Tensor] = {}
        self.ops: list = []  # nothing is kept: each op has run when append_op returns

    def create_var(self, name=None, shape=(), dtype="float32", persistable=False, **kw) -> Tensor:
        if name is not None and name in self.vars:
            return self.vars[name]
        t = Tensor(None, name, stop_gradient=True, dtype=dtype)
        t._shape = [int(d) for d in shape]
        if persistable:
            t.persistable = True
            self.vars[t.name] = t
        return t

    def has_var(self, name: str) -> bool:
        return name in self.vars

    def var(self, name: str) -> Tensor:
        return self.vars[name]

    var_recursive = var

    def _find_var_recursive(self, name: str) -> Tensor | None:
        return self.vars.get(name)

    def append_op(self, type, inputs=None, outputs=None, attrs=None):
        return run_eagerly(type, inputs, outputs, attrs)


# Where eager tensors say they live: gradient clipping asks `param.block.program` for its guards.
EAGER_PROGRAM = EagerProgram()
Tensor.block = EAGER_PROGRAM.global_block()
