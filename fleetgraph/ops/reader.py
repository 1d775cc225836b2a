"""Reader ops: create_py_reader, create_double_buffer_reader and read, which feed a program from a DataLoader.

A non-iterable DataLoader owns a `BlockingQueue` that a feeding thread fills with batches; the queue
sits in the scope under its variable's name. `create_py_reader` wraps it as a reader,
`create_double_buffer_reader` decorates that reader, and each run of `read` pops one batch into the
feed variables, raising `EOFException` once the epoch's data is used up.
"""

from __future__ import annotations

import threading
from collections import deque

from ..ir import EOFException, FleetgraphError, InferContext, register_op
from ..ir.dtypes import VAR_TYPE_CODES
from ..ir.program import VarType

# Paddle's VarDesc.VarType codes, which create_py_reader's `dtypes` attr holds.
PADDLE_DTYPE_CODES = VAR_TYPE_CODES

IDLE, RUNNING, FINISHED, FAILED = "idle", "running", "finished", "failed"
# how often a waiting `pop` looks whether the feeding thread is still alive
_POLL_S = 0.5


class BlockingQueue:
    """The bounded queue between a DataLoader's feeding thread and its consumer (Paddle's
    LoDTensorBlockingQueue). Each epoch is a generation: `open()` starts one and returns its token,
    `stop()` ends it; a thread holding an old token can no longer push, so epochs never mix."""

    def __init__(self, capacity: int, what: str) -> None:
        self.capacity, self.what = int(capacity), what
        self._items: deque = deque()
        self._cond = threading.Condition()
        self._state, self._token, self._error, self._context = IDLE, 0, None, ""
        self._producer: threading.Thread | None = None

    @property
    def started(self) -> bool:
        return self._state != IDLE

    @property
    def generation(self) -> int:
        """The token of the current generation, for a feeder that did not open it itself."""
        return self._token

    def __len__(self) -> int:
        return len(self._items)

    # -- the loader's side -----------------------------------------------------------------------
    def open(self) -> int:
        with self._cond:
            if self._state != IDLE:
                raise FleetgraphError(f"{self.what}: the queue is already open; expected stop() first")
            self._token += 1
            self._state, self._error = RUNNING, None
            self._items.clear()
            return self._token

    def attach(self, token: int, producer: threading.Thread) -> None:
        """The thread filling this generation, so a consumer notices if it dies without a word."""
        with self._cond:
            if token == self._token:
                self._producer = producer

    def stop(self) -> None:
        """End the generation: drop what is queued and wake everyone (a blocked pusher gives up)."""
        with self._cond:
            self._token += 1
            self._state, self._error, self._producer = IDLE, None, None
            self._items.clear()
            self._cond.notify_all()

    # -- the feeding thread's side ---------------------------------------------------------------
    def push(self, token: int, batch) -> bool:
        """Queue one batch, waiting while the queue is full; False once the generation has ended."""
        with self._cond:
            while token == self._token and self._state == RUNNING and len(self._items) >= self.capacity:
                self._cond.wait()
            if token != self._token or self._state != RUNNING:
                return False
            self._items.append(batch)
            self._cond.notify_all()
            return True

    def close(self, token: int) -> None:
        """The generator is exhausted: the consumer gets what is queued, then EOFException."""
        self._finish(token, FINISHED, None, "")

    def fail(self, token: int, error: BaseException, context: str = "the generator raised") -> None:
        """Feeding failed: the consumer gets the batches built before, then `<context> <error>`."""
        self._finish(token, FAILED, error, context)

    def _finish(self, token: int, state: str, error, context: str) -> None:
        with self._cond:
            if token != self._token or self._state != RUNNING:
                return
            self._state, self._error, self._context = state, error, context
            self._cond.notify_all()

    # -- the consumer's side ---------------------------------------------------------------------
    def pop(self):
        """The next batch; EOFException at the end of the epoch; the generator's error if it raised."""
        with self._cond:
            while not self._items and self._state == RUNNING:
                if not self._cond.wait(_POLL_S) and self._producer_died():
                    self._state, self._error = FAILED, None
            if self._items:
                batch = self._items.popleft()
                self._cond.notify_all()
                return batch
            if self._state == FINISHED:
                raise EOFException(f"{self.what}: no more batches this epoch; call reset() and start() for the next")
            if self._state == FAILED:
                raise self._failure()
            raise FleetgraphError(
                f"{self.what}: not started; call the loader's start() before running the program "
                "(and again after each reset())"
            )

    def _failure(self) -> FleetgraphError:
        error = self._error
        if error is None:  # the thread died without a word (it always closes or fails the queue)
            return FleetgraphError(f"{self.what}: the feeding thread ended without finishing the epoch")
        failure = FleetgraphError(f"{self.what}: {self._context} {type(error).__name__}: {error}")
        failure.__cause__ = error
        return failure

    def _producer_died(self) -> bool:
        return self._producer is not None and not self._producer.is_alive()


