"""Recurrent language models, fleetgraph beside PaddlePaddle and PyTorch in one run: an LSTM and a
GRU language model (vocabulary 10,000, hidden 200, two layers, sequence length 20, batch 20:
embedding -> nn.LSTM / nn.GRU -> Linear to the vocabulary -> softmax cross entropy -> SGD), as a
static program and eagerly, in samples (sequences) per second of training.

    python bench/rnn.py --ref-python PY [--reps 5] [--steps 10] [--clock cpu]

PY is the python of a throwaway environment with PaddlePaddle 3.3.1 and PyTorch (CPU):
`python -m venv /tmp/ref && /tmp/ref/bin/pip install paddlepaddle==3.3.1 torch`; without it only
fleetgraph runs. Paddle's static mode runs its legacy IR (FLAGS_enable_pir_api=0). The model is
written once in Paddle 2.0's names (`import paddle` or `import fleetgraph as paddle`); PyTorch's is
the same network. Every framework starts from the same parameters (drawn from one NumPy seed, the
output layer's transposed for PyTorch) and sees the same batch: the first step's losses, printed
first, must agree (1e-4) or the figures would not compare the same work, and the bench stops there.
Each framework runs in a worker process of its own with one math thread; the workers take turns case
by case (each rep runs every case in every framework), so a burst of load elsewhere hits all alike. Figures are medians
(lowest-highest) over --reps runs of --steps training steps, timed by CPU time (--clock cpu, the
default) or the wall clock; the goals are >= 1.0x Paddle static and >= 0.8x PyTorch eager.
Prints figures; asserts nothing about them.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys

from side_by_side import Worker, checkout_env, median_spread, take_turns

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VOCAB, HIDDEN, LAYERS, STEPS_T, BATCH = 10_000, 200, 2, 20, 20

CASES = r"""
import json, sys, time
import numpy as np
framework, steps, clock = sys.argv[1], int(sys.argv[2]), getattr(time, sys.argv[3])
V, H, L, T, B = 10_000, 200, 2, 20, 20
rng = np.random.default_rng(0)
ids = rng.integers(0, V, size=(B, T)).astype("int64")
labels = rng.integers(0, V, size=(B, T, 1)).astype("int64")


def initial(shapes):
    draw = np.random.default_rng(7)
    return [draw.uniform(-0.1, 0.1, size=s).astype("float32") for s in shapes]


