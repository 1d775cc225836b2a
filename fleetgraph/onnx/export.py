"""Export an inference program as an ONNX model: one rule per op type, parameters as initializers.

Steps:
  1. prune the program to the feeds and fetches (forward ops, test mode);
  2. declare the feeds as graph inputs, every dim known only at run time symbolic (dim 0: "batch"),
     and for a feed with one LoD level an int64 input `<feed>@LOD` holding its offsets;
  3. take the persistable variables the ops read as initializers, valued from the values given;
  4. translate each op with its rule (EXPORTERS), carrying LoD offsets to the ops' LoD outputs;
  5. declare the fetches as graph outputs and build the model at the rules' opset (OPSET, or the
     newer one asked for);
  6. for an older opset (MIN_OPSET up), lower the model (opsets.py): the nodes whose form changed
     rewritten, an op none of whose forms exists there refused with the opset it needs.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ..ir import FleetgraphError, Program
from ..ir.program import Variable
from ..ir.prune import prune_for_inference
from . import (  # noqa: F401  (they fill EXPORTERS)
    to_onnx_control_flow,
    to_onnx_conv_nd,
    to_onnx_creation,
    to_onnx_indexing,
    to_onnx_loss,
    to_onnx_losses,
    to_onnx_math,
    to_onnx_nn,
    to_onnx_normalization,
    to_onnx_pointwise,
    to_onnx_resize,
    to_onnx_rnn,
    to_onnx_tensor,
)
from .emitter import DOMAIN, EXPORTERS, OPSET, Emitter, OpNotExported, onnx_dtype
from .opsets import MIN_OPSET, lower

LOD_SUFFIX = "@LOD"
IR_VERSION = 10  # what onnxruntime releases of the last two years read


# How `export(layer, path, input_spec)` turns a dynamic Layer or function into a program: paddle.jit's
# trace, handed down by the package that holds both (onnx sits below jit and imports nothing above it).
_trace_layer = None


def set_layer_tracer(tracer) -> None:
    """`tracer(layer, input_spec) -> (program, feed_names, fetch_vars, values)`."""
    global _trace_layer
    _trace_layer = tracer


def export(program, *args, **kwargs) -> onnx.ModelProto:
    """Paddle 2.0's `paddle.onnx.export(layer, path, input_spec=None, opset_version=9)`: the layer's
    forward traced to a program (paddle.jit) and written to `path + '.onnx'`; or fleetgraph's
    `export(program, feed_names, fetch_vars, values, path=None, opset=None)` for a static program."""
    if isinstance(program, Program):
        return export_program(program, *args, **kwargs)
    return _export_layer(program, *args, **kwargs)


def _export_layer(layer, path: str, input_spec=None, opset_version: int = 9, **configs) -> onnx.ModelProto:
    if configs:
        raise FleetgraphError(
            f"paddle.onnx.export: {sorted(configs)}: not supported; expected path, input_spec, opset_version"
        )
    if input_spec is None:
        raise FleetgraphError("paddle.onnx.export: expected input_spec (InputSpecs or Tensors) to trace the layer with")
    if not isinstance(path, str) or not path:
        raise FleetgraphError(f"paddle.onnx.export: path; expected a file path without '.onnx', got {path!r}")
    if _trace_layer is None:
        raise FleetgraphError("paddle.onnx.export: tracing a layer needs paddle.jit (import fleetgraph first)")
    program, feed_names, fetch_vars, values = _trace_layer(layer, input_spec)
    return export_program(program, feed_names, fetch_vars, values, path + ".onnx", opset_version)


def export_program(
    program: Program, feed_names, fetch_vars, values: Mapping, path=None, opset: int | None = None
) -> onnx.ModelProto:
    """The inference part of `program` (from `feed_names` to `fetch_vars`) as an ONNX model, with
    the parameters' values from `values` (name -> array, e.g. a scope's `vars`); written to `path`
    if given."""
    if not isinstance(values, Mapping):
        raise FleetgraphError(
            f"onnx export: values; expected a mapping of variable name -> array (a scope's .vars), "
            f"got {type(values).__name__}"
        )
    opset = OPSET if opset is None else int(opset)
    if not MIN_OPSET <= opset <= onnx.defs.onnx_opset_version():
        raise FleetgraphError(
            f"onnx export: opset {opset}; expected {MIN_OPSET} to {onnx.defs.onnx_opset_version()} "
            f"(Where, Sign, Erf, IsNaN and NonZero come at {MIN_OPSET})"
        )
    feeds = [getattr(v, "name", v) for v in ([feed_names] if isinstance(feed_names, str) else feed_names)]
    fetches = [getattr(v, "name", v) for v in (fetch_vars if isinstance(fetch_vars, (list, tuple)) else [fetch_vars])]
    pruned = prune_for_inference(program, feeds, fetches)  # step 1
    block = pruned.global_block()
    e = Emitter(block, max(opset, OPSET))
    inputs = [_value_info(block.var(n), n) for n in feeds]  # step 2
    for name in feeds:
        if block.var(name).lod_level:
            e.lods[name] = name + LOD_SUFFIX
    e.initializers += _initializers(block, feeds, values)  # step 3
    e.defined.update(feeds + [t.name for t in e.initializers])
    with _naming(program):  # step 4
        e.emit_block()
    read = {n for node in e.nodes for n in node.input}
    for name in feeds:  # a LoD is an input only where some op reads it (sequence_pool)
        if e.lods.get(name) in read:
            if block.var(name).lod_level > 1:
                raise FleetgraphError(
                    f"onnx export: feed {name!r} has {block.var(name).lod_level} LoD levels; expected 1"
                )
            inputs.append(helper.make_tensor_value_info(e.lods[name], onnx.TensorProto.INT64, [name + "_sequences+1"]))
    outputs = [_value_info(block.var(n), e.name_of(n)) for n in fetches]  # step 5 (a fed name written again: renamed)
    graph = helper.make_graph(e.nodes, "fleetgraph", inputs, outputs, initializer=e.initializers)
    opsets = [helper.make_opsetid("", e.opset)] + ([helper.make_opsetid(DOMAIN, 1)] if e.functions else [])
    model = helper.make_model(
        graph,
        opset_imports=opsets,
        functions=list(e.functions.values()),
        producer_name="fleetgraph",
        ir_version=IR_VERSION,
    )
    if opset < e.opset:  # step 6
        with _naming(program):
            model = lower(model, opset, e.sources)
    if path is not None:
        _save(model, os.fspath(path))
    return model


@contextlib.contextmanager
def _naming(program: Program):
    """A rule's or the lowering's refusal, or an op without rule, as an error naming the op in the
    user's program."""
    try:
        yield
    except OpNotExported as err:
        if err.reason is not None:
            raise FleetgraphError(f"{_where(program, err.op)}: {err.reason}") from None
        raise FleetgraphError(
            f"{_where(program, err.op)} has no ONNX mapping; expected one of {', '.join(sorted(EXPORTERS))}"
        ) from None


