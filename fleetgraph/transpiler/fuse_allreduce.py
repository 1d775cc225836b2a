"""Fuse the per-gradient all-reduces of a collective program into size-limited buckets, as Paddle's
`fuse_all_reduce_ops` with `fuse_grad_size_in_MB` does.

Steps of `fuse_allreduce_with_plan(program, fuse_grad_size_in_MB=32)`:
  1. clone the program;
  2. plan the buckets (`plan_buckets`): walk block 0's `c_allreduce_sum` ops in program order (the
     order backward produces the gradients) and group consecutive gradients greedily, up to
     fuse_grad_size_in_MB MiB per bucket; a change of dtype or ring closes a bucket, and so does
     any other op touching a gradient of the open bucket before the bucket's all-reduce (fusing
     across it would change the value it sees);
  3. for each bucket of more than one gradient, drop its gradients' own `c_sync_calc_stream` and
     `c_allreduce_sum` ops;
  4. where the bucket's last gradient was all-reduced (right after its producer, in
     insert_allreduce's layout, so communication overlaps the rest of backward) insert
     `coalesce_tensor` (the gradients become views of one buffer, named `@FUSEDVAR@_<k>` for the
     k-th fused bucket), `c_sync_calc_stream` and `c_allreduce_sum` on the buffer. The all-reduce
     updates the buffer in place, so the gradients' `scale` ops after the `c_sync_comm_stream`
     (left where they are) read reduced values through the views;
  5. log `fused N all_reduce ops into M` and verify.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from ..ir import FleetgraphError, OpRole, Program, verify
from ..ir.errors import fmt_shape
from ..ir.program import Block

logger = logging.getLogger("fleetgraph.transpiler")

FUSED_PREFIX = "@FUSEDVAR@_"


@dataclass
class Bucket:
    """Gradients all-reduced together; `fused` is the variable reduced (the gradient itself when alone)."""

    grads: list[str]
    dtype: str
    numel: int
    nbytes: int
    fused: str
    ring_id: int = 0


@dataclass
class _GradComm:
    """One gradient's all-reduce as insert_allreduce lays it out: the indices of its ops."""

    grad: str
    param: str | None
    allreduce: int  # index of its c_allreduce_sum
    ops: list[int]  # indices of its c_sync_calc_stream and c_allreduce_sum ops


def fuse_allreduce(program: Program, *, fuse_grad_size_in_MB: float = 32) -> Program:
    """A copy of `program` whose gradients are all-reduced in buckets; <= 0 disables fusion."""
    return fuse_allreduce_with_plan(program, fuse_grad_size_in_MB=fuse_grad_size_in_MB)[0]


def fuse_allreduce_with_plan(program: Program, *, fuse_grad_size_in_MB: float = 32) -> tuple[Program, list[Bucket]]:
    """`fuse_allreduce`, also returning the buckets (gradients, dtype and byte size of each)."""
    result = program.clone()  # step 1
    block = result.global_block()
    comms = _grad_comms(block)
    buckets = _plan(block, comms, fuse_grad_size_in_MB)  # step 2
    by_grad = {c.grad: c for c in comms}
    removed: set[int] = set()
    inserts: dict[int, list[dict]] = {}
    for bucket in (b for b in buckets if len(b.grads) > 1):
        members = [by_grad[g] for g in bucket.grads]
        removed.update(i for c in members for i in c.ops)  # step 3
        block.create_var(bucket.fused, (bucket.numel,), bucket.dtype, stop_gradient=True)  # step 4
        inserts[members[-1].ops[0]] = _fused_ops(block, bucket, members)
    for index in sorted(removed, reverse=True):  # from the end, so earlier indices hold
        block._remove_op(index)
        for offset, desc in enumerate(inserts.get(index, [])):
            block._insert_op(index + offset, **desc)
    logger.info("fused %d all_reduce ops into %d", len(comms), len(buckets))  # step 5
    return verify(result), buckets


def plan_buckets(program: Program, fuse_grad_size_in_MB: float = 32) -> list[Bucket]:
    """The buckets fuse_allreduce would make of block 0's all-reduced gradients, in program order."""
    block = program.global_block()
    return _plan(block, _grad_comms(block), fuse_grad_size_in_MB)