if framework == "torch":
    import torch
    torch.set_num_threads(1)

    class LM(torch.nn.Module):
        def __init__(self, kind):
            super().__init__()
            self.emb = torch.nn.Embedding(V, H)
            self.rnn = getattr(torch.nn, kind)(H, H, num_layers=L, batch_first=True)
            self.out = torch.nn.Linear(H, V)

        def forward(self, x, y):
            h, _ = self.rnn(self.emb(x))
            logits = self.out(h).reshape(-1, V)
            return torch.nn.functional.cross_entropy(logits, y.reshape(-1))

    def build(kind, mode):
        if mode == "static":
            return None
        model = LM(kind)
        params = list(model.parameters())
        values = initial([tuple(p.shape) if p is not params[-2] else tuple(p.shape)[::-1] for p in params])
        values[-2] = values[-2].T  # Paddle's Linear weight is [in, out]: the same draw, transposed
        with torch.no_grad():
            for p, v in zip(params, values):
                p.copy_(torch.from_numpy(np.ascontiguousarray(v)))
        opt = torch.optim.SGD(model.parameters(), lr=1.0)
        x, y = torch.from_numpy(ids), torch.from_numpy(labels)

        def step():
            loss = model(x, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            return float(loss)

        return step
else:
    if framework == "paddle":
        import os
        os.environ["FLAGS_enable_pir_api"] = "0"
        import paddle
        paddle.set_flags({"FLAGS_enable_pir_api": False})
    else:
        import fleetgraph as paddle
    nn = paddle.nn

    class LM(nn.Layer):
        def __init__(self, kind):
            super().__init__()
            self.emb = nn.Embedding(V, H)
            self.rnn = getattr(nn, kind)(H, H, num_layers=L)
            self.out = nn.Linear(H, V)

        def forward(self, x, y):
            h, _ = self.rnn(self.emb(x))
            logits = paddle.reshape(self.out(h), [-1, V])
            return paddle.mean(nn.functional.cross_entropy(logits, paddle.reshape(y, [-1, 1])))

    def build(kind, mode):
        if mode == "eager":
            paddle.disable_static()
            model = LM(kind)
            for p, v in zip(model.parameters(), initial([tuple(p.shape) for p in model.parameters()])):
                p.set_value(v)
            opt = paddle.optimizer.SGD(learning_rate=1.0, parameters=model.parameters())
            x, y = paddle.to_tensor(ids), paddle.to_tensor(labels)

            def step():
                paddle.disable_static()  # the cases of both modes live in one process
                loss = model(x, y)
                loss.backward()
                opt.step()
                opt.clear_grad()
                return float(loss)

            return step
        paddle.enable_static()
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            x = paddle.static.data("x", [B, T], "int64")
            y = paddle.static.data("y", [B, T, 1], "int64")
            model = LM(kind)
            loss = model(x, y)
            paddle.optimizer.SGD(learning_rate=1.0).minimize(loss)
        exe = paddle.static.Executor(paddle.CPUPlace())
        scope = paddle.static.Scope()
        with paddle.static.scope_guard(scope):
            exe.run(startup)
            params = model.parameters()
            for p, v in zip(params, initial([tuple(p.shape) for p in params])):
                scope.find_var(p.name).get_tensor().set(v, paddle.CPUPlace())
        feed = {"x": ids, "y": labels}

        def step():
            paddle.enable_static()
            with paddle.static.scope_guard(scope):
                return float(np.asarray(exe.run(main, feed=feed, fetch_list=[loss])[0]).reshape(-1)[0])

        return step

runs = {}
for kind in ("LSTM", "GRU"):
    for mode in ("static", "eager"):
        runs[f"{kind} {mode}"] = build(kind, mode)
first = {label: (float("nan") if fn is None else fn()) for label, fn in runs.items()}
for fn in runs.values():  # warm up
    if fn is not None:
        fn()
print("ready", flush=True)
for line in sys.stdin:
    label = line.strip()
    if label.startswith("loss "):
        print(json.dumps(first[label[5:]]), flush=True)
        continue
    fn = runs[label]
    if fn is None:
        print(json.dumps(float("nan")), flush=True)
        continue
    t0 = clock()
    for _ in range(steps):
        fn()
    print(json.dumps(steps * B / (clock() - t0)), flush=True)
"""

LABELS = ("LSTM static", "LSTM eager", "GRU static", "GRU eager")


def worker(python: str, name: str, steps: int, clock: str) -> Worker:
    return Worker(name, [python, "-c", CASES, name, str(steps), clock], checkout_env(REPO), REPO)


def check_losses(losses: dict[tuple[str, str], float], names: list[str]) -> None:
    """Stop before timing when a framework's first-step loss differs from fleetgraph's by more than
    1e-4: the figures would then time different work (torch has no static case, its loss is nan)."""
    off = [
        f"{label}: {name} {losses[name, label]:.6f} vs fleetgraph {losses['fleetgraph', label]:.6f}"
        for name in names
        for label in LABELS
        if abs(losses[name, label] - losses["fleetgraph", label]) > 1e-4
    ]
    if off:
        raise SystemExit("first-step losses differ:\n  " + "\n  ".join(off))


def cell(values: list[float]) -> str:
    """One framework's figures for one case; torch has no static case."""
    return f"{'-' if math.isnan(values[0]) else median_spread(values, 1):>24}"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ref-python", help="python of an environment with paddlepaddle 3.3.1 and torch")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    args = p.parse_args()
    clock = {"cpu": "process_time", "wall": "perf_counter"}[args.clock]
    names = {"fleetgraph": sys.executable}
    if args.ref_python:
        names |= {"paddle": args.ref_python, "torch": args.ref_python}
    workers = [worker(py, name, args.steps, clock) for name, py in names.items()]
    losses = {(w.name, label): w.time("loss " + label) for w in workers for label in LABELS}
    print("first-step loss (the same parameters and batch everywhere)")
    for label in LABELS:
        print(f"  {label:<12}" + "".join(f"{w.name:>12} {losses[w.name, label]:.6f}" for w in workers))
    check_losses(losses, [w.name for w in workers])
    figures = take_turns(workers, LABELS, args.reps)
    print(f"\nsamples/s ({args.clock} time, one math thread), median of {args.reps} (lowest-highest)")
    print(f"{'':<13}" + "".join(f"{w.name:>24}" for w in workers) + "   vs paddle   vs torch eager   goal")
    for label in LABELS:
        row = f"{label:<13}" + "".join(cell(figures[w.name, label]) for w in workers)
        if args.ref_python:
            kind, mode = label.split()
            ours = statistics.median(figures["fleetgraph", label])
            vs_paddle = ours / statistics.median(figures["paddle", label])
            vs_torch = ours / statistics.median(figures["torch", f"{kind} eager"])
            met = vs_paddle >= 1.0 if mode == "static" else vs_torch >= 0.8
            goal = ">= 1.0x paddle static" if mode == "static" else ">= 0.8x torch eager"
            row += f"   {vs_paddle:>8.2f}x   {vs_torch:>13.2f}x   {goal}: {'met' if met else 'missed'}"
        print(row)
    print(json.dumps({"losses": {f"{n} {label}": v for (n, label), v in losses.items()}}))


if __name__ == "__main__":
    main()
