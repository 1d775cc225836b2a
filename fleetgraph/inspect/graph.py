"""Views of the IR for people: a block as a networkx graph or Graphviz DOT text, and a diff of two programs."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from ..ir.errors import fmt_shape
from ..ir.program import Block, Operator, OpRole, Parameter, Program, Variable

# -- networkx -----------------------------------------------------------------------------------


def op_node(index: int) -> str:
    """The node id of the op at `index` of its block."""
    return f"op:{index}"


def var_node(name: str) -> str:
    """The node id of the variable `name`."""
    return f"var:{name}"


def to_networkx(block: Block) -> nx.MultiDiGraph:
    """Ops and variables as nodes; an edge var -> op per input and op -> var per output, with `slot`.

    Op nodes carry kind="op", type, index, role (the op_role attr) and peers (the endpoints a send,
    recv or barrier talks to: its epmap or endpoints attr; empty for other ops); variable nodes carry kind="var",
    name, shape, dtype, persistable, parameter and block (the block the variable lives in; None for a
    name no block declares). Every variable of the block is a node, and so is every variable of a
    parent block that an op of this block names.
    """
    graph = nx.MultiDiGraph(block=block.idx)
    for name in block.vars:
        _add_var(graph, block, name)
    for index, op in enumerate(block.ops):
        node = op_node(index)
        peers = op.attrs.get("epmap") or op.attrs.get("endpoints") or []
        graph.add_node(
            node, kind="op", type=op.type, index=index, role=int(op.attrs.get("op_role", 0)), peers=list(peers)
        )
        for slot, names in op.inputs.items():
            for name in names:
                graph.add_edge(_add_var(graph, block, name), node, slot=slot)
        for slot, names in op.outputs.items():
            for name in names:
                graph.add_edge(node, _add_var(graph, block, name), slot=slot)
    return graph


def _add_var(graph: nx.MultiDiGraph, block: Block, name: str) -> str:
    node = var_node(name)
    if node not in graph:
        graph.add_node(node, kind="var", name=name, **_var_node_attrs(block._find_var_recursive(name)))
    return node


def _var_node_attrs(var: Variable | None) -> dict[str, Any]:
    if var is None:  # a name no block declares: still drawn, so a program that fails `verify` can be looked at
        return dict(shape=None, dtype=None, persistable=False, parameter=False, block=None)
    return dict(
        shape=var.shape,
        dtype=var.dtype,
        persistable=var.persistable,
        parameter=isinstance(var, Parameter),
        block=var.block.idx,
    )


# -- Graphviz DOT -------------------------------------------------------------------------------

_HEADER = [
    '  node [fontname="Helvetica", fontsize=10];',
    '  edge [fontname="Helvetica", fontsize=9, fontcolor="#555555"];',
]


def to_dot(block: Block) -> str:
    """Graphviz DOT text of one block: ops as boxes (coloured by role), variables as ellipses
    (persistables filled, parameters with a double border, parent-block variables dashed)."""
    lines = [f"digraph {_quote(f'block{block.idx}')} {{", *_HEADER]
    lines += _block_statements(block, prefix="", indent="  ")
    return "\n".join([*lines, "}"]) + "\n"


def program_to_dot(program: Program) -> str:
    """Graphviz DOT text of a whole program, one cluster per block; node ids are prefixed `b<idx>/`."""
    lines = ["digraph program {", "  compound=true;", *_HEADER]
    for block in program.blocks:
        title = f"block {block.idx}" + (f" (parent {block.parent_idx})" if block.parent_idx >= 0 else "")
        lines += [f"  subgraph cluster_block{block.idx} {{", f"    label={_quote(title)};"]
        lines += _block_statements(block, prefix=f"b{block.idx}/", indent="    ")
        lines.append("  }")
    return "\n".join([*lines, "}"]) + "\n"


def _block_statements(block: Block, prefix: str, indent: str) -> list[str]:
    graph = to_networkx(block)
    lines = []
    for node, data in graph.nodes(data=True):
        style = _op_style(data) if data["kind"] == "op" else _var_style(data, block.idx)
        lines.append(f"{indent}{_quote(prefix + node)} [{_attr_list(style)}];")
    for src, dst, data in graph.edges(data=True):
        lines.append(f"{indent}{_quote(prefix + src)} -> {_quote(prefix + dst)} [label={_quote(data['slot'])}];")
    return lines


def _op_style(data: dict) -> dict[str, str]:
    """A box coloured by role; a communication op's label names where it goes (`send -> 127.0.0.1:6174`)."""
    peers = list(dict.fromkeys(data.get("peers", [])))
    label = data["type"] + ("\n-> " + "\n-> ".join(peers) if peers else "")
    return {"label": label, "shape": "box", "style": "filled", "fillcolor": _role_color(data["role"])}


