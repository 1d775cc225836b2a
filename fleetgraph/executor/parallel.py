"""Data parallelism in one process: `CompiledProgram(...).with_data_parallel(...)` and
`ParallelExecutor` run a program as CPU_NUM replicas (Paddle's CPU data parallelism).

Steps of `DataParallel.run`:
  1. split the feed into one shard per replica along the batch (sequences, for a LoD feed), or take
     the list of per-replica feeds the caller gave;
  2. run the forward and backward ops of every replica on its own thread, each on its shard, all
     reading the shared parameters (NumPy releases the GIL in its large operations; the BLAS library
     runs one thread per replica); with BuildStrategy.sync_batch_norm the batch norms are
     sync_batch_norm ops, which all-reduce their statistics across the replicas (comm/threads.py);
  3. average each parameter's gradient over the replicas (sparse gradients: their rows together,
     scaled), which with equal shards is the gradient of the whole batch;
  4. run the optimize ops (and a learning-rate schedule's, clipping included; on a parameter-server
     trainer the sends, barriers and receives) once on the averages:
     every replica holds the same parameters after the step, as after Paddle's AllReduce or Reduce
     (one owner updates a parameter and broadcasts it: on one host the same values);
  5. fetches: each replica's value of a variable its forward computed, concatenated along axis 0 as
     Paddle's merged fetch; other variables (parameters, the learning rate) once.
"""

from __future__ import annotations

import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..ir import FleetgraphError, OpRole, Program, get_op_def
from ..ops._xp import copy, is_array
from ..ops.lod_tensor import LoDTensor
from ..ops.selected_rows import SelectedRows, merge_dense
from .comm import process_comm
from .comm.threads import ThreadGroup
from .feed_fetch import feed_into, fetched
from .native import one_blas_thread_each
from .plan import set_scheduled_lr

# once per step: the updates and a schedule, and on a parameter-server trainer the sends of the
# averaged gradients, the barriers and the receives (RPC, and Dist: the splits and concats)
_ONCE = OpRole.Optimize | OpRole.LRSched | OpRole.RPC | OpRole.Dist


def cpu_num() -> int:
    """CPU_NUM, the number of replicas (1, said once on stderr, when it is not set; as Paddle)."""
    value = os.environ.get("CPU_NUM")
    if value is None:
        if not getattr(cpu_num, "_warned", False):
            print("CPU_NUM is not set: data parallelism runs 1 replica (set CPU_NUM=N for N)", file=sys.stderr)
            cpu_num._warned = True
        return 1
    try:
        count = int(value)
    except ValueError:
        count = 0
    if count < 1:
        raise FleetgraphError(f"CPU_NUM={value!r}: expected a positive number of replicas")
    return count


class DataParallel:
    """A program split into its per-replica part (forward, backward) and its once-per-step part
    (`_ONCE`: the updates, a schedule, a trainer's communication), prepared for one program version."""

    def __init__(self, program: Program, replicas: int, sync_batch_norm: bool = False) -> None:
        self.program, self.replicas, self.sync_batch_norm = program, replicas, sync_batch_norm
        self.replica = _with_ops(program, lambda op: not op.attrs.get("op_role", 0) & _ONCE)
        if sync_batch_norm:
            _sync_batch_norms(self.replica)
        # a plan's steps hold the run context of their kernels: replicas that need one run copies
        needs_context = any(get_op_def(op.type).needs_context for op in self.replica.global_block().ops)
        self.copies = [self.replica if i == 0 or not needs_context else self.replica.clone() for i in range(replicas)]
        self.once = _with_ops(program, lambda op: op.attrs.get("op_role", 0) & _ONCE)
        block = self.once.global_block()
        read = {n for op in block.ops for n in op.input_arg_names}
        # what the replicas compute for the step's updates: the gradients (their inputs, averaged)
        self.computed = _computed(self.replica)
        self.grads = sorted(n for n in read & self.computed if not block.var(n).persistable)
        for grad in self.grads:
            block.var(grad).is_data = True
        self.version = program._version

    def run(self, executor, feed, fetch_names: list[str], scope, return_numpy: bool) -> list:
        def run(plan, program, env, comm=None):
            plan.run(env, executor.xp, executor.context(program, scope, env, plan, comm))

        shards = _shards(feed, self.replicas)  # step 1
        replica_plan, once_plan = executor.plans.get(self.replica), executor.plans.get(self.once)
        envs = [_own_state(executor.xp, scope.vars, replica_plan.persist_outputs) for _ in shards]
        for env, shard in zip(envs, shards):
            feed_into(env, shard, replica_plan, executor.xp)
        group = self._replica_group(len(shards))
        tasks = [
            lambda env=env, i=i, copy=copy: run(executor.plans.get(copy), copy, env, group and group.comm(i))
            for i, (env, copy) in enumerate(zip(envs, self.copies))
        ]
        with one_blas_thread_each(len(shards) > 1):  # step 2
            _run_threads(tasks, group)
        main = dict(scope.vars)  # step 3
        for grad in self.grads:
            values = [env[grad] for env in envs if env.get(grad) is not None]
            if values:
                main[grad] = _average(executor.xp, values)
        set_scheduled_lr(self.program, main)  # step 4
        run(once_plan, self.once, main)
        for name in replica_plan.persist_outputs:  # e.g. batch norm's moving statistics: replica 0's
            scope.vars[name] = envs[0][name]
        for name in once_plan.persist_outputs:
            scope.vars[name] = main[name]
        out = []  # step 5
        for name in fetch_names:
            if name not in self.computed:
                out.append(fetched(main, name, self.program, return_numpy))
                continue
            holding = [env for env in envs if env.get(name) is not None] or envs[:1]  # none: fetched says why
            merged = _merge([fetched(env, name, self.program) for env in holding])
            out.append(merged if return_numpy else LoDTensor(merged, ()))
        return out

    def _replica_group(self, replicas: int) -> ThreadGroup | None:
        """The replicas' collective group, for sync_batch_norm across them (None: nothing to sync)."""
        if not self.sync_batch_norm or replicas == 1:
            return None
        comm = process_comm()
        if comm.has_ring(0) and comm.ring(0).nranks > 1:
            raise NotImplementedError(
                f"BuildStrategy.sync_batch_norm: {replicas} replicas (CPU_NUM) in each of the job's "
                f"{comm.ring(0).nranks} processes; expected CPU_NUM=1 (the processes' ring syncs them) or one process"
            )
        return ThreadGroup(replicas)


