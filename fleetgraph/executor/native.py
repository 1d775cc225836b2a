"""The process's C libraries, tuned for the executor: the C allocator (glibc) and the BLAS pool.

Kernels allocate a fresh output array per op. glibc serves an allocation above its mmap threshold
(128 KiB at first) with a fresh mmap, whose pages fault in one by one and go back to the system
on free: a 784-512-512-10 MLP at batch 256 spent a third of its step in page faults (86 steps/s;
157 with the thresholds below), and two threads allocating at once serialize on the process's
memory map. `tune_allocator` raises the mmap threshold to 32 MiB and keeps up to 64 MiB of freed
heap for reuse, once per process, unless the user set glibc's MALLOC_* variables.
"""

from __future__ import annotations

import contextlib
import ctypes
import os

MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 64 << 20
MALLOC_ARENAS = 2
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD, _M_ARENA_MAX = -1, -3, -8  # glibc's mallopt parameters

_tuned = False
_controller = None


def _mallopt(param: int, value: int) -> None:
    try:
        ctypes.CDLL(None).mallopt(param, value)
    except (OSError, AttributeError):  # not glibc: nothing to tune
        pass


def tune_allocator() -> None:
    global _tuned
    if _tuned:
        return
    _tuned = True
    if not any(k.startswith("MALLOC_") and k.endswith("_THRESHOLD_") for k in os.environ):
        _mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
        _mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)


def few_malloc_arenas() -> None:
    """glibc gives each new thread an allocation arena of its own (up to 8 per core), and buffers a
    thread freed stay in its arena: ten training threads grew a GEO trainer from 320 to 570 MB. At most
    MALLOC_ARENAS arenas (what MALLOC_ARENA_MAX=2 sets) keep it at 360 MB; elsewhere, a no-op."""
    _mallopt(_M_ARENA_MAX, MALLOC_ARENAS)


@contextlib.contextmanager
def one_blas_thread_each(limit: bool):
    """With several threads computing, the BLAS library runs each product on one core: a pool of its
    own per product would only fight the threads for cores."""
    global _controller
    if not limit:
        yield
        return
    few_malloc_arenas()
    if _controller is None:  # finding the loaded libraries costs a millisecond: once per process
        from threadpoolctl import ThreadpoolController

        _controller = ThreadpoolController()
    with _controller.limit(limits=1, user_api="blas"):
        yield
