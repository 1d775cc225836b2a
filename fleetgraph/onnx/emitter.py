"""What an op's export rule sees: the ONNX names of its slots, and a way to add nodes and constants."""

from __future__ import annotations

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


class Emitter:
    """Collects nodes and initializers; variables keep their names in the ONNX graph."""

    def __init__(self, block: Block, opset: int = OPSET) -> None:
        self.block, self.opset = block, opset
        self.nodes: list = []
        self.initializers: list[TensorProto] = []
        self.functions: dict[str, onnx.FunctionProto] = {}
        self.lods: dict[str, str] = {}  # variable -> the ONNX name of its (last level's) LoD offsets
        self._count = 0

    # -- reading the op -----------------------------------------------------------------------
    def var(self, name: str) -> Variable:
        return self.block.var_recursive(name)

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
        self._count += 1
        return f"{hint}__{self._count}"

    def node(self, op_type: str, inputs: list[str], outputs=None, **attrs) -> list[str] | str:
        """Add a node; `outputs` an int (that many fresh names), a name, or a list. Returns its outputs
        (one name when there is one)."""
        if outputs is None or isinstance(outputs, int):
            outputs = [self.fresh(op_type) for _ in range(outputs or 1)]
        elif isinstance(outputs, str):
            outputs = [outputs]
        self.nodes.append(helper.make_node(op_type, inputs, outputs, name=self.fresh(op_type + "_node"), **attrs))
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


def _ints(value) -> bool:
    if isinstance(value, (list, tuple)):
        return all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value) and bool(value)
    return False
