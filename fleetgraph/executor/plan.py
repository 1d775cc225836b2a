"""A block prepared once into a flat plan of steps, the cache of plans by program version, and
the run context that `needs_context` kernels see (sub-blocks are run through the plans it holds)."""

from __future__ import annotations

import copy
import weakref

import numpy as np

from ..ir.program import Block, Program
from .fuse_lookup import fuse_lookup_chains
from .overlap import overlap_allreduce
from .scope import Scope
from .steps import Step, batched_recvs, run_steps


class Plan:
    """A block prepared for running: steps in order, feedable variables and the persistables it writes."""

    def __init__(self, block: Block) -> None:
        lod_vars = frozenset(n for n in block._visible_names() if block.var_recursive(n).lod_level > 0)
        steps = batched_recvs([Step(i, op, lod_vars) for i, op in enumerate(block.ops)])
        steps = fuse_lookup_chains(steps, block) if lod_vars else steps
        self.steps = overlap_allreduce(steps)
        self.random_steps = [s for s in self.steps if s.seed]
        self.context_steps = [s for s in self.steps if s.needs_context]
        self.vars = block.vars
        self.persist_outputs = sorted(
            {
                n
                for op in block.ops
                for n in op.output_arg_names
                if (v := block._find_var_recursive(n)) is not None and v.persistable
            }
        )
        self.block = block
        self._written: frozenset[str] | None = None

    @property
    def written(self) -> frozenset[str]:
        """Every variable an op of this block, or of a block nested under one of its ops, writes:
        what a loop saves of each iteration for its gradient."""
        if self._written is None:
            program, names, pending = self.block.program, set(), [self.block]
            while pending:
                block = pending.pop()
                for op in block.ops:
                    names.update(op.output_arg_names)
                    if "sub_block" in op.attrs:
                        pending.append(program.block(op.attrs["sub_block"]))
            self._written = frozenset(names)
        return self._written

    def run(self, env: dict, xp, ctx: RunContext | None = None, reseed: bool = True) -> None:
        """Run the steps on `env` with the array module `xp`; seeded random ops start their streams
        over (unless `reseed` is False: a loop's later iterations), so every run draws the same numbers."""
        if reseed:
            for step in self.random_steps:
                step.reseed()
        for step in self.context_steps:
            step.kwargs["ctx"] = None if ctx is None else ctx.at(step.op)
        run_steps(self.steps, env, xp)


class Plans:
    """Plans by (program, block index), each rebuilt when its program's version changes; programs
    are held weakly, so a plan goes with its program."""

    def __init__(self) -> None:
        self._plans: weakref.WeakKeyDictionary[Program, dict[int, tuple[int, Plan]]] = weakref.WeakKeyDictionary()

    def get(self, program: Program, block: int = 0) -> Plan:
        plans = self._plans.setdefault(program, {})
        cached = plans.get(block)
        if cached is not None and cached[0] == program._version:
            return cached[1]
        plan = Plan(program.block(block))
        plans[block] = (program._version, plan)
        return plan


class RunContext:
    """What a kernel flagged `needs_context` sees of the run: the program and scope, the run's
    variables (`env`), its sub-blocks (run through `plans` on the same variables) and the process's
    communicator (`comm`: a replica's, else the process's)."""

    def __init__(self, plans: Plans, program: Program, scope: Scope, env: dict, xp, comm=None) -> None:
        self.plans, self.program, self.scope, self.env, self.xp = plans, program, scope, env, xp
        self._comm = comm
        self.op = None  # the op whose kernel holds this context (see `at`)
        self._blocks_run: set[int] = set()  # shared by every op's view of one run

    def at(self, op) -> RunContext:
        """This run's context as `op`'s kernel sees it: the same run, with `op` (its variable names)."""
        view = copy.copy(self)
        view.op = op
        return view

    def run_block(self, index: int) -> None:
        """Run sub-block `index` of the program on this run's variables. Its random ops start their
        streams over the first time the block runs in this run only: each iteration of a loop draws
        new numbers, and each run of the program the same ones."""
        first = index not in self._blocks_run
        self._blocks_run.add(index)
        self.plan(index).run(self.env, self.xp, self, reseed=first)

    def plan(self, index: int) -> Plan:
        return self.plans.get(self.program, index)

    @property
    def comm(self):
        if self._comm is not None:
            return self._comm
        from .comm import process_comm

        return process_comm()


def set_scheduled_lr(program: Program, env: dict) -> None:
    """A paddle.optimizer.lr scheduler's current rate into its variable, as Paddle's executor sets it
    before each run (the script steps the scheduler; the program only reads the variable)."""
    scheduler = program.lr_scheduler
    var = None if scheduler is None else program.global_block()._find_var_recursive(scheduler._var_name)
    if var is not None:
        env[var.name] = np.array([float(scheduler())], dtype=var.dtype)
