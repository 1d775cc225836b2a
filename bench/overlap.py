"""Collective training steps of 2 ranks on this host with the all-reduce overlapping backward and
without, side by side in one run. Prints figures; asserts nothing.

    python bench/overlap.py                        # every model below, 31 samples each
    python bench/overlap.py --samples 201 --only 0  # the first model only, more samples

Both ranks build one MLP, transpile it for collective training (fused buckets, MODELS) and
keep two trainer programs over the same parameters: 'on' as transpiled (c_allreduce_sum with
use_calc_stream false, run on the ring's communication thread while backward goes on) and 'off'
(use_calc_stream true: each all-reduce runs where it sits). They take turns sample by sample, the
order swapped each time, so whatever else the machine is doing falls on both alike; a sample is
the mean of --steps steps. Printed: the median step time of each, and the median (and quartiles)
of off / on over the pairs of samples taken back to back, which cancels slow swings of the
machine's load that the medians keep. Each rank runs NumPy single-threaded
(OPENBLAS/OMP/MKL_NUM_THREADS=1): two ranks on a small host is the case this is about, and BLAS
threads would otherwise compete with the other rank.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

from local_jobs import endpoints as local_endpoints

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
# (label, hidden sizes, batch per rank, fused bucket MiB; 0: one all-reduce per gradient)
MODELS = [
    ("784-64-64-10, b 8, unfused", (64, 64), 8, 0.0),
    ("784-1024-1024-10, b 32", (1024, 1024), 32, 8.0),
    ("784-2048-2048-10, b 16", (2048, 2048), 16, 8.0),
    ("784-2048x3-10, b 64", (2048, 2048, 2048), 64, 8.0),
    ("784-2048x3-10, b 64, 32 MiB", (2048, 2048, 2048), 64, 32.0),
]
WARMUP_STEPS = 3
TIMEOUT_S = 600


def worker(rank: int, endpoints: list[str], hidden: tuple, batch: int, samples: int, steps: int, fuse_mb: float):
    sys.path.insert(0, REPO)
    import numpy as np

    import fleetgraph as paddle
    from fleetgraph.transpiler import DistributeTranspiler, DistributeTranspilerConfig

    main, startup = paddle.static.Program(), paddle.static.Program()
    main.random_seed = startup.random_seed = 1
    with paddle.static.program_guard(main, startup):
        image = paddle.static.data(name="image", shape=[None, 784], dtype="float32")
        label = paddle.static.data(name="label", shape=[None, 1], dtype="int64")
        h = image
        for size in hidden:
            h = paddle.static.nn.fc(h, size=size, activation="relu")
        loss = paddle.nn.functional.cross_entropy(paddle.static.nn.fc(h, size=10), label)
        paddle.optimizer.Momentum(learning_rate=0.01, momentum=0.9).minimize(loss)
    config = DistributeTranspilerConfig()
    config.mode, config.fuse_all_reduce_ops, config.fuse_grad_size_in_MB = "collective", fuse_mb > 0, fuse_mb
    t = DistributeTranspiler(config)
    t.transpile(
        rank, program=main, trainers=",".join(endpoints), current_endpoint=endpoints[rank], startup_program=startup
    )
    on = t.get_trainer_program()
    off = on.clone()
    for op in off.global_block().ops:
        if op.type == "c_allreduce_sum":
            op.attrs["use_calc_stream"] = True
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    rng = np.random.default_rng(rank)
    feed = {
        "image": rng.standard_normal((batch, 784)).astype("float32"),
        "label": rng.integers(0, 10, (batch, 1)).astype("int64"),
    }
    programs = {"on": on, "off": off}
    for program in programs.values():
        for _ in range(WARMUP_STEPS):
            exe.run(program, feed=feed, fetch_list=[loss])
    times: dict[str, list[float]] = {"on": [], "off": []}
    for sample in range(samples):
        for name in ("on", "off") if sample % 2 == 0 else ("off", "on"):
            start = time.perf_counter()
            for _ in range(steps):
                exe.run(programs[name], feed=feed, fetch_list=[loss])
            times[name].append((time.perf_counter() - start) / steps)
    buckets = sum(op.type == "c_allreduce_sum" for op in on.global_block().ops)
    grads = sum(int(np.prod(p.shape)) for p in main.all_parameters())
    if rank == 0:
        on_s, off_s = statistics.median(times["on"]), statistics.median(times["off"])
        # the samples of a pair ran back to back: their ratio cancels what the load did meanwhile
        ratios = sorted(off / on for on, off in zip(times["on"], times["off"]))
        low, high = ratios[len(ratios) // 4], ratios[(3 * len(ratios)) // 4]
        print(
            f"{on_s * 1e3:.2f} {off_s * 1e3:.2f} {statistics.median(ratios):.3f} {low:.2f} {high:.2f} {buckets} {grads}"
        )
    exe.close()


def run_pair(hidden: tuple, batch: int, fuse_mb: float, args) -> list[str]:
    endpoints = ",".join(local_endpoints(2))
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    common = ["--endpoints", endpoints, "--hidden", ",".join(map(str, hidden)), "--batch", str(batch)]
    common += ["--samples", str(args.samples), "--steps", str(args.steps), "--fuse_mb", str(fuse_mb)]
    procs = [
        subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--worker", str(r), *common],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for r in range(2)
    ]
    outputs = []
    try:
        for proc in procs:
            outputs.append(proc.communicate(timeout=TIMEOUT_S)[0])
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    if any(proc.returncode for proc in procs):
        raise RuntimeError("a rank failed:\n" + "\n".join(o[-3000:] for o in outputs))
    return outputs[0].split()[-7:]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=31)
    parser.add_argument("--steps", type=int, default=1, help="steps per sample")
    parser.add_argument("--fuse_mb", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--only", type=int, action="append", help="index into MODELS (repeatable)")
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--endpoints", help=argparse.SUPPRESS)
    parser.add_argument("--hidden", help=argparse.SUPPRESS)
    parser.add_argument("--batch", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker is not None:
        hidden = tuple(int(h) for h in args.hidden.split(","))
        worker(args.worker, args.endpoints.split(","), hidden, args.batch, args.samples, args.steps, args.fuse_mb)
        return
    print(
        f"collective step time, 2 ranks on 127.0.0.1 ({os.cpu_count()} CPUs), Momentum; "
        f"median of {args.samples} samples of {args.steps} steps"
    )
    print(
        f"{'model':<30} {'gradients':>10} {'all-reduces':>11} {'overlap on':>11} {'overlap off':>12} "
        f"{'off / on':>9} {'(quartiles)':>12}"
    )
    for label, hidden, batch, fuse_mb in [m for i, m in enumerate(MODELS) if not args.only or i in args.only]:
        on, off, ratio, low, high, buckets, grads = run_pair(hidden, batch, fuse_mb, args)
        print(
            f"{label:<30} {int(grads) / 1e6:9.1f}M {buckets:>11} {on:>8} ms {off:>9} ms {float(ratio):8.2f}x "
            f"({low}-{high})"
        )


if __name__ == "__main__":
    main()
