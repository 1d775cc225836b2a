"""The MLP training step with one BLAS thread against one per core, alone and beside a busy process.

    python bench/blas_threads.py [--samples 9] [--steps 30] [--batch 128]

The model is bench/executor_overhead.py's (784-512-512-10, Adam, batch 128). Each sample times
`steps` steps with the BLAS pool held to each thread count in turn, so the host's load falls on
both alike; first with nothing of ours beside it, then with one `while True: pass` process running
(started here and stopped at the end). The executor's default BLAS thread count
(fleetgraph/executor/native.py, BLAS_THREADS) rests on these figures.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

from threadpoolctl import threadpool_limits

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import executor_overhead as bench  # noqa: E402

BUSY_LIMIT_S = 900  # the busy process ends by itself after this, should this script be killed


def _busy_process() -> subprocess.Popen:
    loop = f"import time\nend = time.monotonic() + {BUSY_LIMIT_S}\nwhile time.monotonic() < end: pass"
    return subprocess.Popen([sys.executable, "-c", loop])


def _samples(counts: list[int], samples: int, steps: int, batch: int) -> dict[int, list[float]]:
    """{BLAS threads: steps/s of each sample}, the counts taking turns sample by sample."""
    main, startup, feed, loss = bench.mlp_program(batch)
    exe = bench.paddle.static.Executor(bench.paddle.CPUPlace())
    scope = bench.paddle.static.Scope()
    exe.run(startup, scope=scope)
    for _ in range(5):
        exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
    figures: dict[int, list[float]] = {n: [] for n in counts}
    for _ in range(samples):
        for n in counts:
            with threadpool_limits(limits=n, user_api="blas"):
                started = time.perf_counter()
                for _ in range(steps):
                    exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
                figures[n].append(steps / (time.perf_counter() - started))
    return figures


def _line(label: str, n: int, values: list[float]) -> str:
    q = statistics.quantiles(values, n=4)
    return (
        f"{label:<30} {n} BLAS thread(s): median {statistics.median(values):7.1f} steps/s"
        f"  quartiles {q[0]:6.1f}-{q[2]:6.1f}  range {min(values):6.1f}-{max(values):6.1f}"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--samples", type=int, default=9)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--batch", type=int, default=128)
    args = p.parse_args()
    bench.paddle.enable_static()
    cores = os.cpu_count() or 1
    counts = sorted({1, cores})
    print(f"MLP 784-512-512-10, Adam, batch {args.batch}, {cores} cores; {args.samples} samples of {args.steps} steps")
    for label, busy in (("alone", False), ("beside one busy process", True)):
        spinner = _busy_process() if busy else None
        try:
            figures = _samples(counts, args.samples, args.steps, args.batch)
        finally:
            if spinner is not None:
                spinner.kill()
                spinner.wait()
        for n in counts:
            print(_line(label, n, figures[n]))
        print(f"{'':<30} load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
