"""Data parallelism in one process (CompiledProgram.with_data_parallel, CPU_NUM=2) against one
thread and against the plain executor with BLAS on every core, on the same total batch, in one run;
medians of 5, with the range.

    python bench/parallel_executor.py [--batch 256] [--steps 20]

The model: a 784-512-512-10 MLP with SGD. "one thread": the plain executor with the BLAS library
held to one thread (its default, fleetgraph/executor/native.py); "BLAS on all cores": the plain
executor with the BLAS pool as wide as the host; "2 replicas": CPU_NUM=2, each replica on its own
thread with one BLAS thread, gradients averaged.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import fleetgraph as paddle  # noqa: E402
import fleetgraph.fluid as fluid  # noqa: E402

REPEATS = 5


def build():
    main, startup = paddle.static.Program(), paddle.static.Program()
    main.random_seed = startup.random_seed = 1
    with paddle.static.program_guard(main, startup):
        image = paddle.static.data(name="image", shape=[None, 784], dtype="float32")
        label = paddle.static.data(name="label", shape=[None, 1], dtype="int64")
        h = image
        for size in (512, 512):
            h = paddle.static.nn.fc(h, size=size, activation="relu")
        loss = paddle.nn.functional.cross_entropy(paddle.static.nn.fc(h, size=10), label)
        paddle.optimizer.SGD(0.01).minimize(loss)
    return main, startup, loss


def steps_per_second(how: str, batch: int, steps: int) -> float:
    main, startup, loss = build()
    scope = paddle.static.Scope()
    exe = paddle.static.Executor()
    exe.run(startup, scope=scope)
    program = main
    if how == "2 replicas":
        os.environ["CPU_NUM"] = "2"
        program = fluid.compiler.CompiledProgram(main).with_data_parallel(loss_name=loss.name)
    rng = np.random.default_rng(0)
    feed = {
        "image": rng.random((batch, 784), dtype=np.float32),
        "label": rng.integers(0, 10, (batch, 1)),
    }
    limit = threadpool_limits(limits=os.cpu_count() if how == "BLAS on all cores" else 1, user_api="blas")
    try:
        exe.run(program, feed=feed, fetch_list=[loss], scope=scope)
        started = time.perf_counter()
        for _ in range(steps):
            exe.run(program, feed=feed, fetch_list=[loss], scope=scope)
        return steps / (time.perf_counter() - started)
    finally:
        limit.restore_original_limits()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--steps", type=int, default=20)
    args = p.parse_args()
    hows = ["one thread", "BLAS on all cores", "2 replicas"]
    runs = {h: [] for h in hows}
    for _ in range(REPEATS):  # alternating, so the machine's load falls on each alike
        for h in hows:
            runs[h].append(steps_per_second(h, args.batch, args.steps))
    base = statistics.median(runs["one thread"])
    print(f"MLP 784-512-512-10, SGD, total batch {args.batch}, {os.cpu_count()} cores; medians of {REPEATS}")
    for h in hows:
        m = statistics.median(runs[h])
        print(
            f"  {h:<17} {m:7.1f} steps/s (range {min(runs[h]):.1f}-{max(runs[h]):.1f})  "
            f"{m * args.batch:9.0f} samples/s  {m / base:4.2f}x one thread"
        )


if __name__ == "__main__":
    main()
