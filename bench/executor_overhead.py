"""Executor overhead and small-model throughput: medians of 5 runs, with the lowest and highest.

    python bench/executor_overhead.py                      # fleetgraph
    BENCH_FRAMEWORK=paddle python bench/executor_overhead.py   # the same script on PaddlePaddle
    python bench/executor_overhead.py --compare OTHER_PYTHON   # both, side by side; OTHER_PYTHON has paddle
    python bench/executor_overhead.py --baseline DIR [--reps 5]  # this checkout beside another

Figures: microseconds per op for 200 `scale` ops on a shape-[1] tensor; steps/s of fit_a_line
(batch 20, SGD) and of a 784-512-512-10 MLP (batch 128, Adam). Each is timed by the process's CPU
time (--clock cpu, the default: steady while other work shares the cores; the executor holds the
BLAS pool to one thread, so it is the wall time of an idle machine) or by the wall clock
(--clock wall). DIR is another fleetgraph checkout (`git worktree add DIR COMMIT`): each checkout
runs in a worker interpreter of its own that builds the programs once, and the two take turns
figure by figure, rep by rep, so a burst of load elsewhere hits both alike; the last column is this
checkout's change against DIR (+ faster).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

import numpy as np

FRAMEWORK = os.environ.get("BENCH_FRAMEWORK", "fleetgraph")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if FRAMEWORK == "paddle":
    import paddle
else:
    sys.path.append(REPO)  # after PYTHONPATH, where a --baseline worker finds its checkout
    import fleetgraph as paddle

from side_by_side import Worker, change, checkout_env, median_spread, take_turns  # noqa: E402

REPEATS = 5
CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}
Clock = Callable[[], float]


def _programs():
    main, startup = paddle.static.Program(), paddle.static.Program()
    main.random_seed = startup.random_seed = 1
    return main, startup


def per_op_overhead_us(clock: Clock, n_ops: int = 200, runs: int = 200) -> Callable[[], float]:
    """A timer of one run of the per-op figure, the program built and warmed up."""
    main, startup = _programs()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data(name="x", shape=[1], dtype="float32")
        h = x
        for _ in range(n_ops):
            h = paddle.scale(h, scale=1.0001)
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    feed = {"x": np.ones([1], dtype="float32")}
    for _ in range(10):
        exe.run(main, feed=feed, fetch_list=[h])

    def once() -> float:
        t = clock()
        for _ in range(runs):
            exe.run(main, feed=feed, fetch_list=[h])
        return (clock() - t) / (runs * n_ops) * 1e6

    return once


def fit_a_line_steps_per_s(clock: Clock, batch: int = 20, steps: int = 1000) -> Callable[[], float]:
    main, startup = _programs()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data(name="x", shape=[None, 13], dtype="float32")
        y = paddle.static.data(name="y", shape=[None, 1], dtype="float32")
        pred = paddle.static.nn.fc(x, size=1)
        loss = paddle.mean(paddle.nn.functional.square_error_cost(pred, y))
        paddle.optimizer.SGD(learning_rate=0.001).minimize(loss)
    rng = np.random.default_rng(0)
    feed = {"x": rng.normal(size=(batch, 13)).astype("float32"), "y": rng.normal(size=(batch, 1)).astype("float32")}
    return _steps_per_s(main, startup, feed, loss, steps, clock)


def mlp_steps_per_s(clock: Clock, batch: int = 128, steps: int = 30) -> Callable[[], float]:
    return _steps_per_s(*mlp_program(batch), steps, clock)


def mlp_program(batch: int = 128):
    """The 784-512-512-10 MLP with Adam: main, startup, a feed of `batch` rows, the loss."""
    main, startup = _programs()
    with paddle.static.program_guard(main, startup):
        image = paddle.static.data(name="image", shape=[None, 784], dtype="float32")
        label = paddle.static.data(name="label", shape=[None, 1], dtype="int64")
        h = paddle.static.nn.fc(image, size=512, activation="relu")
        h = paddle.static.nn.fc(h, size=512, activation="relu")
        logits = paddle.static.nn.fc(h, size=10)
        loss = paddle.nn.functional.cross_entropy(logits, label)
        paddle.optimizer.Adam(learning_rate=0.001).minimize(loss)
    rng = np.random.default_rng(0)
    feed = {
        "image": rng.normal(size=(batch, 784)).astype("float32"),
        "label": rng.integers(0, 10, size=(batch, 1)).astype("int64"),
    }
    return main, startup, feed, loss


def _steps_per_s(main, startup, feed, loss, steps: int, clock: Clock) -> Callable[[], float]:
    """A timer of `steps` steps of `main` in a scope of its own, after 5 to warm up."""
    exe = paddle.static.Executor(paddle.CPUPlace())
    scope = paddle.static.Scope()
    exe.run(startup, scope=scope)
    for _ in range(5):
        exe.run(main, feed=feed, fetch_list=[loss], scope=scope)

    def once() -> float:
        t = clock()
        for _ in range(steps):
            exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
        return steps / (clock() - t)

    return once


def timers(clock: Clock) -> dict[str, Callable[[], float]]:
    """Each figure's timer, every program built and warmed up."""
    paddle.enable_static()
    return {
        "per_op_us": per_op_overhead_us(clock),
        "fit_a_line_steps_per_s": fit_a_line_steps_per_s(clock),
        "mlp_steps_per_s": mlp_steps_per_s(clock),
    }


