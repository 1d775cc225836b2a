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
        if op.type in _SUB_BLOCK_SLOTS:
            _verify_sub_block_op(program, block, i, where)


# a sub-block op's slots: (its condition, what the body reads from outside, what it writes there)
_SUB_BLOCK_SLOTS = {
    "while": ("Condition", ("X",), "Out"),
    "conditional_block": ("Cond", ("Input",), "Out"),
    "recurrent": (None, ("inputs", "initial_states", "parameters"), "outputs"),
}


def _verify_sub_block_op(program: Program, block: Block, i: int, where: str) -> None:
    """A loop or branch: its sub-block is a child of this block, its condition a bool with one
    element, and the outer variables the body reads and writes are the ones the op declares (the
    gradient and the pruning of the program go by them)."""
    op = block.ops[i]
    cond_slot, read_slots, write_slot = _SUB_BLOCK_SLOTS[op.type]
    read_slot = "/".join(read_slots)
    sub_idx = op.attrs.get("sub_block")
    if not isinstance(sub_idx, int) or not 0 < sub_idx < len(program.blocks):
        _fail(block, i, f"{where}: sub_block {sub_idx!r} is not a block of this program")
    sub = program.blocks[sub_idx]
    if sub.parent_idx != block.idx:
        _fail(block, i, f"{where}: sub_block {sub_idx} has parent block {sub.parent_idx}; expected {block.idx}")
    if cond_slot is not None and (op.type == "while" or op.attrs.get("is_scalar_condition")):
        for name in op.input(cond_slot):
            var = block.var_recursive(name)
            if var.dtype != "bool" or any(d > 1 for d in var.shape):
                _fail(
                    block,
                    i,
                    f"{where}: condition {name!r} is {var.dtype} of shape {list(var.shape)}; expected a bool "
                    "with one element",
                )
    declared_reads = {n for slot in read_slots for n in op.input(slot)} | set(op.input(cond_slot or ""))
    declared_writes = set(op.output(write_slot))
    inner: set[str] = set()
    for j, inner_op in enumerate(sub.ops):
        for name in inner_op.input_arg_names:
            if name not in inner and _outer(sub, name) and name not in declared_reads:
                _fail(
                    sub,
                    j,
                    f"{where}: its sub-block {sub.idx} reads {name!r} from outside, which the op does not list "
                    f"in {read_slot}",
                )
        for name in inner_op.output_arg_names:
            inner.add(name)
            if _outer(sub, name) and name not in declared_writes:
                _fail(
                    sub,
                    j,
                    f"{where}: its sub-block {sub.idx} writes {name!r} of an outer block, which the op does not "
                    f"list in {write_slot}",
                )
    if op.type == "while" and not set(op.input(cond_slot)) & inner:
        _fail(block, i, f"{where}: its sub-block never writes the condition {op.input(cond_slot)}, so it never ends")


def _outer(sub: Block, name: str) -> bool:
    return name not in sub.vars and sub._find_var_recursive(name) is not None


def _available_from_ancestors(program: Program, block: Block) -> set[str]:
    """A sub-block runs inside its parent, so everything the parent defines is readable there; a
    gradient block also reads its forward block's values."""
    return {name for other in block._lookup_chain() if other is not block for name in other.vars}


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