def _grad_comms(block: Block) -> list[_GradComm]:
    comms = []
    for index, op in enumerate(block.ops):
        if op.type == "coalesce_tensor":
            raise FleetgraphError(
                f"fuse_allreduce: block 0 op {index} is coalesce_tensor; expected a program not fused yet"
            )
        role_grads = op.attrs.get("op_role_var", [])[1::2]
        if op.type != "c_allreduce_sum" or not set(op.input("X")) & set(role_grads):
            continue  # not a gradient's (model parallelism all-reduces activations and their gradients)
        grads = op.input("X")
        if len(grads) != 1 or op.output("Out") != grads:
            raise FleetgraphError(
                f"fuse_allreduce: op {index} (c_allreduce_sum); expected Out == X, one variable, "
                f"got X={grads} Out={op.output('Out')}"
            )
        comms.append(_grad_comm(block, index, grads[0]))
    return comms


def _grad_comm(block: Block, index: int, grad: str) -> _GradComm:
    def acts_on_grad(i: int, op_type: str) -> bool:
        op = block.ops[i] if 0 <= i < len(block.ops) else None
        return op is not None and op.type == op_type and op.input("X") == [grad] == op.output("Out")

    ops = [index - 1, index] if acts_on_grad(index - 1, "c_sync_calc_stream") else [index]
    role_var = block.ops[index].attrs.get("op_role_var", [])
    param = role_var[role_var.index(grad) - 1] if grad in role_var[1::2] else None
    return _GradComm(grad, param, index, ops)


def _plan(block: Block, comms: list[_GradComm], fuse_grad_size_in_MB: float) -> list[Bucket]:
    if isinstance(fuse_grad_size_in_MB, bool) or not isinstance(fuse_grad_size_in_MB, (int, float)):
        raise FleetgraphError(f"fuse_allreduce: fuse_grad_size_in_MB; expected a number, got {fuse_grad_size_in_MB!r}")
    limit = fuse_grad_size_in_MB * 1024 * 1024  # <= 0: every gradient stays alone
    own_ops = {i for c in comms for i in c.ops}
    buckets: list[Bucket] = []
    previous = None
    for comm in comms:
        dtype, numel = _grad_size(block, comm.grad)
        nbytes = numel * np.dtype(dtype).itemsize
        ring_id = block.ops[comm.allreduce].attrs.get("ring_id", 0)
        last = buckets[-1] if buckets else None
        joins = (
            last is not None
            and last.dtype == dtype
            and last.ring_id == ring_id
            and last.nbytes + nbytes <= limit
            and not _touched_between(block, last.grads, previous.allreduce, comm.allreduce, own_ops)
        )
        if joins:
            last.grads.append(comm.grad)
            last.numel += numel
            last.nbytes += nbytes
        else:
            buckets.append(Bucket([comm.grad], dtype, numel, nbytes, comm.grad, ring_id))
        previous = comm
    fused = [b for b in buckets if len(b.grads) > 1]
    for k, bucket in enumerate(fused):
        bucket.fused = f"{FUSED_PREFIX}{k}"
    return buckets


def _grad_size(block: Block, grad: str) -> tuple[str, int]:
    var = block.var_recursive(grad)
    if any(d < 0 for d in var.shape):
        raise FleetgraphError(
            f"fuse_allreduce: gradient {grad!r} has shape {fmt_shape(var.shape)}; expected a fully known shape "
            "to size its bucket"
        )
    return var.dtype, int(np.prod(var.shape, dtype=np.int64))


def _touched_between(block: Block, grads: list[str], start: int, stop: int, own_ops: set[int]) -> bool:
    """Whether an op strictly between two all-reduces, other than the gradients' own comm ops,
    reads or writes one of `grads`: moving their all-reduce past it would change what it sees."""
    names = set(grads)
    for i in range(start + 1, stop):
        op = block.ops[i]
        if i not in own_ops and names & set(op.input_arg_names + op.output_arg_names):
            return True
    return False


def _fused_ops(block: Block, bucket: Bucket, members: list[_GradComm]) -> list[dict]:
    """coalesce_tensor, sync and all-reduce of the buffer, as op descs."""
    role_var = [n for c in members if c.param is not None for n in (c.param, c.grad)]
    role = {"op_role": int(OpRole.Backward), "op_role_var": role_var}
    reduce_attrs = {**block.ops[members[-1].allreduce].attrs, **role}
    fused = [bucket.fused]
    return [
        dict(
            type="coalesce_tensor",
            inputs={"Input": bucket.grads},
            outputs={"Output": bucket.grads, "FusedOutput": fused},
            attrs={"copy_data": True, "dtype": bucket.dtype, **role},
        ),
        dict(type="c_sync_calc_stream", inputs={"X": fused}, outputs={"Out": fused}, attrs=role),
        dict(type="c_allreduce_sum", inputs={"X": fused}, outputs={"Out": fused}, attrs=reduce_attrs),
    ]
