"""Sparse embedding chains run as one step each way: the `lookup_table` -> SUM `sequence_pool` pairs
of a CTR model (one per slot, all over one table) look their ids up in one gather, and their
gradients become the table's SelectedRows in one concatenation, instead of ~100 small ops a batch.

As with the batched recvs, the program is unchanged: this rewrites the executor's prepared steps
only, and every variable the original ops write still gets its value, bit for bit. A batch the fast
path does not cover (a sequence that does not hold exactly one id, an id outside the table, nested
LoD) runs the original steps one by one, so their results and errors are the ones users see.

Steps of `fuse_lookup_chains`:
  1. find the forward chains: a sparse lookup (no padding_idx, not distributed) whose output only one
     SUM `sequence_pool` reads (and its grad op), in the whole program;
  2. group them by table, op type and kernel arguments; a group of two or more becomes one step at its
     first lookup (where the ids and the table are there, and before any pool's reader), when no op
     between its first lookup and its last pool writes the table or any ids;
  2b. the SUM sequence_pools that alone read outputs of one distributed_lookup_table (a parameter-
     server trainer's lookup of every slot at once) become one step at the first of them, likewise;
  3. find the backward chains -- a SUM sequence_pool_grad whose X@GRAD only a sparse lookup grad op
     reads, whatever looked the rows up (a parameter-server trainer's distributed_lookup_table too) --
     and group them likewise; when a group's table gradients feed one `sum` that alone reads them,
     the group and the sum become one step at the sum (after the last output gradient it reads),
     under the same condition.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from ..ir import get_op_def
from ..ops.lod_tensor import LoDTensor, one_row_each, strip
from ..ops.selected_rows import SelectedRows
from .steps import run_steps

_LOOKUPS = ("lookup_table", "lookup_table_v2")
_LOOKUP_GRADS = ("lookup_table_grad", "lookup_table_v2_grad")


@dataclass
class _Forward:
    """A lookup and the SUM sequence_pool that alone reads its output (besides the pool's grad op)."""

    lookup: object  # steps of the plan
    pool: object

    @property
    def table(self) -> str:
        return self.lookup.op.input("W")[0]

    @property
    def ids(self) -> str:
        return self.lookup.op.input("Ids")[0]


@dataclass
class _Backward:
    """A SUM sequence_pool_grad and the sparse lookup grad op that alone reads its X@GRAD (the
    forward lookup may be one of a distributed table: a trainer's distributed_lookup_table)."""

    pool_grad: object
    lookup_grad: object

    @property
    def table(self) -> str:
        return self.lookup_grad.op.input("W")[0]

    @property
    def ids(self) -> str:
        return self.lookup_grad.op.input("Ids")[0]


class _FusedStep:
    """A step of the plan standing for several ops: the plan loop runs it as any other."""

    __slots__ = (
        *("index", "op", "kernel", "ins", "outs", "kwargs"),
        *("single_out", "flat_ins", "seed", "needs_context", "originals"),
    )

    def __init__(self, kernel, ins: list[str], outs: list[str]) -> None:
        self.kernel, self.ins, self.outs, self.kwargs = kernel, ins, [outs], {}
        self.single_out, self.flat_ins, self.seed, self.needs_context = True, True, None, False
        self.index = self.op = None  # set where it is placed
        self.originals: list = []  # the steps it stands for, in order: they run when it declines a batch


def fuse_lookup_chains(steps: list, block) -> list:
    readers, writers = _uses(block)
    step_of = {id(s.op): s for s in steps}
    replace: dict[int, object] = {}  # id(step) -> the fused step at its place, or None: dropped
    forward = [c for s in steps if (c := _forward_chain(s, readers, step_of)) is not None]  # step 1
    for group in _groups(forward, "lookup"):  # step 2
        if len(group) > 1 and _untouched(group, writers, [c.lookup for c in group], [c.pool for c in group]):
            _place(replace, [s for c in group for s in (c.lookup, c.pool)], _forward(group), at=0)
    pools: dict[int, list] = defaultdict(list)  # step 2b: id(distributed lookup op) -> its pools
    for s in steps:
        if (maker := _pooled_rows(s, readers, writers)) is not None:
            pools[maker].append(s)
    for group in pools.values():
        if len(group) > 1:
            _place(replace, group, _pools_of_rows(group), at=0)
    backward = [c for s in steps if (c := _backward_chain(s, readers, step_of)) is not None]
    for group in _groups(backward, "lookup_grad"):  # step 3
        total = _sum_of_grads(group, readers, step_of) if len(group) > 1 else None
        if total is not None and _untouched(group, writers, [c.pool_grad for c in group], [total]):
            originals = [s for c in group for s in (c.pool_grad, c.lookup_grad)] + [total]
            _place(replace, originals, _backward(group, total), at=-1)
    if not replace:
        return steps
    return [replace.get(id(s), s) for s in steps if replace.get(id(s), s) is not None]


def _groups(chains: list, lookup: str) -> list[list]:
    """Chains by table, op type and kernel arguments: one kernel call serves a group."""
    groups: dict[tuple, list] = defaultdict(list)
    for c in chains:
        step = getattr(c, lookup)
        groups[(step.op.type, c.table, repr(sorted(step.kwargs.items())))].append(c)
    return list(groups.values())


def _uses(block) -> tuple[dict, dict]:
    """Every op of the program that reads / writes each name (sub-blocks read the parent's names)."""
    readers, writers = defaultdict(list), defaultdict(list)
    for b in block.program.blocks:
        for op in b.ops:
            for n in op.input_arg_names:
                readers[n].append(op)
            for n in op.output_arg_names:
                writers[n].append(op)
    return readers, writers


def _sparse_lookup(op) -> bool:
    return bool(op.attrs.get("is_sparse")) and op.attrs.get("padding_idx", -1) == -1


def _forward_chain(step, readers, step_of) -> _Forward | None:
    op = step.op
    if op.type not in _LOOKUPS or not _sparse_lookup(op) or op.attrs.get("is_distributed"):
        return None
    uses = readers[op.output("Out")[0]]
    pools = [u for u in uses if u.type == "sequence_pool" and u.attrs.get("pooltype") == "SUM"]
    if len(pools) != 1 or any(u is not pools[0] and u.type != "sequence_pool_grad" for u in uses) or len(uses) > 2:
        return None
    pool = step_of.get(id(pools[0]))  # None: read from another block
    return _Forward(step, pool) if pool is not None else None


def _pooled_rows(step, readers, writers) -> int | None:
    """id of the distributed_lookup_table op whose output only this SUM pool (and its grad op) reads."""
    op = step.op
    if op.type != "sequence_pool" or op.attrs.get("pooltype") != "SUM":
        return None
    rows = op.input("X")[0]
    makers, uses = writers[rows], readers[rows]
    if len(makers) != 1 or makers[0].type != "distributed_lookup_table" or makers[0].block is not op.block:
        return None
    if len(uses) > 2 or any(u is not op and u.type != "sequence_pool_grad" for u in uses):
        return None
    return id(makers[0])


def _backward_chain(step, readers, step_of) -> _Backward | None:
    op = step.op
    if op.type != "sequence_pool_grad" or op.attrs.get("pooltype") != "SUM":
        return None
    uses = readers[op.output("X@GRAD")[0]]
    if len(uses) != 1 or uses[0].type not in _LOOKUP_GRADS or not _sparse_lookup(uses[0]):
        return None
    grad = step_of.get(id(uses[0]))
    return _Backward(step, grad) if grad is not None else None


def _sum_of_grads(group: list[_Backward], readers, step_of):
    """The one `sum` step that adds exactly the group's table gradients and that alone reads them,
    if there is one (its output may take the name of one of them: what reads it later reads the sum)."""
    grads = [c.lookup_grad.op.output("W@GRAD")[0] for c in group]
    sums = {id(u): u for g in grads for u in readers[g] if u.type == "sum"}
    if len(sums) != 1:
        return None
    total = next(iter(sums.values()))
    if sorted(total.input("X")) != sorted(grads) or id(total) not in step_of:
        return None
    at, out = step_of[id(total)].index, total.output("Out")[0]
    for g in grads:
        for u in readers[g]:
            later = g == out and id(u) in step_of and step_of[id(u)].index > at
            if u is not total and not later:
                return None
    return step_of[id(total)]


def _untouched(group: list, writers, firsts: list, lasts: list) -> bool:
    """No op between the first of `firsts` and the last of `lasts` writes the table or any ids, so
    one step at the first place reads what each original op read."""
    lo, hi = min(s.index for s in firsts), max(s.index for s in lasts)
    block = firsts[0].op.block
    names = {group[0].table} | {c.ids for c in group}
    return not any(op.block is block and lo <= op.idx <= hi for n in names for op in writers[n])


def _place(replace: dict, originals: list, fused: _FusedStep, at: int) -> None:
    """`fused` stands at the place of originals[at] (sorted by index); the other originals go. It
    also reads whatever else the originals read, for the batches it hands to them."""
    originals = sorted(originals, key=lambda s: s.index)
    fused.index, fused.op = originals[at].index, originals[at].op
    for s in originals:
        replace[id(s)] = None
    replace[id(originals[at])] = fused
    fused.originals = originals
    made = {n for s in originals for n in s.op.output_arg_names}
    extra = [n for s in originals for n in s.op.input_arg_names if n not in made and n not in fused.ins]
    fast, wanted = fused.kernel, len(fused.ins)
    fused.ins = fused.ins + list(dict.fromkeys(extra))
    names, outs = list(fused.ins), fused.outs[0]

    def kernel(xp, *args):
        values = fast(xp, *args[:wanted])
        if values is not None:
            return values
        env = dict(zip(names, args))
        run_steps(originals, env, xp)
        return [env.get(n) for n in outs]

    fused.kernel = kernel


def _one_id_each(ids) -> bool:
    """Every value is a one-level LoDTensor whose every sequence holds one id (a CTR slot's LoD), all
    of one row shape. Checked for all the slots at once: per slot, it would cost more than the gather."""
    if not all(isinstance(i, LoDTensor) and len(i.levels) == 1 for i in ids):
        return False
    rows = {len(i.data) for i in ids}
    if len(rows) != 1 or len({i.data.shape[1:] for i in ids}) != 1:
        return all(one_row_each(i.levels[0], i.data) for i in ids)
    n = rows.pop()
    if any(len(i.levels[0]) != n + 1 for i in ids):
        return False
    return bool((np.stack([i.levels[0] for i in ids]) == np.arange(n + 1)).all())


# -- the two steps --------------------------------------------------------------------------------


def _forward(group: list[_Forward]) -> _FusedStep:
    """Each lookup's Out and each pool's Out (a sequence of one row pools to that row) from one gather
    over all the group's ids."""
    op = group[0].lookup.op
    lookup, kwargs = get_op_def(op.type).kernel, group[0].lookup.kwargs
    outs, with_index = [], []
    for c in group:
        index = c.pool.op.output("MaxIndex")[:1]
        outs += [c.lookup.op.output("Out")[0], c.pool.op.output("Out")[0], *index]
        with_index.append(bool(index))

    def fast(xp, w, *ids):
        if not _one_id_each(ids):
            return None
        try:
            rows = lookup(xp, w, np.concatenate([i.data for i in ids]), **kwargs)
        except IndexError:  # an id outside the table: the original op says which
            return None
        values, start = [], 0
        for i, index in zip(ids, with_index):
            part = rows[start : start + len(i.data)]
            start += len(i.data)
            values += [LoDTensor(part, i.levels), part] + ([None] if index else [])
        return values

    return _FusedStep(fast, [group[0].table] + [c.ids for c in group], outs)


def _pools_of_rows(group: list) -> _FusedStep:
    """Each pool's Out from the looked-up rows it reads: a sequence of one row pools to that row."""
    outs, with_index = [], []
    for step in group:
        index = step.op.output("MaxIndex")[:1]
        outs += [step.op.output("Out")[0], *index]
        with_index.append(bool(index))

    def fast(xp, *rows):
        if not _one_id_each(rows):
            return None
        return [v for r, index in zip(rows, with_index) for v in ([r.data, None] if index else [r.data])]

    return _FusedStep(fast, [step.op.input("X")[0] for step in group], outs)


def _backward(group: list[_Backward], total) -> _FusedStep:
    """Each pool's X@GRAD, each lookup's W@GRAD and their sum, the table's SelectedRows: the ids and
    the output gradients, concatenated in the sum's order."""
    order = {g: k for k, g in enumerate(total.op.input("X"))}
    group = sorted(group, key=lambda c: order[c.lookup_grad.op.output("W@GRAD")[0]])
    outs = [c.pool_grad.op.output("X@GRAD")[0] for c in group]
    outs += [c.lookup_grad.op.output("W@GRAD")[0] for c in group] + [total.op.output("Out")[0]]
    ins = [group[0].table] + [c.ids for c in group] + [c.pool_grad.op.input("Out@GRAD")[0] for c in group]

    def fast(xp, w, *args):
        ids, douts = args[: len(group)], [strip(d) for d in args[len(group) :]]
        if not _one_id_each(ids) or any(len(d) != len(i.data) for i, d in zip(ids, douts)):
            return None
        width, height = w.shape[1], w.shape[0]
        rows = np.concatenate([i.data.reshape(-1) for i in ids]).astype(np.int64, copy=False)
        values = xp.concatenate([d.reshape(-1, width) for d in douts])
        per_slot, grads, start = [], [], 0
        for i, d in zip(ids, douts):
            end = start + d.size // width
            per_slot.append(LoDTensor(d, i.levels))
            grads.append(SelectedRows(rows[start:end], values[start:end], height))
            start = end
        return per_slot + grads + [SelectedRows(rows, values, height)]

    return _FusedStep(fast, ins, outs)