def _role_color(role: int) -> str:
    if role & (OpRole.RPC | OpRole.Dist):
        return "#f9d0a5"  # communication
    if role & OpRole.Optimize:
        return "#c9e7c3"
    if role & OpRole.Backward:
        return "#f4c7cf"
    return "#cfe0f7"  # forward, loss, lr schedule


def _var_style(data: dict, block_idx: int) -> dict[str, str]:
    shape = "?" if data["shape"] is None else fmt_shape(data["shape"])
    style = {"label": f"{data['name']}\n{shape}", "shape": "ellipse"}
    looks = ["filled"] if data["persistable"] else []
    if data["persistable"]:
        style["fillcolor"] = "#fde9b8"
    if data["parameter"]:
        style["peripheries"] = "2"
    if data["block"] != block_idx:  # from a parent block, or declared nowhere (drawn red)
        looks.append("dashed")
        style["color"] = "#888888" if data["block"] is not None else "red"
    if looks:
        style["style"] = ",".join(looks)
    return style


def _attr_list(attrs: dict[str, str]) -> str:
    return ", ".join(f"{key}={_quote(value)}" for key, value in attrs.items())


def _quote(text: str) -> str:
    """A DOT quoted string: backslashes and quotes escaped, newlines as DOT's centred line break."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


# -- diff ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OpRecord:
    """An op as a diff reports it: its index in its block, its type and its argument names."""

    index: int
    type: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]

    @classmethod
    def of(cls, index: int, op: Operator) -> OpRecord:
        return cls(index, op.type, tuple(op.input_arg_names), tuple(op.output_arg_names))

    def __str__(self) -> str:
        return f"{self.type}({', '.join(self.inputs)} -> {', '.join(self.outputs)})"


@dataclass(frozen=True)
class OpChange:
    """An op whose type and arguments stayed while its attrs changed: attr -> (before, after)."""

    before: OpRecord
    after: OpRecord
    attrs: dict[str, tuple[Any, Any]]

    def __str__(self) -> str:
        return f"{self.after}: " + ", ".join(f"{k} {b!r} -> {a!r}" for k, (b, a) in self.attrs.items())


@dataclass(frozen=True)
class VarChange:
    """A variable present on both sides whose description changed: field -> (before, after)."""

    name: str
    fields: dict[str, tuple[Any, Any]]

    def __str__(self) -> str:
        return f"{self.name}: " + ", ".join(f"{k} {b} -> {a}" for k, (b, a) in self.fields.items())


@dataclass
class BlockDiff:
    """The changes of one block; false when there are none."""

    idx: int
    added_ops: list[OpRecord] = field(default_factory=list)
    removed_ops: list[OpRecord] = field(default_factory=list)
    changed_ops: list[OpChange] = field(default_factory=list)
    added_vars: list[str] = field(default_factory=list)
    removed_vars: list[str] = field(default_factory=list)
    changed_vars: list[VarChange] = field(default_factory=list)

    def __bool__(self) -> bool:
        return any(getattr(self, name) for name in _CHANGE_FIELDS)

    def __str__(self) -> str:
        lines = [f"block{self.idx}:"]
        lines += [f"+ op {r}" for r in self.added_ops] + [f"- op {r}" for r in self.removed_ops]
        lines += [f"~ op {c}" for c in self.changed_ops]
        lines += [f"+ var {n}" for n in self.added_vars] + [f"- var {n}" for n in self.removed_vars]
        lines += [f"~ var {c}" for c in self.changed_vars]
        return "\n".join(lines)


_CHANGE_FIELDS = ("added_ops", "removed_ops", "changed_ops", "added_vars", "removed_vars", "changed_vars")


@dataclass
class ProgramDiff:
    """The changes between two programs, one BlockDiff per block index either side has; false when equal."""

    blocks: list[BlockDiff]

    def block(self, idx: int) -> BlockDiff:
        return self.blocks[idx]

    def __bool__(self) -> bool:
        return any(self.blocks)

    def __str__(self) -> str:
        return "\n".join(str(b) for b in self.blocks if b) or "no differences"


def diff(before: Program, after: Program) -> ProgramDiff:
    """What `after` adds, removes and changes relative to `before`, block by block.

    Ops are compared as multisets of (type, inputs, outputs, attrs), so reordering alone is not a
    change. An unmatched op on each side with the same type and arguments is reported as one changed
    op (its attrs differ) rather than as a removal and an addition. Variables are matched by name.
    """
    count = max(len(before.blocks), len(after.blocks))
    return ProgramDiff([_diff_block(i, _nth(before, i), _nth(after, i)) for i in range(count)])


def _nth(program: Program, idx: int) -> Block | None:
    return program.blocks[idx] if idx < len(program.blocks) else None


def _diff_block(idx: int, before: Block | None, after: Block | None) -> BlockDiff:
    before_ops, after_ops = (before.ops if before else []), (after.ops if after else [])
    before_vars, after_vars = (before.vars if before else {}), (after.vars if after else {})
    removed, added = _unmatched(before_ops, after_ops), _unmatched(after_ops, before_ops)
    changed = _pair_attr_changes(removed, added)
    return BlockDiff(
        idx,
        added_ops=[OpRecord.of(i, op) for i, op in added],
        removed_ops=[OpRecord.of(i, op) for i, op in removed],
        changed_ops=changed,
        added_vars=[n for n in after_vars if n not in before_vars],
        removed_vars=[n for n in before_vars if n not in after_vars],
        changed_vars=[c for n in before_vars if n in after_vars and (c := _var_change(n, before_vars, after_vars))],
    )


def _unmatched(ops: list[Operator], others: list[Operator]) -> list[tuple[int, Operator]]:
    """(index, op) of the ops of `ops` left over once each op of `others` has cancelled an equal one."""
    left = Counter(_op_key(op, with_attrs=True) for op in others)
    result = []
    for index, op in enumerate(ops):
        key = _op_key(op, with_attrs=True)
        if left[key]:
            left[key] -= 1
        else:
            result.append((index, op))
    return result


def _pair_attr_changes(removed: list, added: list) -> list[OpChange]:
    """Move each removed op that has an added twin (same type and arguments) into a change; in place."""
    changes = []
    for r_index, r_op in list(removed):
        twin = next((pair for pair in added if _op_key(pair[1]) == _op_key(r_op)), None)
        if twin is None:
            continue
        removed.remove((r_index, r_op))
        added.remove(twin)
        changes.append(OpChange(OpRecord.of(r_index, r_op), OpRecord.of(*twin), _changed(r_op.attrs, twin[1].attrs)))
    return changes


def _op_key(op: Operator, with_attrs: bool = False) -> str:
    attrs = {k: v for k, v in op.attrs.items() if k != "op_callstack"} if with_attrs else {}
    return json.dumps([op.type, op.inputs, op.outputs, attrs], sort_keys=True, default=repr)


def _var_change(name: str, before: dict, after: dict) -> VarChange | None:
    fields = _changed(_var_fields(before[name]), _var_fields(after[name]))
    return VarChange(name, fields) if fields else None


def _var_fields(var: Variable) -> dict[str, Any]:
    keys = ("dtype", "type", "lod_level", "persistable", "stop_gradient", "is_data")
    fields = {"shape": fmt_shape(var.shape), **{k: getattr(var, k) for k in keys}}
    return {**fields, "parameter": isinstance(var, Parameter)}


def _changed(before: dict, after: dict) -> dict[str, tuple[Any, Any]]:
    keys = [k for k in {**before, **after} if k != "op_callstack"]
    return {k: (before.get(k), after.get(k)) for k in keys if before.get(k) != after.get(k)}
