"""Data parallelism in one process: `CompiledProgram(...).with_data_parallel(...)` and
`ParallelExecutor` run a program as CPU_NUM replicas (Paddle's CPU data parallelism).

Steps of `DataParallel.run`:
  1. split the feed into one shard per replica along the batch (sequences, for a LoD feed), or take
     the list of per-replica feeds the caller gave;
  2. run the forward and backward ops of every replica on its own thread, each on its shard, all
     reading the shared parameters (NumPy releases the GIL in its large operations; the BLAS library
     runs one thread per replica);
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

from ..ir import FleetgraphError, OpRole, Program
from ..ops.lod_tensor import LoDTensor
from ..ops.selected_rows import SelectedRows, merge_dense
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

    def __init__(self, program: Program, replicas: int) -> None:
        self.program, self.replicas = program, replicas
        self.replica = _with_ops(program, lambda op: not op.attrs.get("op_role", 0) & _ONCE)
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
        def run(plan, program, env):
            plan.run(env, executor.xp, executor.context(program, scope, env, plan))

        shards = _shards(feed, self.replicas)  # step 1
        replica_plan, once_plan = executor.plans.get(self.replica), executor.plans.get(self.once)
        envs = [dict(scope.vars) for _ in shards]
        for env, shard in zip(envs, shards):
            feed_into(env, shard, replica_plan, executor.xp)
        with one_blas_thread_each(len(shards) > 1):  # step 2
            _run_threads([lambda env=env: run(replica_plan, self.replica, env) for env in envs])
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


def _run_threads(tasks) -> None:
    """Run the replicas on the process's replica threads (kept between steps: a thread's allocator
    arena and stack stay warm), the first error raised here."""
    global _POOL
    if len(tasks) == 1:
        tasks[0]()
        return
    with _POOL_LOCK:
        if _POOL is None or _POOL._max_workers < len(tasks):
            _POOL = ThreadPoolExecutor(max_workers=len(tasks), thread_name_prefix="replica")
        pool = _POOL
    futures = [pool.submit(task) for task in tasks]
    for future in futures:
        future.result()


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
