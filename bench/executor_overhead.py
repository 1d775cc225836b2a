"""Executor overhead and small-model throughput, medians of 5 runs.

    python bench/executor_overhead.py                      # fleetgraph
    BENCH_FRAMEWORK=paddle python bench/executor_overhead.py   # the same script on PaddlePaddle
    python bench/executor_overhead.py --compare OTHER_PYTHON   # both, side by side; OTHER_PYTHON has paddle

Figures: microseconds per op for 200 `scale` ops on a shape-[1] tensor; steps/s of fit_a_line
(batch 20, SGD) and of a 784-512-512-10 MLP (batch 128, Adam).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

FRAMEWORK = os.environ.get("BENCH_FRAMEWORK", "fleetgraph")
if FRAMEWORK == "paddle":
    import paddle
else:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import fleetgraph as paddle

REPEATS = 5


def _median_of(fn) -> float:
    return statistics.median(fn() for _ in range(REPEATS))


def _programs():
    main, startup = paddle.static.Program(), paddle.static.Program()
    main.random_seed = startup.random_seed = 1
    return main, startup


def per_op_overhead_us(n_ops: int = 200, runs: int = 200) -> float:
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

    def once():
        t = time.perf_counter()
        for _ in range(runs):
            exe.run(main, feed=feed, fetch_list=[h])
        return (time.perf_counter() - t) / (runs * n_ops) * 1e6

    return _median_of(once)


def fit_a_line_steps_per_s(batch: int = 20, steps: int = 1000) -> float:
    main, startup = _programs()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data(name="x", shape=[None, 13], dtype="float32")
        y = paddle.static.data(name="y", shape=[None, 1], dtype="float32")
        pred = paddle.static.nn.fc(x, size=1)
        loss = paddle.mean(paddle.nn.functional.square_error_cost(pred, y))
        paddle.optimizer.SGD(learning_rate=0.001).minimize(loss)
    rng = np.random.default_rng(0)
    feed = {"x": rng.normal(size=(batch, 13)).astype("float32"), "y": rng.normal(size=(batch, 1)).astype("float32")}
    return _steps_per_s(main, startup, feed, loss, steps)


def mlp_steps_per_s(batch: int = 128, steps: int = 30) -> float:
    return _steps_per_s(*mlp_program(batch), steps)


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


def _steps_per_s(main, startup, feed, loss, steps) -> float:
    exe = paddle.static.Executor(paddle.CPUPlace())
    scope = paddle.static.Scope()
    with paddle.static.scope_guard(scope):
        exe.run(startup)
        for _ in range(5):
            exe.run(main, feed=feed, fetch_list=[loss])

        def once():
            t = time.perf_counter()
            for _ in range(steps):
                exe.run(main, feed=feed, fetch_list=[loss])
            return steps / (time.perf_counter() - t)

        return _median_of(once)


def measure() -> dict:
    paddle.enable_static()
    return {
        "per_op_us": per_op_overhead_us(),
        "fit_a_line_steps_per_s": fit_a_line_steps_per_s(),
        "mlp_steps_per_s": mlp_steps_per_s(),
    }


LABELS = {
    "per_op_us": "executor overhead, us/op (200 scale ops, shape [1])",
    "fit_a_line_steps_per_s": "fit_a_line steps/s (batch 20, SGD)",
    "mlp_steps_per_s": "MLP 784-512-512-10 steps/s (batch 128, Adam)",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--compare", metavar="PYTHON", help="an interpreter with paddle installed")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    if not args.compare:
        figures = measure()
        if args.json:
            print(json.dumps(figures))
        else:
            for key, value in figures.items():
                print(f"{FRAMEWORK:>10}  {LABELS[key]:<50} {value:10.2f}")
        return
    env = dict(os.environ, BENCH_FRAMEWORK="paddle", GLOG_minloglevel="2")
    theirs_text = subprocess.run(
        [args.compare, os.path.abspath(__file__), "--json"], env=env, check=True, capture_output=True, text=True
    ).stdout
    theirs = json.loads(theirs_text.strip().splitlines()[-1])
    ours = measure()
    print(f"{'figure':<50} {'fleetgraph':>11} {'paddle':>11} {'ratio':>7}")
    for key in LABELS:
        ratio = theirs[key] / ours[key] if key == "per_op_us" else ours[key] / theirs[key]
        print(f"{LABELS[key]:<50} {ours[key]:11.2f} {theirs[key]:11.2f} {ratio:6.2f}x")
    print("ratio: how many times better fleetgraph is (lower us/op, higher steps/s)")


if __name__ == "__main__":
    main()