def measure(clock: Clock, reps: int = REPEATS) -> dict[str, list[float]]:
    """Every figure `reps` times."""
    return {key: [once() for _ in range(reps)] for key, once in timers(clock).items()}


def serve(clock: Clock) -> None:
    """A --baseline worker: ready once the programs are built, then one figure per key on stdin."""
    once = timers(clock)
    print("ready", flush=True)
    for line in sys.stdin:
        print(json.dumps(once[line.strip()]()), flush=True)


LABELS = {
    "per_op_us": "executor overhead, us/op (200 scale ops, shape [1])",
    "fit_a_line_steps_per_s": "fit_a_line steps/s (batch 20, SGD)",
    "mlp_steps_per_s": "MLP 784-512-512-10 steps/s (batch 128, Adam)",
}
DIGITS = {"per_op_us": 2, "fit_a_line_steps_per_s": 0, "mlp_steps_per_s": 1}


def side_by_side(baseline: str, clock: str, reps: int) -> None:
    """This checkout's figures beside `baseline`'s, each checkout in a worker of its own."""
    argv = [sys.executable, os.path.abspath(__file__), "--serve", "--clock", clock]
    checkouts = (("baseline", baseline), ("fleetgraph", REPO))
    workers = [Worker(name, argv, checkout_env(repo), repo) for name, repo in checkouts]
    figures = take_turns(workers, LABELS, reps)
    print(f"{f'median of {reps} (lowest-highest), {clock} time':<50} {'baseline':>24} {'fleetgraph':>24}  vs baseline")
    for key, label in LABELS.items():
        ours, theirs = figures["fleetgraph", key], figures["baseline", key]
        speed = change(ours, theirs, higher_is_better=key != "per_op_us")
        digits = DIGITS[key]
        print(f"{label:<50} {median_spread(theirs, digits):>24} {median_spread(ours, digits):>24}  {speed:>11}")
    print("vs baseline: + faster, - slower than the baseline checkout")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--compare", metavar="PYTHON", help="an interpreter with paddle installed")
    parser.add_argument("--baseline", metavar="DIR", help="another fleetgraph checkout to time beside this one")
    parser.add_argument("--reps", type=int, default=REPEATS, help="runs of each figure")
    parser.add_argument("--clock", choices=tuple(CLOCKS), default="cpu", help="cpu: process_time; wall: perf_counter")
    parser.add_argument("--json", action="store_true", help="print the figures' medians as JSON")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    clock = CLOCKS[args.clock]
    if args.serve:
        serve(clock)
        return
    if args.baseline:
        side_by_side(os.path.abspath(args.baseline), args.clock, args.reps)
        return
    if not args.compare:
        figures = measure(clock, args.reps)
        if args.json:
            print(json.dumps({key: statistics.median(values) for key, values in figures.items()}))
        else:
            for key, values in figures.items():
                print(f"{FRAMEWORK:>10}  {LABELS[key]:<50} {median_spread(values, DIGITS[key]):>24}")
        return
    env = dict(os.environ, BENCH_FRAMEWORK="paddle", GLOG_minloglevel="2")
    theirs_text = subprocess.run(
        [args.compare, os.path.abspath(__file__), "--json", "--clock", args.clock, "--reps", str(args.reps)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    theirs = json.loads(theirs_text.strip().splitlines()[-1])
    ours = {key: statistics.median(values) for key, values in measure(clock, args.reps).items()}
    print(f"{'figure':<50} {'fleetgraph':>11} {'paddle':>11} {'ratio':>7}")
    for key in LABELS:
        ratio = theirs[key] / ours[key] if key == "per_op_us" else ours[key] / theirs[key]
        print(f"{LABELS[key]:<50} {ours[key]:11.2f} {theirs[key]:11.2f} {ratio:6.2f}x")
    print("ratio: how many times better fleetgraph is (lower us/op, higher steps/s)")


if __name__ == "__main__":
    main()
