"""The one dispatch every builder ends in: `bind(op_type, inputs, attrs)` runs the op now on eager
Tensors (recording it on the tape) or appends it to the current block on static Variables.

The choice is made once, from the inputs, before any output exists (JAX's `bind`, answered by the
trace of its arguments): bind makes the outputs itself, of the kind it chose, or writes into outputs
made by a builder that already knew the kind (a LayerHelper told its inputs, an EagerBlock). An op
with no input follows its given outputs, else the mode (`mode.eager_by_default`)."""

from __future__ import annotations

import contextlib

from ..ir import FleetgraphError, unique_name
from ..ir.framework import default_main_program
from ..ir.program import Variable
from . import engine, mode, opfunc
from .tensor import Tensor


def _mixed(op_type: str) -> FleetgraphError:
    return FleetgraphError(
        f"{op_type}: inputs mix eager Tensors and static Variables; expected one kind (a layer function "
        "that creates parameters, such as fluid.layers.fc, runs eagerly only after paddle.disable_static(); "
        "paddle.nn layers work in both modes)"
    )


def _entries(values):
    for value in values:
        if isinstance(value, (list, tuple)):
            yield from value
        elif value is not None:
            yield value


def takes_tensors(op_type: str, values) -> bool | None:
    """True when `values` (variables, or lists of them) are eager Tensors, False when they are static
    Variables (or variable names), None when there are none. Tensors and static Variables in one op
    are an error."""
    tensors = statics = False
    for v in _entries(values):
        if isinstance(v, Tensor):
            tensors = True
        elif isinstance(v, (Variable, str)):
            statics = True
    if tensors and statics:
        raise _mixed(op_type)
    return True if tensors else (False if statics else None)


def _eager_inputs(op_type: str, inputs: dict, outputs: dict | None) -> dict | None:
    """The decision, in one pass over the inputs (bind asks it on every call): `inputs` with every slot
    a list when the op runs now, None when it is appended to the block."""
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
    if tensors:
        if statics:
            raise _mixed(op_type)
        return out
    if statics:
        return None
    given = takes_tensors(op_type, outputs.values()) if outputs else None
    eager = mode.eager_by_default() if given is None else given
    return out if eager else None


def _tensors(op_type: str, value) -> list:
    values = value if isinstance(value, (list, tuple)) else [value]
    for v in values:
        if v is not None and not isinstance(v, Tensor):
            raise FleetgraphError(f"{op_type} (eager): expected Tensor outputs, got {type(v).__name__} {v!r}")
    return list(values)


def bind(
    op_type: str,
    inputs: dict,
    attrs: dict | None = None,
    outputs: dict | None = None,
    *,
    out_slot: str = "Out",
    extra_outputs: tuple = (),
    dtype: str | None = None,
    name: str | None = None,
):
    """Run op `op_type` now on Tensor inputs, or append it to the current block on static ones.

    `inputs` and `outputs` map slots to variables (or lists of them), `attrs` the op's attrs over its
    defaults. Without `outputs`, bind makes them, of the kind it chose: one in `out_slot` (of `dtype`,
    else the first static input's) and a stop-gradient one in each of `extra_outputs` (reshape2's
    XShape), named after `name` (else the op type) in a program; it returns the `out_slot` one. With
    `outputs` (variables of the op's kind: a LayerHelper's, the inputs themselves for an in-place
    op), it writes into them and returns None."""
    if outputs is None and inputs and out_slot == "Out" and not extra_outputs:
        out = opfunc.try_call(op_type, inputs, attrs)  # the fast path: a simple op, one Tensor per slot
        if out is not None:
            return out
    ins = _eager_inputs(op_type, inputs, outputs)
    if ins is not None:
        if outputs is not None:
            outs = {slot: _tensors(op_type, v) for slot, v in outputs.items() if v is not None}
            engine.run_op(op_type, ins, outs, attrs)
            return None
        out = Tensor(dtype=dtype)
        outs = {out_slot: [out]}
        for slot in extra_outputs:
            outs[slot] = [Tensor()]
        engine.run_op(op_type, ins, outs, attrs)
        return out
    block = default_main_program().current_block()
    if outputs is not None:
        if takes_tensors(op_type, outputs.values()):
            raise FleetgraphError(f"{op_type}: static inputs with eager Tensor outputs; expected static Variables")
        block.append_op(op_type, inputs, outputs, attrs)
        return None
    prefix = name or unique_name.generate(op_type)
    if dtype is None:
        dtype = next((v.dtype for v in _entries(inputs.values()) if isinstance(v, Variable)), "float32")
    out = _static_output(block, prefix, dtype, False)
    outs = {out_slot: [out]}
    for slot in extra_outputs:
        outs[slot] = [_static_output(block, prefix, dtype, True)]
    block.append_op(op_type, inputs, outs, attrs)
    return out


def bind_function(op_type: str, attrs: dict | None = None):
    """`bind` for one simple op (one output, no randomness) of one or two inputs with its attrs fixed,
    as a function of one variable per input slot (the op's slot order) and an optional `name`,
    returning the output: the op's eager function (opfunc), resolved once, whose static fallback is
    bind. What the unary layer functions and paddle.mean take per call, where building bind's dicts
    would cost more than the op."""
    slots = engine.spec(op_type).in_slots
    if len(slots) not in (1, 2):
        raise FleetgraphError(f"{op_type}: bind_function takes ops of one or two inputs; got {len(slots)} ({slots})")

    def static(*args):
        *inputs, name = args
        return bind(op_type, {slot: [v] for slot, v in zip(slots, inputs)}, attrs, name=name)

    call = opfunc.op_function(op_type, attrs, static=static)
    call.__name__ = op_type
    return call


def _static_output(block, prefix: str, dtype: str, stop_gradient: bool) -> Variable:
    """A temporary of the block, named as LayerHelper names its own (`<prefix>.tmp_<n>`)."""
    name = unique_name.generate_with_ignorable_key(f"{prefix}.tmp")
    return block.create_var(name, dtype=dtype, stop_gradient=stop_gradient)


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
        """The op runs now: its outputs are this block's Tensors."""
        return bind(type, inputs or {}, attrs, outputs or {})


# Where eager tensors say they live: gradient clipping asks `param.block.program` for its guards.
EAGER_PROGRAM = EagerProgram()
Tensor.block = EAGER_PROGRAM.global_block()
