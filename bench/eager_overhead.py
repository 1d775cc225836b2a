"""Per-op overhead of eager execution: fleetgraph's dynamic mode next to PyTorch eager and Paddle
dygraph, each in its own interpreter, on the same CPU in the same run.

    python bench/eager_overhead.py [--torch-python PY] [--paddle-python PY] [--reps 5] [--n 20000]

PY is the python of a virtual environment holding torch (or paddle); leave one out to skip that
framework. Every case runs on 8x8 float32 tensors, so the arithmetic is a fraction of a microsecond
and what is measured is the framework's cost per call: x + y, x * 2, relu, matmul and mean without
gradients, x * w with w needing one (the op is recorded), and a whole step of an 8 -> 8 -> 1 MLP
(forward, mean, backward: 5 ops and their gradients). Figures are medians over --reps runs of --n
calls, in microseconds per call (per step for the last row), one thread each (OMP / BLAS pools of
1). Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# One program for all three: `fw` is the framework's module, `t(array, grad)` makes a tensor.
CASES = r"""
import json, statistics, sys, time
import numpy as np
name, reps, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
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
out = {}
for label, fn in cases.items():
    calls = n if label != "MLP step (fwd+bwd)" else max(1, n // 10)
    for _ in range(200):
        fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - t0) / calls * 1e6)
    out[label] = statistics.median(times)
print(json.dumps(out))
"""


def measure(python: str, name: str, reps: int, n: int) -> dict[str, float]:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    if name == "fleetgraph":
        env["PYTHONPATH"] = REPO + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run(
        [python, "-c", CASES, name, str(reps), str(n)], env=env, capture_output=True, text=True, timeout=900
    )
    if done.returncode != 0:
        raise SystemExit(f"{name} ({python}) failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--torch-python", help="python of an environment with torch")
    p.add_argument("--paddle-python", help="python of an environment with paddle")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--n", type=int, default=20000)
    args = p.parse_args()
    runs = {"fleetgraph": sys.executable, "torch": args.torch_python, "paddle": args.paddle_python}
    results = {name: measure(py, name, args.reps, args.n) for name, py in runs.items() if py}
    names = list(results)
    print(f"{'us per call (median of ' + str(args.reps) + ')':<28}" + "".join(f"{n:>12}" for n in names))
    for label in results["fleetgraph"]:
        print(f"{label:<28}" + "".join(f"{results[n][label]:>12.2f}" for n in names))


if __name__ == "__main__":
    main()
