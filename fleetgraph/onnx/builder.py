"""What an ONNX node's import rule sees: its inputs as program variables, constants as values, and
a way to append fleetgraph ops."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from onnx import helper

from ..ir import FleetgraphError, Program, unique_name
from ..ir.program import Variable

# ONNX op type -> rule(b, node, attrs): one small function per op type, filled by from_onnx
IMPORTERS: dict[str, Callable] = {}


def imports(*onnx_types: str):
    def register(fn):
        for t in onnx_types:
            IMPORTERS[t] = fn
        return fn

    return register


class Unsupported(FleetgraphError):
    """A node (or its attrs) that fleetgraph's ops cannot express."""


class Builder:
    """Appends ops to a fresh program; ONNX tensor names are the variables' names. Constants
    (initializers, Constant nodes) stay values until an op reads one as a variable: then a float
    one becomes a trainable parameter, any other a persistable variable, its value in `values`."""

    def __init__(self, program: Program, consts: dict[str, np.ndarray], opset: int) -> None:
        self.program, self.block = program, program.global_block()
        self.consts, self.values, self.opset = consts, {}, opset

    def value(self, name: str, what: str) -> np.ndarray:
        """A constant input (a shape, axes, split sizes): it must be known when the graph is read."""
        if name not in self.consts:
            raise Unsupported(
                f"{what} '{name}' is computed in the graph; expected a constant (initializer or Constant)"
            )
        return self.consts[name]

    def var(self, name: str, trainable: bool = True) -> Variable:
        if self.block.has_var(name):
            return self.block.var(name)
        if name not in self.consts:
            raise Unsupported(f"input '{name}' is produced by no node, graph input or initializer")
        array = self.consts[name]
        self.values[name] = array
        if trainable and array.dtype.kind == "f":
            return self.block.create_parameter(name, array.shape, str(array.dtype))
        return self.block.create_var(name, array.shape, str(array.dtype), persistable=True, stop_gradient=True)

    def shape(self, name: str) -> tuple[int, ...]:
        return self.var(name).shape

    def dtype(self, name: str) -> str:
        return self.var(name).dtype

    def temp(self, dtype="float32", name: str | None = None) -> str:
        name = name or unique_name.generate("onnx_tmp")
        self.block.create_var(name, (), dtype)
        return name

    def op(self, type: str, inputs: dict, outputs: dict, attrs: dict | None = None) -> None:
        """Append a fleetgraph op; output variables not yet declared are created (shapes inferred)."""
        for names in outputs.values():
            for name in names if isinstance(names, list) else [names]:
                if not self.block.has_var(name):
                    self.block.create_var(name, (), "float32")
        ins = {k: [self.var(n).name for n in (v if isinstance(v, list) else [v])] for k, v in inputs.items()}
        self.block.append_op(type, ins, outputs, attrs or {})


def node_attrs(node) -> dict:
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}
