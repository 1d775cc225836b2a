"""Batch sources, what `Executor.train_from_dataset` consumes: reader threads over files, or memory.

`next()` returns the next batch as a feed dict {variable name: ndarray or LoDTensor} in use_var order,
or None once every batch was handed out (and from then on); any thread may call it. An error of a
reader (a malformed line, a failed pipe_command) is raised by `next()` in the consumer. `close()`
stops the reader threads and kills their pipe_commands; it is idempotent, and a source is a context
manager. `samples` counts the samples handed out.
"""

from __future__ import annotations

import os
import queue
import threading
import time

from .columns import BatchCutter, Columns
from .errors import DatasetTimeoutError
from .multislot import MultiSlotParser
from .pipes import open_input
from .tokens import PAD

CHUNK_BYTES = 1 << 20  # large enough that NumPy's per-call cost vanishes, small enough to stay in cache
TIMEOUT_ENV = "FLEETGRAPH_DATASET_TIMEOUT"
_END = object()


def read_timeout() -> float:
    """Seconds a consumer waits for a reader that makes no progress (FLEETGRAPH_DATASET_TIMEOUT)."""
    return float(os.environ.get(TIMEOUT_ENV, "600"))


class Stopped(Exception):
    """The source was closed while a reader still worked; not an error."""


def read_columns(path: str, pipe_command: str, parser: MultiSlotParser, stop: threading.Event, active: set):
    """The samples of one file, one Columns per chunk of lines, until the end or `stop`."""
    source = open_input(path, pipe_command)
    active.add(source)
    try:
        line, tail = 1, b""
        while not stop.is_set():
            data = source.read(CHUNK_BYTES)
            if not data:
                break
            buf = bytearray(b" " * PAD)
            buf += tail
            buf += data
            cut = buf.rfind(b"\n")
            if cut < PAD:  # no whole line yet
                tail = bytes(buf[PAD:])
                continue
            tail = bytes(buf[cut + 1 :])
            del buf[cut + 1 :]
            yield parser.parse(buf, path, line)
            line += buf.count(b"\n")
        if stop.is_set():
            raise Stopped
        source.finish()  # a failed pipe_command explains a broken last line better than the line does
        if tail.strip():  # a last line without its newline
            yield parser.parse(bytearray(b" " * PAD) + tail + b"\n", path, line)
    finally:
        active.discard(source)
        source.close()


class BatchSource:
    """The consumer interface; see the module docstring."""

    samples = 0

    def next(self) -> dict | None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> BatchSource:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __iter__(self):
        while (batch := self.next()) is not None:
            yield batch


class StreamSource(BatchSource):
    """QueueDataset's source: `threads` readers take whole files from a shared list, cut batches of
    `batch_size` across their files (a reader's last batch may be smaller) and hand them over
    through a bounded queue."""

    def __init__(self, files, parser: MultiSlotParser, pipe_command: str, batch_size: int, threads: int, names):
        self._files = list(files)
        self._parser, self._pipe_command, self._names = parser, pipe_command, list(names)
        self._batch_size = batch_size
        self._queue: queue.Queue = queue.Queue(maxsize=4 * threads)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._active: set = set()
        self._error: BaseException | None = None
        self._closed = self._ended = False
        self._running = threads
        self._reading: dict[str, str] = {}
        self._timeout = read_timeout()
        self._threads = [
            threading.Thread(target=self._read, name=f"dataset-reader-{i}", daemon=True) for i in range(threads)
        ]
        for thread in self._threads:
            thread.start()

    def next(self) -> dict | None:
        deadline = time.monotonic() + self._timeout
        while True:
            if self._error is not None:
                raise self._error
            if self._closed:
                return None
            try:
                item = self._queue.get(timeout=0.1)
            except queue.Empty:
                if time.monotonic() > deadline:
                    raise self._timed_out() from None
                continue
            if item is _END:
                self._queue.put_nowait(_END)  # for the other consumers; the queue holds nothing else now
                self._end()
                return None
            n, feed = item
            with self._lock:
                self.samples += n
            return feed

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._stop.set()
        for source in list(self._active):
            source.kill()
        for thread in self._threads:
            thread.join(timeout=10.0)
        self._end()

    def _read(self) -> None:
        cutter = BatchCutter(self._batch_size)
        name = threading.current_thread().name
        try:
            while (path := self._next_file()) is not None:
                self._reading[name] = path
                for cols in read_columns(path, self._pipe_command, self._parser, self._stop, self._active):
                    for batch in cutter.add(cols):
                        self._put(batch)
            rest = cutter.rest()
            if rest is not None:
                self._put(rest)
        except Stopped:
            pass
        except BaseException as e:  # handed to the consumer, which raises it
            with self._lock:
                self._error = self._error or e
            self._stop.set()
            for source in list(self._active):
                source.kill()
        finally:
            self._reading.pop(name, None)
            with self._lock:
                self._running -= 1
                last = self._running == 0
            if last and not self._stop.is_set():
                self._offer(_END)

    def _next_file(self) -> str | None:
        with self._lock:
            return self._files.pop(0) if self._files and not self._stop.is_set() else None

    def _put(self, cols: Columns) -> None:
        self._offer((cols.n, cols.feed(self._names)))

    def _offer(self, item) -> None:
        while True:
            try:
                self._queue.put(item, timeout=0.1)
                return
            except queue.Full:
                if self._stop.is_set():
                    raise Stopped from None

    def _end(self) -> None:
        with self._lock:
            if self._ended:
                return
            self._ended = True
        if self._parser.log is not None:
            self._parser.log.summary()

    def _timed_out(self) -> DatasetTimeoutError:
        reading = ", ".join(repr(p) for p in self._reading.values()) or "nothing"
        return DatasetTimeoutError(
            f"dataset: no batch from the {len(self._threads)} reader thread(s) after {self._timeout:.1f} s "
            f"({TIMEOUT_ENV}); still reading {reading} with pipe_command {self._pipe_command!r}"
        )


