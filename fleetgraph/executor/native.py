"""The process's C libraries, tuned for the executor: the C allocator (glibc) and the BLAS pool.

Kernels allocate a fresh output array per op. glibc serves an allocation above its mmap threshold
(128 KiB at first) with a fresh mmap, whose pages fault in one by one and go back to the system
on free: a 784-512-512-10 MLP at batch 256 spent a third of its step in page faults (86 steps/s;
157 with the thresholds below), and two threads allocating at once serialize on the process's
memory map. `tune_allocator` raises the mmap threshold to 32 MiB and keeps up to 64 MiB of freed
heap for reuse, once per process, unless the user set glibc's MALLOC_* variables.

The BLAS library starts a pool as wide as the host, whose threads spin while they wait: on two
cores shared with other work, a 784-512-512-10 MLP step ran at half the speed or less with two BLAS
threads than with one (medians; alone on a quiet host two were up to 1.5 times faster; see
bench/blas_threads.py). `tune_blas_threads` holds the pool to BLAS_THREADS unless OMP_NUM_THREADS,
OPENBLAS_NUM_THREADS or MKL_NUM_THREADS is set: the user's setting, or the launcher's share of the
cores for each of a host's processes, which the library read when it loaded.
"""

from __future__ import annotations

import contextlib
import ctypes
import os

MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 64 << 20
MALLOC_ARENAS = 2
BLAS_THREADS = 1
THREAD_POOL_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
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


def tune_blas_threads() -> None:
    """Once per process, at import; `one_blas_thread_each` and threadpoolctl can change it later."""
    if not any(name in os.environ for name in THREAD_POOL_VARS):
        _blas_controller().limit(limits=BLAS_THREADS, user_api="blas")  # kept for the process's life


def _blas_controller():
    global _controller
    if _controller is None:  # finding the loaded libraries costs a millisecond: once per process
        from threadpoolctl import ThreadpoolController

        _controller = ThreadpoolController()
    return _controller


def few_malloc_arenas() -> None:
    """glibc gives each new thread an allocation arena of its own (up to 8 per core), and buffers a
    thread freed stay in its arena: ten training threads grew a GEO trainer from 320 to 570 MB. At most
    MALLOC_ARENAS arenas (what MALLOC_ARENA_MAX=2 sets) keep it at 360 MB; elsewhere, a no-op."""
    _mallopt(_M_ARENA_MAX, MALLOC_ARENAS)


@contextlib.contextmanager
def one_blas_thread_each(limit: bool):
    """With several threads computing, the BLAS library runs each product on one core: a pool of its
    own per product would only fight the threads for cores."""
    if not limit:
        yield
        return
    few_malloc_arenas()
    with _blas_controller().limit(limits=1, user_api="blas"):
        yield
