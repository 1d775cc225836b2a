"""An exported model lowered from the rules' opset (OPSET) to an older one, in one pass over the
nodes: the rules write one form, the forms that changed between opsets are rewritten here.

Steps:
  1. infer every value's type and rank in the model as the rules wrote it (valid at OPSET);
  2. per node, subgraphs first, in order: rewrite a form that changed (REWRITES: an input that was
     an attribute, an operator spelled with older ones), each new node lowered in turn;
  3. below opset 11, count negative axes from the front (the older operators take no negative axis);
  4. drop an attribute the older operator lacks where it holds the default the newer one came with,
     refuse any other, and refuse an operator (or an input) the opset lacks, naming the lowest
     opset that has it;
  5. check the result's types with ONNX's inference (operators took fewer types in older opsets),
     naming the lowest opset whose operator takes the type refused.
A refusal names the fleetgraph op whose rule wrote the node (`sources`: node name -> op).
"""

from __future__ import annotations

import itertools
import re

import numpy as np
import onnx
from onnx import defs, helper, numpy_helper

from ..ir.program import Operator
from .emitter import OPSET, OpNotExported
from .opset_rewrites import REWRITES, Refused

# Where, Sign, Erf, IsNaN, NonZero and ConstantOfShape come at 9, and 9 is Paddle 2.0's default
MIN_OPSET = 9
_NEGATIVE_AXES_FROM = 11  # Concat, Flatten, Squeeze, Softmax, Split, TopK, Reduce* count from the back from 11
# attribute values an operator took later than the attribute itself -> the opset that takes them
_VALUES_SINCE = {("ScatterND", "reduction", b"max"): 18, ("ScatterND", "reduction", b"min"): 18}
_AXIS_OPS = {"Concat", "Flatten", "Squeeze", "Unsqueeze", "Softmax", "LogSoftmax", "Split", "TopK", "Slice"}


def lower(model: onnx.ModelProto, opset: int, sources: dict[str, Operator]) -> onnx.ModelProto:
    """`model` (written at OPSET) as an equivalent model at `opset`; `sources` names the op whose
    rule wrote each node, for a refusal."""
    pass_ = _Lowering(model, opset, sources)
    pass_.graph(model.graph)
    _drop_unread_initializers(model.graph)
    del model.opset_import[:]
    model.opset_import.extend(
        [helper.make_opsetid("", opset)] + [o for o in pass_.other_opsets if o.domain not in ("", "ai.onnx")]
    )
    for function in model.functions:
        for entry in function.opset_import:
            if entry.domain in ("", "ai.onnx"):
                entry.version = opset
    pass_.check_types(model)  # step 5
    return model


def lowest_opset(op_type: str, fits=lambda schema: True) -> int | None:
    """The lowest opset up to OPSET whose `op_type` exists and `fits`."""
    for version in range(1, OPSET + 1):
        schema = _schema(op_type, version)
        if schema is not None and fits(schema):
            return version
    return None


def _schema(op_type: str, opset: int):
    try:
        return defs.get_schema(op_type, max_inclusive_version=opset)
    except defs.SchemaError:
        return None


