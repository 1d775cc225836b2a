"""Read an ONNX model as a Program over fleetgraph's ops.

Steps:
  1. read the model (a path, bytes or a ModelProto) and its default-domain opset;
  2. take initializers and Constant nodes as constant values;
  3. declare each graph input that is no initializer as a data variable, dims known only at run
     time as -1 (an input `<feed>@LOD` beside a feed makes it a LoD feed: a LoDTensor carries them);
  4. translate each node with its rule (IMPORTERS), appending ops to the program's global block
     (shape inference runs as each op is appended);
  5. return the constants that became variables as values (name -> array: the startup values).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ..ir import FleetgraphError, Program
from ..ops.tensor import VALUE_ATTRS
from . import from_onnx  # noqa: F401  (fills IMPORTERS)
from .builder import IMPORTERS, Builder, Unsupported, node_attrs
from .emitter import DOMAIN
from .export import LOD_SUFFIX


def load(path_or_model):
    """Returns (program, the parameters' values as name -> array, feed names, fetch names)."""
    model = _read(path_or_model)  # step 1
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)
    if opset is None:
        raise FleetgraphError("onnx load: the model imports no default-domain opset; expected ai.onnx")
    graph = model.graph
    consts = {t.name: numpy_helper.to_array(t) for t in graph.initializer}  # step 2
    program = Program()
    b = Builder(program, consts, opset)
    names = {v.name for v in graph.input}
    lods = {v.name for v in graph.input if v.name.endswith(LOD_SUFFIX) and v.name[: -len(LOD_SUFFIX)] in names}
    feeds = [v for v in graph.input if v.name not in consts and v.name not in lods]
    for v in feeds:  # step 3
        _declare_input(program, v, lod_level=int(v.name + LOD_SUFFIX in lods))
    for i, node in enumerate(graph.node):  # step 4
        if node.domain not in ("", "ai.onnx", DOMAIN):
            raise FleetgraphError(
                f"onnx load: node {i} ({node.op_type}) is in domain {node.domain!r}; expected ai.onnx"
            )
        attrs = node_attrs(node)
        if node.op_type == "Constant":
            consts[node.output[0]] = _constant_value(node, attrs, i)
            continue
        rule = IMPORTERS.get(f"{DOMAIN}.{node.op_type}" if node.domain == DOMAIN else node.op_type)
        if rule is None:
            raise FleetgraphError(
                f"onnx load: node {i} ({node.op_type} {node.name!r}) has no fleetgraph mapping; "
                f"expected one of {', '.join(sorted(IMPORTERS))}"
            )
        try:
            rule(b, node, attrs)
        except (Unsupported, FleetgraphError) as err:
            raise FleetgraphError(f"onnx load: node {i} ({node.op_type} {node.name!r}): {err}") from None
    fetches = [v.name for v in graph.output]
    for name in fetches:
        b.var(name)  # an output that is a constant becomes a variable too
    values = {name: np.array(value) for name, value in b.values.items()}
    return program, values, [v.name for v in feeds], fetches  # step 5


def startup_program(program: Program, values: Mapping) -> Program:
    """A startup program that sets each loaded constant from `values` (one assign_value op each), for
    what needs its values as ops: a transpiler hands them to the pservers that own the parameters."""
    startup = Program()
    block = startup.global_block()
    for var in program.list_vars():
        if not var.persistable or var.name not in values:
            continue
        value = np.asarray(values[var.name])
        kind = VALUE_ATTRS.get(str(value.dtype))
        if kind is None:
            raise FleetgraphError(
                f"onnx startup_program: {var.name!r} is {value.dtype}; expected one of {sorted(VALUE_ATTRS)}"
            )
        block.create_var(var.name, value.shape, str(value.dtype), persistable=True)
        attrs = {"shape": list(value.shape), "dtype": str(value.dtype), kind: value.reshape(-1).tolist()}
        block.append_op("assign_value", {}, {"Out": var.name}, attrs)
    return startup


def _read(path_or_model) -> onnx.ModelProto:
    if isinstance(path_or_model, onnx.ModelProto):
        return path_or_model
    if isinstance(path_or_model, (bytes, bytearray)):
        return onnx.load_from_string(bytes(path_or_model))
    try:
        return onnx.load(str(path_or_model))
    except Exception as err:  # protobuf's DecodeError and OSError alike
        raise FleetgraphError(f"onnx load {path_or_model}: not a readable ONNX model ({err})") from None


def _declare_input(program: Program, value_info, lod_level: int) -> None:
    """A feed; one with a `<name>@LOD` input beside it (fleetgraph's export) is fed as a LoDTensor."""
    tensor = value_info.type.tensor_type
    if not value_info.type.HasField("tensor_type"):
        raise FleetgraphError(f"onnx load: input {value_info.name!r} is not a tensor; expected a tensor input")
    dims = [d.dim_value if d.HasField("dim_value") else -1 for d in tensor.shape.dim]
    dtype = str(helper.tensor_dtype_to_np_dtype(tensor.elem_type))
    program.global_block().create_var(
        value_info.name, dims, dtype, is_data=True, stop_gradient=True, need_check_feed=True, lod_level=lod_level
    )


def _constant_value(node, attrs, i) -> np.ndarray:
    for key in ("value", "value_float", "value_floats", "value_int", "value_ints"):
        if key in attrs:
            value = attrs[key]
            if key == "value":
                return numpy_helper.to_array(value)
            return np.asarray(value, dtype=np.float32 if "float" in key else np.int64)
    raise FleetgraphError(
        f"onnx load: node {i} (Constant): attributes {sorted(attrs)}; expected value, value_float(s) or value_int(s)"
    )
