"""All-reduce overlapped with the rest of backward: a plan's asynchronous `c_allreduce_sum` steps
and the explicit waits for them.

A `c_allreduce_sum` with `use_calc_stream` false (what the collective transpiler writes) runs, as
in Paddle, on the communication stream: here the ring's communication thread, one per ring, which
runs its operations in the order the program starts them. The program is unchanged; its plan's
steps are, by `overlap_allreduce(steps)`:
  1. find the steps that may run asynchronously: `c_allreduce_sum` with use_calc_stream false,
     unless FLEETGRAPH_OVERLAP_ALLREDUCE=0;
  2. find what each one reduces: its variable and the variables aliasing it (a `coalesce_tensor`'s
     Output are views of its FusedOutput, so reading a gradient reads the fused buffer);
  3. replace each such step by a start step, which hands the all-reduce to the ring's thread and
     puts its future in the run's variables under a name no program can spell;
  4. insert the wait step, which stores the all-reduced value under the variable's name as the
     synchronous op does, right before the first later step that reads or writes any of those
     variables (the transpiler's `c_sync_comm_stream` before the optimizer), or at the end; where
     only communication ops would run in between (the last bucket of backward), nothing could
     overlap: the step stays as it was, as does an all-reduce of fewer than ring.ASYNC_MIN_BYTES
     declared bytes while no earlier one is in flight (the ring would run it at once anyway).
A wait step carries its all-reduce's op, so an error in the all-reduce names that op and variable.
"""

from __future__ import annotations

import os

import numpy as np

from ..ir import FleetgraphError
from ..ops._common import prod
from .comm.ring import ASYNC_MIN_BYTES

ENV = "FLEETGRAPH_OVERLAP_ALLREDUCE"
_FUTURE = "@ALLREDUCE_FUTURE@"  # '@' starts no variable name a program can declare


def overlap_enabled() -> bool:
    """FLEETGRAPH_OVERLAP_ALLREDUCE: '1' (the default) overlaps, '0' runs every all-reduce in place."""
    raw = os.environ.get(ENV, "") or "1"
    if raw not in ("0", "1"):
        raise FleetgraphError(f"{ENV}={raw!r}: expected '1' (overlap all-reduce with backward) or '0', e.g. 0")
    return raw == "1"


def overlap_allreduce(steps: list) -> list:
    """`steps` with each asynchronous all-reduce split into a start and a wait (see the module)."""
    if not overlap_enabled():  # step 1
        return steps
    starts = [i for i, s in enumerate(steps) if _is_async(s)]
    if not starts:
        return steps
    waits: dict[int, list] = {}
    out = list(steps)
    busy_until = -1  # the thread has started work until the wait at this step
    for i in starts:
        step = steps[i]
        names = _aliases(steps[:i], step.ins[0])  # step 2
        at = next((j for j in range(i + 1, len(steps)) if names & _touched(steps[j])), len(steps))
        if all(s.op.type in _COMM_OPS for s in steps[i + 1 : at]):
            continue
        if busy_until <= i and _static_nbytes(step) < ASYNC_MIN_BYTES:
            continue  # the ring would run it at once anyway: save the future's cost
        busy_until = max(busy_until, at)
        future = f"{_FUTURE}{step.index}"
        out[i] = _Start(step, future)  # step 3
        waits.setdefault(at, []).append(_Wait(step, future))  # step 4
    result = []
    for j, step in enumerate(out):
        result += waits.get(j, [])
        result.append(step)
    return result + waits.get(len(steps), [])


def _static_nbytes(step) -> float:
    """The declared size of the variable a step all-reduces (infinite where a dim is unknown)."""
    var = step.op.block._find_var_recursive(step.ins[0])
    if var is None or any(d < 0 for d in var.shape):
        return float("inf")
    return prod(var.shape) * np.dtype(var.dtype).itemsize


_COMM_OPS = frozenset({"c_allreduce_sum", "c_sync_calc_stream", "c_sync_comm_stream", "c_broadcast"})


def _is_async(step) -> bool:
    op = step.op
    return (
        op.type == "c_allreduce_sum"
        and not op.attrs.get("use_calc_stream", False)
        and isinstance(step.ins[0], str)
        and step.outs == step.ins
    )


def _aliases(before: list, name: str) -> set[str]:
    """`name` and every variable an earlier coalesce_tensor made a view of the same buffer."""
    names = {name}
    for step in before:
        if step.op.type == "coalesce_tensor":
            outputs, fused = step.outs
            group = set(outputs or []) | {fused}
            if names & group:
                names |= group
    return names


def _touched(step) -> set[str]:
    names: set[str] = set()
    for slot in (*step.ins, *step.outs):
        if isinstance(slot, str):
            names.add(slot)
        elif slot:
            names.update(slot)
    return names


def _start(xp, x, *, ring_id, ctx):
    return ctx.comm.ring(ring_id).allreduce_async(x)


def _wait(xp, future):
    return future.result()  # bounded: the all-reduce times out by itself (FLEETGRAPH_RPC_TIMEOUT)


class _Start:
    """Hands the all-reduce to the ring's thread; its output is the future, under `future`."""

    __slots__ = ("index", "op", "kernel", "ins", "outs", "kwargs", "single_out", "flat_ins", "needs_context", "seed")

    def __init__(self, step, future: str) -> None:
        self.index, self.op, self.ins, self.outs = step.index, step.op, step.ins, [future]
        self.kernel, self.single_out, self.flat_ins, self.seed = _start, True, True, None
        self.kwargs = {"ring_id": step.kwargs["ring_id"], "ctx": None}
        self.needs_context = True


class _Wait:
    """Stores the all-reduced value under the reduced variable's name, once the thread is done."""

    __slots__ = ("index", "op", "kernel", "ins", "outs", "kwargs", "single_out", "flat_ins", "needs_context", "seed")

    def __init__(self, step, future: str) -> None:
        self.index, self.op, self.ins, self.outs = step.index, step.op, [future], step.outs
        self.kernel, self.kwargs, self.single_out, self.flat_ins = _wait, {}, True, True
        self.needs_context, self.seed = False, None
