"""`Executor.train_from_dataset` / `infer_from_dataset`: threads that run one program over a
Dataset's batches, sharing one scope (Hogwild, as Paddle's MultiTrainer).

Steps of `run_dataset`:
  1. choose the program each thread runs (for inference: the forward ops only, no sends) and the
     number of threads (`thread`, else the dataset's thread_num; one when the program is a sync
     parameter-server trainer, whose every step is a barrier step of all trainers);
  2. start the dataset's readers (`dataset._batch_source()`), then the worker threads: each prepares
     its own plan and runs it on batch after batch, its variables starting from the shared scope, so
     the kernels update the parameters in place for all threads; NumPy releases the GIL in its large
     operations, so two threads use two cores (with several threads the BLAS library runs each
     product on one core: a pool of its own per product would only fight the threads for cores);
  3. the thread that finishes every `print_period`-th batch prints `fetch_info` with the values it
     fetched, the batches and samples per second so far; a progress line also comes at least every
     minute, and with a fetch_list one more at the end (a call shorter than print_period batches
     would print nothing otherwise);
  4. wait for the workers, close the readers; the first error of any thread stops every thread and
     is raised, the readers' errors (a malformed line, a failing pipe_command) included.
"""

from __future__ import annotations

import sys
import threading
import time

import numpy as np

from ..ir import FleetgraphError, OpRole, Program
from ..ops.lod_tensor import LoDTensor
from .native import one_blas_thread_each
from .plan import Plan, set_scheduled_lr
from .scope import Scope, global_scope

PROGRESS_EVERY_S = 60.0
_NOT_FOR_INFERENCE = OpRole.Backward | OpRole.Optimize | OpRole.LRSched | OpRole.RPC | OpRole.Dist
_KEEP_IN_INFERENCE = ("distributed_lookup_table",)  # rows fetched from the pservers are forward data


def run_dataset(
    executor,
    program,
    dataset,
    scope: Scope | None,
    thread: int,
    fetch_list,
    fetch_info,
    print_period: int,
    fetch_handler,
    *,
    infer: bool,
    what: str,
) -> None:
    program = _program_of(program, what)
    if dataset is None:
        raise FleetgraphError(f"{what}: dataset is None; expected a QueueDataset or InMemoryDataset")
    if not callable(getattr(dataset, "_batch_source", None)):
        raise TypeError(f"{what}: dataset expected a QueueDataset or InMemoryDataset, got {type(dataset).__name__}")
    scope = global_scope() if scope is None else scope
    if infer:  # step 1
        program = _forward_only(program)
    threads = _thread_count(program, dataset, thread, what)
    names = [f if isinstance(f, str) else f.name for f in (fetch_list or [])]
    labels = list(fetch_info) if fetch_info else names
    if len(labels) != len(names):
        raise FleetgraphError(
            f"{what}: {len(labels)} fetch_info labels for {len(names)} fetch_list variables; expected one each"
        )
    run = _Run(executor, program, scope, names, labels, max(1, int(print_period)), fetch_handler, what)
    with one_blas_thread_each(threads > 1), dataset._batch_source() as source:  # step 2
        workers = [threading.Thread(target=run.work, args=(source,), name=f"{what}-{i}") for i in range(threads)]
        for w in workers:
            w.start()
        try:
            run.watch(workers)  # steps 3 and 4
        finally:
            run.stop.set()
            source.close()
            for w in workers:
                w.join()
    if run.error is not None:
        raise run.error
    if run.names and run.batches % run.print_period:
        run._report()


def _program_of(program, what: str) -> Program:
    from ..ir import default_main_program

    program = default_main_program() if program is None else getattr(program, "_program", program)
    if not isinstance(program, Program):
        raise TypeError(f"{what}: expected a Program, got {type(program).__name__}")
    return program


def _forward_only(program: Program) -> Program:
    """The program without backward, optimize and send ops: inference changes no parameter."""
    out = program.clone(for_test=True)
    block = out.global_block()
    block.ops = [
        op for op in block.ops if op.type in _KEEP_IN_INFERENCE or not op.attrs.get("op_role", 0) & _NOT_FOR_INFERENCE
    ]
    out._bump()
    return out


def _thread_count(program: Program, dataset, thread: int, what: str) -> int:
    count = int(thread) if thread and thread > 0 else int(getattr(dataset, "thread_num", 1) or 1)
    if count > 1 and any(op.type == "send_barrier" for op in program.global_block().ops):
        print(
            f"{what}: a sync parameter-server trainer steps in lockstep with the other trainers, so one thread "
            f"trains (the dataset's {count} reader threads still parse in parallel)",
            file=sys.stderr,
        )
        return 1
    return count


