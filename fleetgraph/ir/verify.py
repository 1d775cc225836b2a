"""`verify(program)`: the invariants every pass must keep, with the ops around a fault in the message."""

from __future__ import annotations

from .errors import VerifyError, close_matches
from .program import Block, Program
from .registry import COMMON_ATTRS, get_op_def, has_op, registered_ops


def verify(program: Program, feed_names=()) -> Program:
    """Check that every op type is registered, its slots and attrs match the declaration, and every
    variable read is fed, produced earlier, or persistable. Returns the program; raises VerifyError."""
    for block in program.blocks:
        _verify_block(program, block, set(feed_names))
    return program


def _verify_block(program: Program, block: Block, feeds: set[str]) -> None:
    available = set(feeds) | _available_from_ancestors(program, block)
    for name, var in block.vars.items():
        if var.persistable or var.is_data:
            available.add(name)
    for i, op in enumerate(block.ops):
        where = f"block {block.idx} op {i} ({op.type})"
        if not has_op(op.type):
            _fail(block, i, f"{where}: unknown op type{close_matches(op.type, registered_ops())}")
        opdef = get_op_def(op.type)
        for kind, slots, declared in (("input", op.inputs, opdef.inputs), ("output", op.outputs, opdef.outputs)):
            names = {s.name for s in declared}
            for slot in slots:
                if slot not in names:
                    _fail(block, i, f"{where}: unknown {kind} slot {slot!r}{close_matches(slot, names)}")
            for s in declared:
                if not s.optional and not slots.get(s.name):
                    _fail(block, i, f"{where}: required {kind} slot {s.name!r} is empty")
        for key, value in op.attrs.items():
            if key in COMMON_ATTRS:
                continue
            if key not in opdef.attrs:
                _fail(block, i, f"{where}: unknown attr {key!r}{close_matches(key, opdef.attrs)}")
            problem = _attr_problem(opdef.attrs[key], value)
            if problem:
                _fail(block, i, f"{where}: attr {key!r}: {problem}")
        for slot, names in op.inputs.items():
            for name in names:
                if block._find_var_recursive(name) is None:
                    _fail(block, i, f"{where}: input {slot} names variable {name!r}, which does not exist")
                if name not in available:
                    _fail(
                        block,
                        i,
                        f"{where}: input {slot} reads {name!r} before any op writes it "
                        "(it is not fed and not persistable)",
                    )
        for slot, names in op.outputs.items():
            for name in names:
                if block._find_var_recursive(name) is None:
                    _fail(block, i, f"{where}: output {slot} names variable {name!r}, which does not exist")
                available.add(name)


def _available_from_ancestors(program: Program, block: Block) -> set[str]:
    """A sub-block runs inside its parent, so everything the parent defines is readable there."""
    names: set[str] = set()
    parent = block.parent
    while parent is not None:
        names |= set(parent.vars)
        parent = parent.parent
    return names


def _attr_problem(default, value) -> str | None:
    if default is None:
        return None
    expected = type(default)
    if expected is bool:
        ok = isinstance(value, bool)
    elif expected is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif expected is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    else:
        ok = isinstance(value, expected)
    return None if ok else f"expected {expected.__name__}, got {type(value).__name__} {value!r}"


def _fail(block: Block, index: int, message: str) -> None:
    lo, hi = max(0, index - 2), min(len(block.ops), index + 3)
    around = [f"  {'>>' if j == index else '  '} {j}: {block.ops[j].to_string()}" for j in range(lo, hi)]
    raise VerifyError(message + "\n" + "\n".join(around))