def _save(model: onnx.ModelProto, path: str) -> None:
    """Write the model beside `path` under a temporary name, then rename it into place, so a failed
    or concurrent write never leaves half a model where a reader looks."""
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(model.SerializeToString())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _where(program: Program, op) -> str:
    """An error's opening, naming the pruned op by its index in the user's program (the op of its
    block writing the same outputs); only built for an error, as the search is a scan of the block."""
    idx = op.block.idx
    ops = program.block(idx).ops if idx < program.num_blocks else []
    index = next((i for i, c in enumerate(ops) if c.type == op.type and c.outputs == op.outputs), -1)
    return f"onnx export: op {op.type} (index {index} of block {idx})"


def _dims(var: Variable) -> list:
    return [("batch" if i == 0 else f"{var.name}_dim{i}") if d < 0 else d for i, d in enumerate(var.shape)]


def _value_info(var: Variable, name: str):
    dims = _dims(var)
    if var.lod_level:  # rows of all sequences, not one a sample
        dims[0] = f"{var.name}_rows" if var.shape and var.shape[0] < 0 else dims[0]
    return helper.make_tensor_value_info(name, onnx_dtype(var.dtype), dims)


def _initializers(block, feeds, values: Mapping) -> list:
    """Persistable variables some op reads before any op writes them."""
    written, out = set(feeds), []
    for op in block.ops:
        for name in op.input_arg_names:
            var = block.var_recursive(name)
            if name in written or not var.persistable:
                continue
            written.add(name)
            value = values.get(name)
            if value is None:
                raise FleetgraphError(
                    f"onnx export: parameter {name!r} has no value in the values given; run the startup program first"
                )
            array = np.asarray(getattr(value, "data", value) if hasattr(value, "levels") else value)
            out.append(numpy_helper.from_array(array.astype(var.dtype, copy=False), name))
        written.update(op.output_arg_names)
    return out
