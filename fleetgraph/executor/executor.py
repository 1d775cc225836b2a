"""The executor: prepares a block once into a flat plan, then runs the plan's kernels over a scope."""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..ir import EOFException, FleetgraphError, KernelError, default_main_program, get_op_def
from ..ir.errors import fmt_shape
from ..ir.program import Block, Program
from ..ops.lod_tensor import LoDTensor
from . import rng
from .feed_fetch import feed_into, fetch_name, fetched
from .fuse_lookup import fuse_lookup_chains
from .overlap import overlap_allreduce
from .place import CPUPlace, Place
from .scope import Scope, global_scope


class _Step:
    """One op, resolved: kernel, input names (a list for a duplicable slot, None for an absent
    optional one), output names and the attrs the kernel takes."""

    __slots__ = (
        "index",
        "op",
        "kernel",
        "ins",
        "outs",
        "kwargs",
        "single_out",
        "flat_ins",
        "seed",
        "rng_key",
        "needs_context",
    )

    def __init__(self, index, op, xp, lod_vars: frozenset[str]) -> None:
        opdef = get_op_def(op.type)
        if opdef.kernel is None:
            raise FleetgraphError(f"op {index} ({op.type}): has no kernel and cannot be executed")
        self.index, self.op, self.kernel = index, op, opdef.kernel
        self.ins = [_slot_names(op.inputs, s) for s in opdef.inputs]
        self.outs = [_slot_names(op.outputs, s) for s in opdef.outputs]
        self.single_out = len(opdef.outputs) == 1
        if lod_vars and not opdef.takes_lod:
            self.kernel = _lod_adapter(self.kernel, self.ins, self.outs, lod_vars) or self.kernel
        self.flat_ins = all(isinstance(a, str) for a in self.ins)
        self.kwargs = {k: op.attrs[k] for k in opdef.attrs}
        if opdef.wants_outputs:
            self.kwargs["need"] = frozenset(s.name for s, n in zip(opdef.outputs, self.outs) if n)
        self.seed = None
        if opdef.random:
            fixed = op.attrs.get("fix_seed", True)
            self.seed = op.attrs.get("seed", 0) if fixed else 0
            self.rng_key = next(iter(op.output_arg_names), "")
            self.kwargs["rng"] = rng.generator_for(self.seed, self.rng_key)
        self.needs_context = opdef.needs_context


def _slot_names(slots: dict, slot) -> Any:
    names = slots.get(slot.name)
    if not names:
        return None
    return list(names) if slot.duplicable else names[0]


def _as_list(names) -> list[str]:
    return [] if names is None else [names] if isinstance(names, str) else names


def _lod_adapter(kernel, ins: list, outs: list, lod_vars: frozenset[str]):
    """For a kernel that works on plain arrays (most of them), in an op that reads or writes LoD
    variables: LoD inputs are passed as their rows, and outputs declared with LoD get the LoD of
    the first LoD input, as Paddle's ShareLoD does. None when the op touches no LoD variable, so
    programs without sequences run their kernels directly."""
    in_slots = [i for i, names in enumerate(ins) if any(n in lod_vars for n in _as_list(names))]
    out_slots = [
        (i, isinstance(names, list), [n in lod_vars for n in _as_list(names)])
        for i, names in enumerate(outs)
        if any(n in lod_vars for n in _as_list(names))
    ]
    if not in_slots and not out_slots:
        return None
    single = len(outs) == 1

    def run(xp, *args, **kwargs):
        args, source = list(args), None
        for i in in_slots:
            values = args[i] if isinstance(args[i], list) else [args[i]]
            for v in values:
                if source is None and isinstance(v, LoDTensor) and v.levels:
                    source = v
            stripped = [v.data if isinstance(v, LoDTensor) else v for v in values]
            args[i] = stripped if isinstance(args[i], list) else stripped[0]
        result = kernel(xp, *args, **kwargs)
        if not out_slots:
            return result
        levels = source.levels if source is not None else ()
        results = [result] if single else list(result)
        for i, is_list, wanted in out_slots:
            if is_list:
                results[i] = [_with_lod(v, levels) if w else v for v, w in zip(results[i], wanted)]
            else:
                results[i] = _with_lod(results[i], levels)
        return results[0] if single else results

    return run


_RECV_LISTS = ("epmap", "recv_varnames")