class _Run:
    """The state the worker threads share: counters, the first error, the stop flag."""

    def __init__(self, executor, program, scope, names, labels, print_period, fetch_handler, what) -> None:
        self.executor, self.program, self.scope = executor, program, scope
        self.names, self.labels, self.print_period = names, labels, print_period
        self.fetch_handler, self.what = fetch_handler, what
        self.stop = threading.Event()
        self.error: BaseException | None = None
        self.lock = threading.Lock()
        self.batches = self.samples = 0
        self.started = time.monotonic()
        self.latest: dict = {}

    def work(self, source) -> None:
        plan = Plan(self.program.global_block())  # each thread its own: steps hold their random streams
        persist = plan.persist_outputs
        hint = _prefetch_hint(plan, self.program)
        try:
            for feed in _batches(source, hint):
                if self.stop.is_set():
                    break
                env = dict(self.scope.vars)
                env.update(feed)
                set_scheduled_lr(self.program, env)
                ctx = self.executor.context(self.program, self.scope, env, plan)
                plan.run(env, self.executor.xp, ctx)
                for name in persist:
                    self.scope.vars[name] = env[name]
                self._count(feed, env)
        except BaseException as e:  # noqa: BLE001  (handed to the caller's thread)
            with self.lock:
                if self.error is None:
                    self.error = e
            self.stop.set()
        finally:
            _finish_comm_thread()

    def _count(self, feed: dict, env: dict) -> None:
        rows = _batch_rows(feed)
        with self.lock:
            self.batches += 1
            self.samples += rows
            due = self.batches % self.print_period == 0
        if self.names:
            self.latest = {n: np.array(getattr(env.get(n), "data", env.get(n))) for n in self.names}
            if due:
                self._report()

    def watch(self, workers) -> None:
        """Wait for the workers; the main thread prints progress and calls the fetch handler."""
        last_progress = last_handler = time.monotonic()
        period = getattr(self.fetch_handler, "period_secs", 60)
        while any(w.is_alive() for w in workers):
            for w in workers:
                w.join(0.2)
            now = time.monotonic()
            if now - last_progress >= PROGRESS_EVERY_S:
                self._report(values=False)
                last_progress = now
            if self.fetch_handler is not None and now - last_handler >= period and self.latest:
                self.fetch_handler.handler(dict(self.latest))
                last_handler = now

    def _report(self, values: bool = True) -> None:
        elapsed = max(time.monotonic() - self.started, 1e-9)
        line = f"[{self.what}] batch {self.batches}, {self.samples / elapsed:,.0f} samples/s"
        if values and self.latest:
            shown = ", ".join(f"{label}: {_fmt(self.latest[name])}" for label, name in zip(self.labels, self.names))
            line += f" | {shown}"
        print(line, flush=True)


def _fmt(value: np.ndarray) -> str:
    flat = np.asarray(value).reshape(-1)
    if flat.size == 1:
        return f"{flat[0]:.6g}"
    return np.array2string(flat[:8], precision=6) + (" ..." if flat.size > 8 else "")


def _batch_rows(feed: dict) -> int:
    """The samples of a batch: sequences of a LoD value, else rows of the first value."""
    for value in feed.values():
        if isinstance(value, LoDTensor) and value.levels:
            return len(value.levels[0]) - 1
    first = next(iter(feed.values()), None)
    return 0 if first is None else len(getattr(first, "data", first))


def _batches(source, hint):
    """The source's batches; with a hint, each batch's successor is read (and hinted) before it runs."""
    feed = source.next()
    while feed is not None:
        upcoming = source.next() if hint is not None else None
        if upcoming is not None:
            hint(upcoming)
        yield feed
        feed = upcoming if hint is not None else source.next()


def _prefetch_hint(plan, program: Program):
    """For a sync parameter-server trainer with tables on the pservers, what asks for the next batch's
    rows together with this step's parameters (PSClient.hint_prefetch); None otherwise."""
    if not any(op.type == "send_barrier" for op in program.global_block().ops):
        return None
    lookups = [s for s in plan.steps if getattr(s.op, "type", None) == "distributed_lookup_table"]
    if not lookups:
        return None
    from ..ops.table import distinct_ids
    from .comm import process_comm

    client = process_comm().ps_client()

    tables = []  # per lookup: its ids' names, the table's height and (names, endpoints, sections, width, dtype)
    for step in lookups:
        kw, w = step.kwargs, step.op.block._find_var_recursive(step.op.input("W")[0])
        if w is not None:
            where = (kw["table_names"], kw["endpoints"], kw["height_sections"])
            tables.append((step.op.input("Ids"), int(sum(kw["height_sections"])), where, w.shape[1], w.dtype))

    def hint(feed: dict) -> None:
        for names, height, where, width, dtype in tables:
            if all(n in feed for n in names):
                ids = distinct_ids([feed[n] for n in names], height)
                if ids is not None:
                    client.hint_prefetch(*where, ids, width, dtype)

    return hint


def _finish_comm_thread() -> None:
    from .comm import finish_thread

    finish_thread()