class _Lowering:
    def __init__(self, model: onnx.ModelProto, opset: int, sources: dict[str, Operator]) -> None:
        self.opset, self.sources, self.main = opset, sources, model.graph
        self.other_opsets = list(model.opset_import)
        self.functions = {f.name: f for f in model.functions}
        self.consts = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
        self.ranks, self.types = _inferred(model)  # step 1
        self._counter = itertools.count(1)

    # -- walking ------------------------------------------------------------------------------
    def graph(self, graph: onnx.GraphProto) -> None:
        nodes = list(graph.node)
        del graph.node[:]
        for node in nodes:
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    self.graph(attr.g)
            self.node(node, graph.node)

    def node(self, node: onnx.NodeProto, into) -> None:
        if node.op_type == "Constant":
            value = next((a.t for a in node.attribute if a.name == "value"), None)
            if value is not None:
                self.consts[node.output[0]] = numpy_helper.to_array(value)
        try:
            if node.domain not in ("", "ai.onnx"):
                self._check_function(node)
                into.append(node)
                return
            rule = REWRITES.get(node.op_type)
            rewritten = rule(self, node) if rule is not None else None  # step 2
            if rewritten is not None:
                for new in rewritten:
                    self.sources.setdefault(new.name, self.sources.get(node.name))
                    self.node(new, into)
                return
            if self.opset < _NEGATIVE_AXES_FROM:  # step 3
                self._positive_axes(node)
            self._check(node)  # step 4
        except Refused as err:
            raise OpNotExported(self._source(node), f"{err}; got opset_version {self.opset}") from None
        into.append(node)

    def _source(self, node) -> Operator:
        op = self.sources.get(node.name)
        if op is None:  # every node comes from a rule; this would be the pass's own fault
            raise RuntimeError(f"onnx opsets: node {node.name!r} ({node.op_type}) has no source op")
        return op

    # -- what rewrites use --------------------------------------------------------------------
    def make(self, like: onnx.NodeProto, op_type: str, inputs, outputs=None, **attrs) -> onnx.NodeProto:
        """A node replacing (part of) `like`; `outputs` fresh names unless given."""
        name = f"{like.name}.{next(self._counter)}"
        outputs = [f"{name}.out"] if outputs is None else list(outputs)
        node = helper.make_node(op_type, list(inputs), outputs, name=name, **attrs)
        self.sources[name] = self.sources.get(like.name)
        return node

    def const(self, value, dtype=None) -> str:
        array = np.asarray(value, dtype=dtype)
        name = f"opset{self.opset}_const__{next(self._counter)}"
        self.main.initializer.append(numpy_helper.from_array(array, name))
        self.consts[name] = array
        return name

    def value(self, node, i: int, what: str) -> np.ndarray | None:
        """Input i of `node` as a constant; None where the node leaves it out."""
        if len(node.input) <= i or not node.input[i]:
            return None
        name = node.input[i]
        if name not in self.consts:
            raise Refused(
                f"ONNX {node.op_type}'s {what} is computed in the graph, which needs opset "
                f"{_next_form(node.op_type, self.opset)}"
            )
        return self.consts[name]

    def rank(self, name: str, node) -> int:
        if name not in self.ranks:
            raise Refused(f"ONNX {node.op_type} at opset {self.opset} needs the rank of '{name}', which is not known")
        return self.ranks[name]

    # -- checks --------------------------------------------------------------------------------
    def _positive_axes(self, node) -> None:
        if node.op_type not in _AXIS_OPS and not node.op_type.startswith("Reduce"):
            return
        for attr in node.attribute:
            if attr.name == "axis" and attr.i < 0:
                attr.i += self.rank(node.input[0], node)
            elif attr.name == "axes" and any(a < 0 for a in attr.ints):
                rank = self.rank(node.input[0], node) + (len(attr.ints) if node.op_type == "Unsqueeze" else 0)
                attr.ints[:] = [a % rank for a in attr.ints]

    def _check(self, node) -> None:
        schema = _schema(node.op_type, self.opset)
        if schema is None:
            raise Refused(f"ONNX {node.op_type} needs opset {lowest_opset(node.op_type)}")
        kept = []
        for attr in node.attribute:
            if attr.name in schema.attributes:
                since = _VALUES_SINCE.get((node.op_type, attr.name, attr.s), 0)
                if self.opset < since:
                    raise Refused(f"ONNX {node.op_type}'s attribute {attr.name}={_shown(attr)} needs opset {since}")
                kept.append(attr)
                continue
            newest = _schema(node.op_type, OPSET).attributes.get(attr.name)
            default = newest.default_value if newest is not None else None
            if default is None or not default.name or helper.get_attribute_value(default) != _value(attr):
                since = max(
                    lowest_opset(node.op_type, lambda s, a=attr.name: a in s.attributes),
                    _VALUES_SINCE.get((node.op_type, attr.name, attr.s), 0),
                )
                raise Refused(f"ONNX {node.op_type}'s attribute {attr.name}={_shown(attr)} needs opset {since}")
        if len(kept) < len(node.attribute):
            del node.attribute[:]
            node.attribute.extend(kept)
        used = len(node.input)
        while used and not node.input[used - 1]:
            used -= 1
        if used > schema.max_input:
            since = lowest_opset(node.op_type, lambda s: s.max_input >= used)
            raise Refused(f"ONNX {node.op_type} with {used} inputs needs opset {since}")

    def _check_function(self, call) -> None:
        """A model-local function's body is checked, not rewritten: its values are not typed here."""
        function = self.functions.get(call.op_type)
        for node in function.node if function is not None else []:
            self._check(node)

    def check_types(self, model: onnx.ModelProto) -> None:
        try:
            onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
        except onnx.shape_inference.InferenceError as err:
            text = str(err)
            where = re.search(r"op_type:(\w+), node name: ([^)]*)\)", text)
            kind = re.search(r"unsupported type: (tensor\(\w+\))", text)
            if where is None or where.group(2) not in self.sources:
                raise
            if kind is None:
                raise OpNotExported(self.sources[where.group(2)], f"at opset {self.opset}: {text}") from None
            op_type, found = where.group(1), kind.group(1)
            since = lowest_opset(op_type, lambda s: any(found in c.allowed_type_strs for c in s.type_constraints))
            reason = f"ONNX {op_type} takes no {found} before opset {since}; got opset_version {self.opset}"
            raise OpNotExported(self.sources[where.group(2)], reason) from None


def _value(attr):
    value = helper.get_attribute_value(attr)
    return list(value) if isinstance(value, (list, tuple)) or type(value).__name__.startswith("Repeated") else value


def _shown(attr) -> str:
    value = _value(attr)
    return repr(value.decode() if isinstance(value, bytes) else value)


def _next_form(op_type: str, opset: int) -> int:
    """The first opset after `opset` where `op_type` changed."""
    here = _schema(op_type, opset)
    return lowest_opset(op_type, lambda s: here is None or s.since_version > here.since_version)


def _inferred(model: onnx.ModelProto) -> tuple[dict[str, int], dict[str, int]]:
    """Every typed value's rank and element type, subgraphs included."""
    inferred = onnx.shape_inference.infer_shapes(model)
    ranks, types = {}, {}

    def take(graph) -> None:
        for info in itertools.chain(graph.input, graph.output, graph.value_info):
            tensor = info.type.tensor_type
            if info.type.HasField("tensor_type"):
                types[info.name] = tensor.elem_type
                if tensor.HasField("shape"):
                    ranks[info.name] = len(tensor.shape.dim)
        for t in graph.initializer:
            ranks[t.name], types[t.name] = len(t.dims), t.data_type
        for node in graph.node:
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    take(attr.g)

    take(inferred.graph)
    return ranks, types


def _drop_unread_initializers(graph: onnx.GraphProto) -> None:
    """Constants a rewrite moved into attributes."""
    read = {o.name for o in graph.output}

    def reads(g) -> None:
        for node in g.node:
            read.update(node.input)
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    reads(attr.g)
                    read.update(o.name for o in attr.g.output)

    reads(graph)
    kept = [t for t in graph.initializer if t.name in read]
    del graph.initializer[:]
    graph.initializer.extend(kept)