def _batched_recvs(steps: list[_Step]) -> list[_Step]:
    """Consecutive recv ops (a program has one per parameter, as Paddle's do) run as one step: every
    pserver is asked for all of them at once, one round trip instead of one per parameter. The
    program itself is unchanged."""
    out: list[_Step] = []
    joined: set[int] = set()  # recvs of one parameter's blocks (runtime_split_send_recv): kept apart
    for step in steps:
        if step.op.type == "recv" and len(step.outs[0]) < len(step.kwargs["recv_varnames"]):
            step.kernel = _joined_blocks(step)
            joined.add(id(step))
            out.append(step)
            continue
        prev = out[-1] if out else None
        same = prev is not None and id(prev) not in joined and step.op.type == prev.op.type == "recv"
        if same and all(step.kwargs[k] == prev.kwargs[k] for k in step.kwargs if k not in _RECV_LISTS):
            prev.outs[0] += step.outs[0]
            for k in _RECV_LISTS:
                prev.kwargs[k] += step.kwargs[k]
            continue
        if step.op.type == "recv":  # its lists get longer: copies, so the program's stay as they are
            step.kwargs = {**step.kwargs, **{k: list(step.kwargs[k]) for k in _RECV_LISTS}}
        out.append(step)
    return out


def _joined_blocks(step: _Step):
    """Paddle's runtime_split_send_recv form of recv: one output, the parameter, and the names of its
    blocks; they come back as one value, concatenated along rows."""
    if len(step.outs[0]) != 1:
        raise FleetgraphError(
            f"op {step.index} (recv): {len(step.outs[0])} outputs for {len(step.kwargs['recv_varnames'])} "
            "recv_varnames; expected one output per name, or one for all (runtime_split_send_recv)"
        )
    kernel = step.kernel

    def run(xp, *args, **kwargs):
        return [xp.concatenate(kernel(xp, *args, **kwargs), axis=0)]

    return run


def _with_lod(value, levels):
    if value is None or isinstance(value, LoDTensor):
        return value
    return LoDTensor(value, levels)


class _Plan:
    """A block prepared for running: steps in order, feedable variables and the persistables it writes."""

    def __init__(self, block: Block, xp) -> None:
        lod_vars = frozenset(n for n in block._visible_names() if block.var_recursive(n).lod_level > 0)
        steps = _batched_recvs([_Step(i, op, xp, lod_vars) for i, op in enumerate(block.ops)])
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

    def run(self, env: dict, xp, ctx: RunContext | None = None) -> None:
        for step in self.random_steps:
            step.kwargs["rng"] = rng.generator_for(step.seed, step.rng_key)
        for step in self.context_steps:
            step.kwargs["ctx"] = ctx
        run_steps(self.steps, env, xp)


def run_steps(steps: list, env: dict, xp) -> None:
    """Run prepared steps in order on `env`; an error names the op, its block and its inputs."""
    step = None
    try:
        for step in steps:
            if step.flat_ins:
                args = [env[n] for n in step.ins]
            else:
                args = [_gather(env, n) for n in step.ins]
            result = step.kernel(xp, *args, **step.kwargs)
            if step.single_out:
                _store(env, step.outs[0], result)
            elif step.outs:
                for names, value in zip(step.outs, result):
                    if names is not None:
                        _store(env, names, value)
    except FleetgraphError as e:
        if step is None or isinstance(e, (KernelError, EOFException)):
            raise
        raise KernelError(f"{_where(step, env)}: {e}") from e
    except KeyError as e:
        if getattr(step, "originals", None):  # a fused step: the op that lacks the input says so
            run_steps(step.originals, env, xp)
        if step is None or e.args[0] not in step.op.input_arg_names:
            raise
        raise KernelError(
            f"{_where(step, env)}: input {e.args[0]!r} has no value; feed it, or run the startup "
            "program first if it is a parameter"
        ) from None
    except Exception as e:
        raise KernelError(f"{_where(step, env)}: {type(e).__name__}: {e}") from e


def _gather(env, names):
    if names is None:
        return None
    if isinstance(names, str):
        return env[names]
    return [env[n] for n in names]


def _store(env, names, value) -> None:
    if names is None:
        return
    if isinstance(names, str):
        env[names] = value
    else:
        for n, v in zip(names, value):
            env[n] = v


def _where(step: _Step, env: dict) -> str:
    def describe(name):
        value = env.get(name)
        if value is None:
            return f"{name!r} (no value)"
        rows = value.data if isinstance(value, LoDTensor) else value
        return f"{name!r} {fmt_shape(np.shape(rows))} {getattr(value, 'dtype', type(value).__name__)}"

    ins = ", ".join(f"{slot}=" + ", ".join(describe(n) for n in names) for slot, names in step.op.inputs.items())
    return f"op {step.index} ({step.op.type}) in block {step.op.block.idx} with inputs {ins or 'none'}"


class RunContext:
    """What a kernel flagged `needs_context` sees of the run: the executor, the program and scope,
    the run's variables (`env`), sub-blocks to run on them, and the process's communicator."""

    def __init__(self, executor: Executor, program: Program, scope: Scope, env: dict) -> None:
        self.executor, self.program, self.scope, self.env = executor, program, scope, env

    def run_block(self, index: int) -> None:
        """Run sub-block `index` of the program on this run's variables."""
        self.executor._plan(self.program, index).run(self.env, self.executor.xp, self)

    @property
    def comm(self):
        from .comm import process_comm

        return process_comm()


