"""Reader decorators: a reader is a function returning an iterable of samples."""

from __future__ import annotations

import itertools
import random


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
    if not isinstance(batch_size, int) or batch_size <= 0:
        raise ValueError(f"batch: batch_size expected a positive int, got {batch_size!r}")

    def batched():
        it = iter(reader())
        while chunk := list(itertools.islice(it, batch_size)):
            if len(chunk) == batch_size or not drop_last:
                yield chunk

    return batched


def chain(*readers):
    return lambda: itertools.chain.from_iterable(r() for r in readers)


def firstn(reader, n: int):
    return lambda: itertools.islice(reader(), n)


def map_readers(func, *readers):
    return lambda: map(func, *(r() for r in readers))


def compose(*readers, check_alignment: bool = True):
    def flatten(sample):
        return sample if isinstance(sample, tuple) else (sample,)

    def composed():
        its = [r() for r in readers]
        zipped = zip(*its, strict=check_alignment) if check_alignment else zip(*its)
        for parts in zipped:
            yield sum((flatten(p) for p in parts), ())

    return composed
