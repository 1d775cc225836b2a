"""What an op's export rule sees: the ONNX names of its slots, and a way to add nodes and constants."""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ..ir import FleetgraphError
from ..ir.program import Block, Operator, Variable

OPSET = 18  # Reduce* take axes as an input, Split takes num_outputs, ScatterND reduces max
DOMAIN = "fleetgraph"  # the model-local functions (sequence_pool), which load maps back to one op

# op type -> rule(e, op): one small function per op type, filled by the to_onnx_* modules
EXPORTERS: dict[str, Callable[[Emitter, Operator], None]] = {}


def exports(*op_types: str):
    """Register an export rule for these fleetgraph op types."""

    def register(fn):
        for t in op_types:
            EXPORTERS[t] = fn
        return fn

    return register


def onnx_dtype(dtype) -> int:
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


class UnsupportedOp(FleetgraphError):
    """An op (or an op's attrs) the ONNX export cannot express."""


class OpNotExported(FleetgraphError):
    """`op` (of the program translated, in whichever block) has no rule, or its rule refused it
    with `reason`; export names the op in the user's program."""

    def __init__(self, op: Operator, reason: str | None) -> None:
        super().__init__(reason or op.type)
        self.op, self.reason = op, reason


class Emitter:
    """Collects the nodes of one graph: the program's global block, or a sub-block as an ONNX
    subgraph (If's branches, Loop's body) that sees its parent's names as outer scope.

    ONNX values are written once, while a program writes a variable again (a loop's body assigns
    its loop variables, `while` writes them after the loop). A variable keeps its name where its
    block writes it last and nothing else defined that name; any other write gets a fresh name,
    which the ops after it read (`names`). Constants of every graph are the main graph's
    initializers, which subgraphs see."""

    def __init__(self, block: Block, opset: int = OPSET, parent: Emitter | None = None) -> None:
        self.block, self.opset, self.parent = block, opset, parent
        self.nodes: list = []
        self.names: dict[str, str] = {}  # variable -> its ONNX name, where a write renamed it
        self.defined: set[str] = set()  # the ONNX names this graph defines
        if parent is None:
            self.initializers: list[TensorProto] = []
            self.functions: dict[str, onnx.FunctionProto] = {}
            self.lods: dict[str, str] = {}  # variable -> the ONNX name of its (last level's) LoD offsets
            self.origin: dict[str, str] = {}  # a fresh ONNX name -> the variable it holds
            self.sources: dict[str, Operator] = {}  # a node's name -> the op whose rule wrote it
            self._counter = itertools.count(1)
        else:
            self.initializers, self.functions, self.lods = parent.initializers, parent.functions, parent.lods
            self.origin, self.sources, self._counter = parent.origin, parent.sources, parent._counter

    # -- reading the op -----------------------------------------------------------------------
    def var(self, name: str) -> Variable:
        return self.block.var_recursive(self.variable(name))

    def variable(self, name: str) -> str:
        """The program variable an ONNX name holds."""
        return self.origin.get(name, name)

    def name_of(self, variable: str) -> str:
        """The ONNX name holding `variable`'s value now, looked up from this graph outwards."""
        e = self
        while e is not None:
            if variable in e.names:
                return e.names[variable]
            e = e.parent
        return variable

    def is_defined(self, name: str) -> bool:
        """Whether this graph or an enclosing one defines the ONNX name `name`."""
        e = self
        while e is not None:
            if name in e.defined:
                return True
            e = e.parent
        return False

    def x(self, op: Operator, slot: str, i: int = 0) -> str:
        return op.input(slot)[i]

    def xs(self, op: Operator, slot: str) -> list[str]:
        return op.input(slot)

    def out(self, op: Operator, slot: str, i: int = 0) -> str:
        return op.output(slot)[i]

    def has_out(self, op: Operator, slot: str) -> bool:
        return bool(op.output(slot))

    def shape(self, name: str) -> tuple[int, ...]:
        return self.var(name).shape

    def dtype(self, name: str) -> str:
        return self.var(name).dtype

    def lod(self, op: Operator, slot: str) -> str:
        name = op.input(slot)[0]
        if name not in self.lods:
            raise UnsupportedOp(f"{op.type}: input {slot} '{name}' has no LoD the exported graph can carry")
        return self.lods[name]

    # -- writing ------------------------------------------------------------------------------
    def fresh(self, hint: str) -> str:
        return f"{hint}__{next(self._counter)}"

    def write(self, variable: str, keep: bool) -> str:
        """The ONNX name a write of `variable` defines: its own where `keep` and still free."""
        name = variable if keep and not self.is_defined(variable) else self.fresh(variable)
        self.names[variable] = name
        self.origin[name] = variable
        return name

    # -- blocks and subgraphs -----------------------------------------------------------------
    def emit_block(self) -> None:
        """Translate the block's ops in order, each by its rule over a copy of the op whose slots
        hold ONNX names; the copy's `before` maps each output variable to its name before the op."""
        ops = self.block.ops
        last = {name: i for i, op in enumerate(ops) for name in op.output_arg_names}
        own = None if self.parent is None else self.block.vars  # a subgraph renames what outer scope holds
        for i, op in enumerate(ops):
            rule = EXPORTERS.get(op.type)
            if rule is None:
                raise OpNotExported(op, None)
            view = copy.copy(op)
            view.inputs = {k: [self.name_of(n) for n in v] for k, v in op.inputs.items()}
            view.before = {n: self.name_of(n) for n in op.output_arg_names}
            view.outputs = {
                k: [self.write(n, last[n] == i and (own is None or n in own)) for n in v] for k, v in op.outputs.items()
            }
            first = len(self.nodes)
            try:
                rule(self, view)
            except UnsupportedOp as err:
                raise OpNotExported(op, str(err)) from None
            _note_source(self.nodes[first:], op, self.sources)
            self._carry_lod(view)

    def _carry_lod(self, op: Operator) -> None:
        """An output with a LoD level takes the LoD of the op's first input that has one (the
        registry's rule for kernels that do not see LoD)."""
        source = next((self.lods[n] for n in op.input_arg_names if n in self.lods), None)
        if source is None:
            return
        for name in op.output_arg_names:
            if self.var(name).lod_level > 0:
                self.lods[name] = source

    def child(self, block_idx: int) -> Emitter:
        """An emitter for sub-block `block_idx`, whose graph reads this one's names."""
        return Emitter(self.block.program.block(block_idx), self.opset, parent=self)

    def value_info(self, name: str, shape=None):
        """`name` typed as the variable it holds, its shape left open unless given."""
        return helper.make_tensor_value_info(name, onnx_dtype(self.dtype(name)), shape)

    def graph(self, title: str, inputs: list, outputs: list[str]) -> onnx.GraphProto:
        """This emitter's nodes as a subgraph taking `inputs` (value infos) and giving `outputs`."""
        return helper.make_graph(self.nodes, self.fresh(title), inputs, [self.value_info(n) for n in outputs])

    def node(self, op_type: str, inputs: list[str], outputs=None, **attrs) -> list[str] | str:
        """Add a node; `outputs` an int (that many fresh names), a name, or a list. Returns its outputs
        (one name when there is one)."""
        if outputs is None or isinstance(outputs, int):
            outputs = [self.fresh(op_type) for _ in range(outputs or 1)]
        elif isinstance(outputs, str):
            outputs = [outputs]
        self.nodes.append(helper.make_node(op_type, inputs, outputs, name=self.fresh(op_type + "_node"), **attrs))
        self.defined.update(outputs)
        return outputs[0] if len(outputs) == 1 else outputs

    def const(self, value, dtype=None, hint: str = "const") -> str:
        """A constant as an initializer (an int list becomes int64, as shapes and axes are)."""
        array = np.asarray(value, dtype=dtype if dtype is not None else (np.int64 if _ints(value) else None))
        name = self.fresh(hint)
        self.initializers.append(numpy_helper.from_array(array, name))
        return name

    def function(self, name: str, inputs: list[str], outputs: list[str], build) -> str:
        """Declare (once) a model-local function of domain DOMAIN whose body `build(body)` writes."""
        if name not in self.functions:
            body = FunctionBody()
            build(body)
            opsets = [helper.make_opsetid("", self.opset)]
            self.functions[name] = helper.make_function(DOMAIN, name, inputs, outputs, body.nodes, opsets)
        return name

    def scalar(self, value, like: str) -> str:
        """A one-element constant of the dtype of variable `like` (broadcasts in Add/Mul/...)."""
        return self.const(np.asarray(value, dtype=self.dtype(like)))


class FunctionBody:
    """The nodes of a function's body: constants are Constant nodes (a body sees no initializer)."""

    def __init__(self) -> None:
        self.nodes: list = []

    def node(self, op_type: str, inputs: list[str], outputs=None, **attrs) -> str:
        outputs = outputs or f"{op_type.lower()}{len(self.nodes)}"
        self.nodes.append(helper.make_node(op_type, inputs, [outputs], **attrs))
        return outputs

    def const(self, value, dtype=None) -> str:
        array = np.asarray(value, dtype=dtype if dtype is not None else (np.int64 if _ints(value) else None))
        return self.node("Constant", [], value=numpy_helper.from_array(array))


def _note_source(nodes, op: Operator, sources: dict[str, Operator]) -> None:
    """`op` wrote these nodes and the nodes of their subgraphs not yet noted (a branch the rule
    built itself), so that lowering to an older opset can name it."""
    for node in nodes:
        sources.setdefault(node.name, op)
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                _note_source(attr.g.node, op, sources)


def _ints(value) -> bool:
    if isinstance(value, (list, tuple)):
        return all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value) and bool(value)
    return False