class Executor:
    """`Executor(place).run(program, feed, fetch_list)` as in Paddle's static graph."""

    def __init__(self, place: Place | None = None) -> None:
        self.place = place or CPUPlace()
        self.xp = self.place.array_module()
        self._plans: weakref.WeakKeyDictionary[Program, dict[int, tuple[int, _Plan]]] = weakref.WeakKeyDictionary()

    def _plan(self, program: Program, block: int = 0) -> _Plan:
        plans = self._plans.setdefault(program, {})
        cached = plans.get(block)
        if cached is not None and cached[0] == program._version:
            return cached[1]
        plan = _Plan(program.block(block), self.xp)
        plans[block] = (program._version, plan)
        return plan

    def run(
        self,
        program: Program | None = None,
        feed: dict | None = None,
        fetch_list: Sequence | None = None,
        feed_var_name: str = "feed",
        fetch_var_name: str = "fetch",
        scope: Scope | None = None,
        return_numpy: bool = True,
        use_program_cache: bool = True,
    ) -> list:
        compiled = program if getattr(program, "_is_data_parallel", False) else None
        program = default_main_program() if program is None else getattr(program, "_program", program)
        if not isinstance(program, Program):
            raise TypeError(f"Executor.run: expected a Program, got {type(program).__name__}")
        scope = global_scope() if scope is None else scope
        if compiled is not None:  # CPU_NUM replicas: executor/parallel.py
            fetch_names = [fetch_name(f) for f in (fetch_list or [])]
            return compiled._runner().run(self, feed, fetch_names, scope, return_numpy)
        plan = self._plan(program)
        env = dict(scope.vars)
        if isinstance(feed, (list, tuple)):  # one dict per place, as a DataLoader yields them
            if len(feed) != 1:
                raise FleetgraphError(
                    f"Executor.run: feed is a list of {len(feed)} dicts (one per place); a program runs on one "
                    "place, so expected one"
                )
            feed = feed[0]
        if feed:
            feed_into(env, feed, plan)
        fetch_names = [fetch_name(f) for f in (fetch_list or [])]
        set_scheduled_lr(program, env)
        plan.run(env, self.xp, RunContext(self, program, scope, env) if plan.context_steps else None)
        for name in plan.persist_outputs:
            scope.vars[name] = env[name]
        return [fetched(env, name, program, return_numpy) for name in fetch_names]

    def train_from_dataset(
        self,
        program: Program | None = None,
        dataset=None,
        scope: Scope | None = None,
        thread: int = 0,
        debug: bool = False,
        fetch_list: Sequence | None = None,
        fetch_info: Sequence[str] | None = None,
        print_period: int = 100,
        fetch_handler=None,
    ) -> None:
        """Train on every batch of `dataset` with `thread` threads (default: the dataset's thread_num)
        sharing `scope`, printing `fetch_info` and the fetched values every `print_period` batches."""
        from .dataset_runner import run_dataset

        run_dataset(
            self,
            program,
            dataset,
            scope,
            thread,
            fetch_list,
            fetch_info,
            print_period,
            fetch_handler,
            infer=False,
            what="train_from_dataset",
        )

    def infer_from_dataset(
        self,
        program: Program | None = None,
        dataset=None,
        scope: Scope | None = None,
        thread: int = 0,
        debug: bool = False,
        fetch_list: Sequence | None = None,
        fetch_info: Sequence[str] | None = None,
        print_period: int = 100,
        fetch_handler=None,
    ) -> None:
        """As train_from_dataset, running only the program's forward ops: no parameter changes and
        nothing is pushed to the pservers (metrics such as auc still accumulate)."""
        from .dataset_runner import run_dataset

        run_dataset(
            self,
            program,
            dataset,
            scope,
            thread,
            fetch_list,
            fetch_info,
            print_period,
            fetch_handler,
            infer=True,
            what="infer_from_dataset",
        )

    def close(self) -> None:
        """A trainer tells every pserver it is done (as Paddle's `exe.close()`); a no-op otherwise."""
        from .comm import stop_worker

        stop_worker()


def set_scheduled_lr(program: Program, env: dict) -> None:
    """A paddle.optimizer.lr scheduler's current rate into its variable, as Paddle's executor sets it
    before each run (the script steps the scheduler; the program only reads the variable)."""
    scheduler = program.lr_scheduler
    var = None if scheduler is None else program.global_block()._find_var_recursive(scheduler._var_name)
    if var is not None:
        env[var.name] = np.array([scheduler()], dtype=var.dtype)