class QueueReader:
    """What a reader variable holds: the queue that `read` pops batches from."""

    def __init__(self, queue: BlockingQueue, slots: int) -> None:
        self.queue, self.slots = queue, slots

    def read_next(self) -> list:
        batch = self.queue.pop()
        if len(batch) != self.slots:
            raise FleetgraphError(f"{self.queue.what}: a batch holds {len(batch)} values; expected {self.slots}")
        return list(batch)


# -- create_py_reader ------------------------------------------------------------------------------

_PY_READER_ATTRS = {"shape_concat": [], "ranks": [], "lod_levels": [], "dtypes": [], "need_check_feed": []}


def _create_py_reader_infer(ctx: InferContext) -> None:
    ranks = ctx.attr("ranks")
    lengths = {k: len(ctx.attr(k)) for k in ("lod_levels", "dtypes", "need_check_feed")}
    if any(n != len(ranks) for n in lengths.values()):
        raise ctx.error(f"expected one entry per slot in ranks, lod_levels, dtypes and need_check_feed, got {lengths}")
    if sum(ranks) != len(ctx.attr("shape_concat")):
        raise ctx.error(f"shape_concat has {len(ctx.attr('shape_concat'))} dims; expected sum(ranks) = {sum(ranks)}")
    ctx.set_output("Out", (), type=VarType.RAW)


def _create_py_reader(xp, queue, *, shape_concat, ranks, lod_levels, dtypes, need_check_feed):
    if not isinstance(queue, BlockingQueue):
        raise FleetgraphError(f"create_py_reader: expected a DataLoader's queue, got {type(queue).__name__}")
    return QueueReader(queue, len(ranks))


register_op(
    "create_py_reader",
    inputs=("blocking_queue",),
    outputs=("Out",),
    attrs=_PY_READER_ATTRS,
    infer_shape=_create_py_reader_infer,
    kernel=_create_py_reader,
    side_effect=True,  # binds the program to a queue outside it
)


# -- create_double_buffer_reader -------------------------------------------------------------------


def _raw_output(ctx: InferContext) -> None:
    ctx.set_output("Out", (), type=VarType.RAW)


def _create_double_buffer_reader(xp, reader, *, place):
    # The feeding thread already builds up to `capacity` batches ahead of the program, so a second
    # prefetch buffer would add nothing: the decorated reader is the reader itself.
    return reader


register_op(
    "create_double_buffer_reader",
    inputs=("UnderlyingReader",),
    outputs=("Out",),
    attrs={"place": "AUTO"},
    infer_shape=_raw_output,
    kernel=_create_double_buffer_reader,
    side_effect=True,
)


# -- read ------------------------------------------------------------------------------------------


def _read_infer(ctx: InferContext) -> None:
    if not ctx.attr("throw_eof_exp"):
        raise ctx.error("throw_eof_exp=False (empty outputs at the end of the data) is not supported; expected True")


def _read(xp, reader, *, throw_eof_exp, infer_out, drop_last):
    return reader.read_next()


register_op(
    "read",
    inputs=("Reader",),
    outputs=("Out*",),
    attrs={"throw_eof_exp": True, "infer_out": True, "drop_last": True},
    infer_shape=_read_infer,
    kernel=_read,
    side_effect=True,  # each run pops a batch: dropping or repeating one loses data
    takes_lod=True,  # the batch's LoDTensors go to the feed variables as they are
)
