"""Worker processes of `DataLoader(num_workers=N)` (Paddle 2.0's _DataLoaderIterMultiProcess).

Steps of one pass:
  1. start N processes (forked where the platform can, so the dataset need not pickle); each sets
     the WorkerInfo that `get_worker_info()` returns there, calls worker_init_fn(id), and answers
     the tasks of its own queue;
  2. the parent hands out tasks round-robin to the live workers, at most two a worker outstanding:
     a map-style task is a batch's indices; an iterable dataset's task asks the worker for the next
     batch of its own iterator over its copy of the dataset;
  3. a worker puts (seq, answer) on the one result queue: the collated batch, the error it raised,
     or _DRAINED once its iterator has ended (it is given no more tasks);
  4. the parent yields the batches in seq order, skipping drained answers; at the end, or when the
     pass is dropped, each worker is sent None and joined.
"""

from __future__ import annotations

import itertools
import multiprocessing
import pickle
import queue
import time
from collections.abc import Callable, Iterator

from .dataset import LoaderError

# how often a parent waiting for a batch checks that its workers are alive
_POLL_S = 5.0
# how long a worker may take to leave after it is sent None, before it is terminated
_JOIN_S = 2.0
_DRAINED = "__iterable_dataset_drained__"
_worker_info: WorkerInfo | None = None


class WorkerInfo:
    """Who the current worker process is: `id`, `num_workers` and its copy of `dataset` (read-only)."""

    def __init__(self, **fields) -> None:
        self.__dict__.update(fields)

    def __setattr__(self, key, value) -> None:
        raise LoaderError(f"WorkerInfo: cannot assign {key!r}; a worker's info is read-only")


def get_worker_info() -> WorkerInfo | None:
    """In a DataLoader worker process, its WorkerInfo (to split an IterableDataset's work among the
    workers); None in the main process."""
    return _worker_info


def iterate_in_workers(
    num_workers: int,
    dataset,
    make_fetch: Callable[[], Callable],
    tasks: Iterator,
    worker_init_fn: Callable | None = None,
    timeout: float = 0,
) -> Iterator:
    """The batches `make_fetch()(task)` computed by worker processes, in the order of `tasks`.
    make_fetch runs in each worker; its fetch raises StopIteration when that worker has no more."""
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    results = ctx.Queue()
    inboxes = [ctx.Queue() for _ in range(num_workers)]
    workers = [
        ctx.Process(
            target=_work,
            args=(dataset, make_fetch, inboxes[i], results, i, num_workers, worker_init_fn),
            daemon=True,
        )
        for i in range(num_workers)
    ]
    for worker in workers:  # step 1
        worker.start()
    live, owner, answers, seqs = list(range(num_workers)), {}, {}, itertools.count()
    turn = itertools.count()

    def hand_out() -> None:  # step 2
        task = next(tasks, _DRAINED) if live else _DRAINED
        if task is not _DRAINED:
            seq, worker_id = next(seqs), live[next(turn) % len(live)]
            owner[seq] = worker_id
            inboxes[worker_id].put((seq, task))

    try:
        for _ in range(2 * num_workers):
            hand_out()
        received = 0
        while received in owner:  # step 4
            while received not in answers:
                seq, answer = _receive(results, workers, timeout)
                answers[seq] = answer
            answer, worker_id = answers.pop(received), owner.pop(received)
            received += 1
            if isinstance(answer, str) and answer == _DRAINED:
                if worker_id in live:
                    live.remove(worker_id)
            elif isinstance(answer, BaseException):
                raise answer
            hand_out()
            if not (isinstance(answer, str) and answer == _DRAINED):
                yield answer
    finally:
        _stop(workers, inboxes)


def _receive(results, workers, timeout: float):
    """The next answer on the result queue, or an error once a worker died or `timeout` passed."""
    start = time.monotonic()
    while True:
        try:
            return results.get(timeout=min(_POLL_S, timeout) if timeout > 0 else _POLL_S)
        except queue.Empty:
            dead = [w for w in workers if not w.is_alive()]
            if dead:
                pids = ", ".join(str(w.pid) for w in dead)
                raise LoaderError(f"DataLoader: {len(dead)} workers exited unexpectedly, pids: {pids}") from None
            if timeout > 0 and time.monotonic() - start >= timeout:
                raise LoaderError(f"DataLoader: no batch from the workers in {timeout} s (timeout)") from None


def _stop(workers, inboxes) -> None:
    for inbox in inboxes:
        inbox.put(None)
    for worker in workers:
        worker.join(_JOIN_S)
        if worker.is_alive():
            worker.terminate()
            worker.join()


def _work(dataset, make_fetch, inbox, results, worker_id: int, num_workers: int, init_fn) -> None:
    """A worker process: step 1's set-up, then step 3 for each task until None."""
    global _worker_info
    _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, dataset=dataset)
    results.cancel_join_thread()  # a parent that stopped reading must not keep this process from leaving
    try:
        if init_fn is not None:
            init_fn(worker_id)
        fetch, failure = make_fetch(), None
    except Exception as e:  # reported with the first task, where the parent is listening
        failure = _sendable(e, worker_id, "worker_init_fn")
    while (task := inbox.get()) is not None:
        seq, payload = task
        if failure is not None:
            results.put((seq, failure))
            continue
        try:
            results.put((seq, fetch(payload)))
        except StopIteration:
            results.put((seq, _DRAINED))
        except Exception as e:
            results.put((seq, _sendable(e, worker_id, "the dataset")))


def _sendable(error: Exception, worker_id: int, where: str) -> Exception:
    """The error itself if it crosses to the parent (as Paddle re-raises it), else its message."""
    try:
        pickle.loads(pickle.dumps(error))
        return error
    except Exception:
        return LoaderError(f"DataLoader worker {worker_id}, in {where}: {type(error).__name__}: {error}")
