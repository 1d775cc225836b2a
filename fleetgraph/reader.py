"""`paddle.reader`: reader decorators. A reader is a function returning an iterable of samples; each
decorator takes readers and returns a new one, as Paddle 1.8's paddle/reader/decorator.py does.

The threaded decorators (`buffered`, `xmap_readers`) hand an exception of the reader or the mapper
to the consumer, which Paddle's leave waiting forever; `multiprocess_reader` raises Paddle's error.
"""

from __future__ import annotations

import itertools
import json
import multiprocessing
import queue
import random
import threading

__all__ = [
    "ComposeNotAligned",
    "buffered",
    "cache",
    "chain",
    "compose",
    "firstn",
    "map_readers",
    "multiprocess_reader",
    "shuffle",
    "xmap_readers",
]


class ComposeNotAligned(ValueError):
    """compose(check_alignment=True): one reader ended before the others."""


def cache(reader):
    """Read every sample now, once; the new reader replays them."""
    samples = tuple(reader())
    return lambda: iter(samples)


def shuffle(reader, buf_size: int):
    """Shuffle samples within windows of `buf_size` (Python's `random`, so `random.seed` fixes it)."""

    def shuffled():
        buf = []
        for sample in reader():
            buf.append(sample)
            if len(buf) >= buf_size:
                random.shuffle(buf)
                yield from buf
                buf = []
        random.shuffle(buf)
        yield from buf

    return shuffled


def batch(reader, batch_size: int, drop_last: bool = False):
    """Group samples into lists of `batch_size` (the last one shorter unless drop_last)."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
        raise ValueError(f"batch: batch_size expected a positive int, got {batch_size!r}")

    def batched():
        it = iter(reader())
        while chunk := list(itertools.islice(it, batch_size)):
            if len(chunk) == batch_size or not drop_last:
                yield chunk

    return batched


def chain(*readers):
    """The samples of each reader in turn."""
    return lambda: itertools.chain.from_iterable(r() for r in readers)


def firstn(reader, n: int):
    """The first `n` samples."""
    return lambda: itertools.islice(reader(), n)


def map_readers(func, *readers):
    """`func` of one sample of each reader, until the shortest ends."""
    return lambda: map(func, *(r() for r in readers))


def compose(*readers, check_alignment: bool = True):
    """One sample of each reader, joined into a flat tuple (a reader's tuple sample is spread out).
    With check_alignment, a reader ending before the others raises ComposeNotAligned; without,
    the shortest ends the composition."""
    missing = object()

    def flatten(sample):
        return sample if isinstance(sample, tuple) else (sample,)

    def composed():
        its = [r() for r in readers]
        zipped = itertools.zip_longest(*its, fillvalue=missing) if check_alignment else zip(*its)
        for parts in zipped:
            if any(p is missing for p in parts):
                raise ComposeNotAligned("outputs of readers are not aligned.")
            yield sum((flatten(p) for p in parts), ())

    return composed


class _End:
    """The last item a worker thread queues: its error, or None when its input simply ended."""

    def __init__(self, error: BaseException | None = None) -> None:
        self.error = error


def _drain(items: queue.Queue, ends: int):
    """Yield what the workers queue until `ends` of them have ended; re-raise a worker's error."""
    while ends:
        item = items.get()
        if isinstance(item, _End):
            if item.error is not None:
                raise item.error
            ends -= 1
        else:
            yield item


def _spawn(target, *args) -> None:
    threading.Thread(target=target, args=args, daemon=True).start()


def buffered(reader, size: int):
    """Read ahead on a thread, keeping up to `size` samples ready."""

    def fill(samples: queue.Queue) -> None:
        try:
            for sample in reader():
                samples.put(sample)
        except BaseException as e:  # noqa: BLE001  (the consumer raises it)
            samples.put(_End(e))
            return
        samples.put(_End())

    def buffered_reader():
        samples: queue.Queue = queue.Queue(maxsize=size)
        _spawn(fill, samples)
        yield from _drain(samples, 1)

    return buffered_reader


def xmap_readers(mapper, reader, process_num: int, buffer_size: int, order: bool = False):
    """`mapper` of each sample, computed by `process_num` threads with queues of `buffer_size`;
    with `order`, the results come in the reader's order, otherwise as they are done."""

    def read(inputs: queue.Queue, outputs: queue.Queue) -> None:
        try:
            for index, sample in enumerate(reader()):
                inputs.put((index, sample))
        except BaseException as e:  # noqa: BLE001  (the consumer raises it)
            outputs.put(_End(e))
        finally:
            for _ in range(process_num):
                inputs.put(None)

    def work(inputs: queue.Queue, outputs: queue.Queue) -> None:
        try:
            while (item := inputs.get()) is not None:
                outputs.put((item[0], mapper(item[1])))
        except BaseException as e:  # noqa: BLE001  (the consumer raises it)
            outputs.put(_End(e))
            return
        outputs.put(_End())

    def in_order(results):
        waiting, next_index = {}, 0
        for index, value in results:
            waiting[index] = value
            while next_index in waiting:
                yield waiting.pop(next_index)
                next_index += 1

    def xreader():
        inputs: queue.Queue = queue.Queue(buffer_size)
        outputs: queue.Queue = queue.Queue(buffer_size)
        _spawn(read, inputs, outputs)
        for _ in range(process_num):
            _spawn(work, inputs, outputs)
        results = _drain(outputs, process_num)
        yield from in_order(results) if order else (value for _, value in results)

    return xreader


def multiprocess_reader(readers: list, use_pipe: bool = True, queue_size: int = 1000):
    """Run each reader in a forked process and yield their samples as they come. Through pipes
    (`use_pipe`) each sample travels as JSON, as in Paddle (tuples arrive as lists); through a queue
    of `queue_size`, pickled. A sample of None, or a reader that raises, ends the read with
    ValueError."""
    if type(readers) is not list or not readers:
        raise ValueError(f"multiprocess_reader: readers expected a non-empty list, got {readers!r}")
    context = multiprocessing.get_context("fork")

    def into_queue(reader, samples) -> None:
        try:
            for sample in reader():
                if sample is None:
                    raise ValueError("sample has None")
                samples.put(sample)
            samples.put(None)
        except BaseException:
            samples.put("")
            raise

    def queue_reader():
        samples = context.Queue(queue_size)
        processes = [context.Process(target=into_queue, args=(r, samples), daemon=True) for r in readers]
        for p in processes:
            p.start()
        finished = 0
        while finished < len(readers):
            sample = samples.get()
            if sample is None:
                finished += 1
            elif isinstance(sample, str) and sample == "":
                raise ValueError("multiprocess reader raises an exception")
            else:
                yield sample
        for p in processes:
            p.join()

    def into_pipe(reader, conn) -> None:
        try:
            for sample in reader():
                if sample is None:
                    raise ValueError("sample has None!")
                conn.send(json.dumps(sample))
            conn.send(json.dumps(None))
        except BaseException:
            conn.send(json.dumps(""))
            raise
        finally:
            conn.close()

    def pipe_reader():
        conns, processes = [], []
        for reader in readers:
            parent, child = context.Pipe()
            conns.append(parent)
            processes.append(context.Process(target=into_pipe, args=(reader, child), daemon=True))
            processes[-1].start()
        while conns:
            for conn in list(conns):
                sample = json.loads(conn.recv())
                if sample is None or sample == "":
                    conn.close()
                    conns.remove(conn)
                    if sample == "":
                        raise ValueError("multiprocess reader raises an exception")
                else:
                    yield sample
        for p in processes:
            p.join()

    return pipe_reader if use_pipe else queue_reader