class MemorySource(BatchSource):
    """InMemoryDataset's source: consecutive batches of the samples in memory, no parsing."""

    def __init__(self, cols: Columns, batch_size: int, names) -> None:
        self._cols, self._batch_size, self._names = cols, batch_size, list(names)
        self._lock = threading.Lock()
        self._pos = 0

    def next(self) -> dict | None:
        with self._lock:
            start = self._pos
            stop = min(start + self._batch_size, self._cols.n)
            if start >= stop:
                return None
            self._pos = stop
            self.samples += stop - start
        return self._cols.slice(start, stop).feed(self._names)

    def close(self) -> None:
        with self._lock:
            self._pos = self._cols.n


class MemoryLoader:
    """Every file parsed into memory by `threads` threads that take whole files; `wait()` returns
    the samples in file order whatever thread read them, or raises the first reader's error."""

    def __init__(self, files, parser: MultiSlotParser, pipe_command: str, threads: int) -> None:
        self._files = list(enumerate(files))
        self._parser, self._pipe_command = parser, pipe_command
        self.log = parser.log
        self._parts: list[list[Columns]] = [[] for _ in self._files]
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._active: set = set()
        self._error: BaseException | None = None
        self._progress = time.monotonic()
        self._threads = [
            threading.Thread(target=self._read, name=f"dataset-loader-{i}", daemon=True) for i in range(threads)
        ]
        for thread in self._threads:
            thread.start()

    def wait(self) -> Columns:
        timeout = read_timeout()
        try:
            for thread in self._threads:
                while thread.is_alive():
                    thread.join(timeout=0.1)
                    if self._error is None and time.monotonic() - self._progress > timeout:
                        raise DatasetTimeoutError(
                            f"dataset: load_into_memory made no progress for {timeout:.1f} s ({TIMEOUT_ENV}) "
                            f"with pipe_command {self._pipe_command!r}"
                        )
        finally:
            self.stop()
        if self._error is not None:
            raise self._error
        parts = [cols for file_parts in self._parts for cols in file_parts]
        return Columns.concat(parts) if parts else self._parser.empty()

    def stop(self) -> None:
        self._stop.set()
        for source in list(self._active):
            source.kill()
        for thread in self._threads:
            thread.join(timeout=10.0)

    def _read(self) -> None:
        try:
            while True:
                with self._lock:
                    if not self._files or self._stop.is_set():
                        return
                    index, path = self._files.pop(0)
                for cols in read_columns(path, self._pipe_command, self._parser, self._stop, self._active):
                    self._parts[index].append(cols)
                    self._progress = time.monotonic()
        except Stopped:
            pass
        except BaseException as e:
            with self._lock:
                self._error = self._error or e
            self._stop.set()
            for source in list(self._active):
                source.kill()
