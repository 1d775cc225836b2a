"""Per-op overhead of eager execution: fleetgraph's dynamic mode next to PyTorch eager and Paddle
dygraph, each in its own interpreter, on the same CPU in the same run.

    python bench/eager_overhead.py [--torch-python PY] [--paddle-python PY] [--baseline DIR]
                                   [--reps 5] [--n 20000] [--clock cpu]

PY is the python of a virtual environment holding torch (or paddle); leave one out to skip that
framework. DIR is another fleetgraph checkout (`git worktree add DIR COMMIT`), timed in a column of
its own beside this one, to see what a change did. Every case runs on 8x8 float32 tensors, so the
arithmetic is a fraction of a microsecond and what is measured is the framework's cost per call:
x + y, x * 2, relu, matmul and mean without gradients, x * w with w needing one (the op is recorded),
and a whole step of an 8 -> 8 -> 1 MLP (forward, mean, backward: 5 ops and their gradients). Figures
are medians (with the lowest and highest) over --reps runs of --n calls (--n / 10 steps for the
MLP), in microseconds per call (per step for the last row), one thread each (OMP / BLAS pools of 1),
timed by the worker's CPU time (--clock cpu, the default: what the call costs, steady while other
work shares the cores) or by the wall clock (--clock wall). The frameworks run side by side, each in
a worker process, and take turns case by case (each rep runs every case in every framework before
the next), so a burst of load elsewhere hits all of them alike; with --baseline, the last column is
this checkout's change against it (+ faster). Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import sys

from side_by_side import Worker, change, checkout_env, median_spread, take_turns

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# One program for all three: `fw` is the framework's module, `t(array, grad)` makes a tensor.
CASES = r"""
import json, statistics, sys, time
import numpy as np
name, n, clock = sys.argv[1], int(sys.argv[2]), getattr(time, sys.argv[3])
if name == "torch":
    import torch as fw
    torch = fw
    torch.set_num_threads(1)
    t = lambda a, grad=False: torch.tensor(a, requires_grad=grad)
    relu, mean = torch.relu, torch.mean
    no_grad = torch.no_grad
else:
    if name == "paddle":
        import paddle as fw
    else:
        import fleetgraph as fw
    t = lambda a, grad=False: fw.to_tensor(a, stop_gradient=not grad)
    relu, mean = fw.nn.functional.relu, fw.mean
    no_grad = fw.no_grad
rng = np.random.default_rng(0)
x, y = t(rng.normal(size=(8, 8)).astype("float32")), t(rng.normal(size=(8, 8)).astype("float32"))
w = t(rng.normal(size=(8, 8)).astype("float32"), True)
w1, w2 = t(rng.normal(size=(8, 8)).astype("float32"), True), t(rng.normal(size=(8, 1)).astype("float32"), True)

def step():
    loss = mean(fw.matmul(relu(fw.matmul(x, w1)), w2))
    loss.backward()

cases = {
    "x + y": lambda: x + y,
    "x * 2.0": lambda: x * 2.0,
    "relu(x)": lambda: relu(x),
    "matmul(x, y)": lambda: fw.matmul(x, y),
    "mean(x)": lambda: mean(x),
    "x * w (recorded)": lambda: x * w,
    "MLP step (fwd+bwd)": step,
}
for fn in cases.values():  # warm up
    for _ in range(200):
        fn()
print("ready", flush=True)
for line in sys.stdin:  # one case label a line: its microseconds per call over `calls` calls
    label = line.strip()
    fn = cases[label]
    calls = n if label != "MLP step (fwd+bwd)" else max(1, n // 10)
    t0 = clock()
    for _ in range(calls):
        fn()
    print(json.dumps((clock() - t0) / calls * 1e6), flush=True)
"""


LABELS = ("x + y", "x * 2.0", "relu(x)", "matmul(x, y)", "mean(x)", "x * w (recorded)", "MLP step (fwd+bwd)")


def worker(python: str, name: str, n: int, clock: str, repo: str = REPO) -> Worker:
    """One framework's interpreter running CASES (`python -c` puts its working directory, the
    checkout, first on sys.path)."""
    return Worker(name, [python, "-c", CASES, name, str(n), clock], checkout_env(repo), repo)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--torch-python", help="python of an environment with torch")
    p.add_argument("--paddle-python", help="python of an environment with paddle")
    p.add_argument("--baseline", help="another fleetgraph checkout (an earlier commit) to time beside this one")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--n", type=int, default=20000)
    p.add_argument(
        "--clock",
        choices=("cpu", "wall"),
        default="cpu",
        help="cpu: the worker's CPU time (process_time; steady while others load the machine); wall: perf_counter",
    )
    args = p.parse_args()
    runs = {"fleetgraph": sys.executable, "torch": args.torch_python, "paddle": args.paddle_python}
    clock = {"cpu": "process_time", "wall": "perf_counter"}[args.clock]
    workers = [worker(py, name, args.n, clock) for name, py in runs.items() if py]
    if args.baseline:
        workers.insert(0, worker(sys.executable, "baseline", args.n, clock, os.path.abspath(args.baseline)))
    times = take_turns(workers, LABELS, args.reps)
    print(f"us per call ({args.clock}), median of {args.reps} (lowest-highest)")
    print(f"{'':<20}" + "".join(f"{w.name:>22}" for w in workers) + ("  vs baseline" if args.baseline else ""))
    for label in LABELS:
        row = f"{label:<20}" + "".join(f"{median_spread(times[w.name, label]):>22}" for w in workers)
        if args.baseline:
            row += f"  {change(times['fleetgraph', label], times['baseline', label], higher_is_better=False):>11}"
        print(row)
    if args.baseline:
        print("vs baseline: + faster, - slower than the baseline checkout (its median over this one's)")


if __name__ == "__main__":
    main()