def _own_state(xp, variables: dict, written: list[str]) -> dict:
    """A replica's variables: the scope's, with its own copy of the state its ops update in place
    (batch norm's running statistics), so no replica's update lands in another's."""
    env = dict(variables)
    for name in written:
        value = env.get(name)
        if is_array(xp, value):
            env[name] = copy(xp, value)
    return env


def _sync_batch_norms(program: Program) -> None:
    """Paddle's sync_batch_norm pass: batch_norm and its gradient become sync_batch_norm's (same slots
    and attrs), in the replicas' program only."""
    for op in program.global_block().ops:
        if op.type in ("batch_norm", "batch_norm_grad"):
            op.type = "sync_" + op.type
    program._bump()


def _with_ops(program: Program, keep) -> Program:
    out = program.clone()
    block = out.global_block()
    block.ops = [op for op in block.ops if keep(op)]
    out._bump()
    return out


def _computed(program: Program) -> set[str]:
    return {n for op in program.global_block().ops for n in op.output_arg_names}


def _shards(feed, replicas: int) -> list[dict]:
    if isinstance(feed, (list, tuple)):  # one feed per replica, as Paddle's list of dicts
        if len(feed) != replicas:
            raise FleetgraphError(
                f"data parallel: a list of {len(feed)} feeds for {replicas} replicas; expected one each"
            )
        return [dict(f) for f in feed]
    feed = dict(feed or {})
    shards: list[dict] = [{} for _ in range(replicas)]
    for key, value in feed.items():
        for shard, part in zip(shards, _split(key, value, replicas)):
            shard[key] = part
    return shards


def _split(key, value, replicas: int) -> list:
    name = getattr(key, "name", key)
    if isinstance(value, LoDTensor) and value.levels:
        if len(value.levels) > 1:
            raise FleetgraphError(f"data parallel: feed {name!r} has {len(value.levels)} LoD levels; expected one")
        offsets = value.offsets
        count = len(offsets) - 1
        _check_count(name, count, replicas, "sequences")
        bounds = [count * i // replicas for i in range(replicas + 1)]
        return [
            LoDTensor(value.data[offsets[a] : offsets[b]], (offsets[a : b + 1] - offsets[a],))
            for a, b in zip(bounds, bounds[1:])
        ]
    array = np.asarray(value.data if isinstance(value, LoDTensor) else value)
    _check_count(name, len(array) if array.ndim else 0, replicas, "rows")
    return np.array_split(array, replicas)


def _check_count(name: str, count: int, replicas: int, what: str) -> None:
    if count < replicas:
        raise FleetgraphError(
            f"data parallel: feed {name!r} holds {count} {what}, fewer than the {replicas} replicas (CPU_NUM); "
            "expected at least one each"
        )


_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _run_threads(tasks, group: ThreadGroup | None = None) -> None:
    """Run the replicas on the process's replica threads (kept between steps: a thread's allocator
    arena and stack stay warm), the first error raised here; a failing replica aborts the waits of
    the others in `group`."""
    global _POOL
    if len(tasks) == 1:
        tasks[0]()
        return
    if group is not None:
        tasks = [_aborting(task, group) for task in tasks]
    with _POOL_LOCK:
        if _POOL is None or _POOL._max_workers < len(tasks):
            _POOL = ThreadPoolExecutor(max_workers=len(tasks), thread_name_prefix="replica")
        pool = _POOL
    futures = [pool.submit(task) for task in tasks]
    for future in futures:
        future.result()


def _aborting(task, group: ThreadGroup):
    def run():
        try:
            task()
        except BaseException as e:
            group.abort(e)
            raise

    return run


def _average(xp, values):
    if len(values) == 1:
        return values[0]
    total = merge_dense(xp, values)
    scale = 1.0 / len(values)
    if isinstance(total, SelectedRows):
        return SelectedRows(total.rows, total.value * total.value.dtype.type(scale), total.height)
    total *= total.dtype.type(scale)  # merge_dense's sum is a new array: scaled in place
    return total


def _merge(values: list[np.ndarray]) -> np.ndarray:
    arrays = [np.asarray(v) for v in values]
    if all(a.ndim == 0 for a in arrays):
        return np.stack(arrays)
    return np.concatenate([a.reshape(1) if a.ndim == 0 else a for a in arrays])
