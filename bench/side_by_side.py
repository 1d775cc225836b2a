"""What the benches that time two checkouts side by side share: a worker interpreter that imports one
checkout's fleetgraph and times one case per request, and the median of repeated figures with their
spread.

A checkout is a fleetgraph source tree (`git worktree add DIR COMMIT`); its workers get it first on
PYTHONPATH and as their working directory, so it wins over an installed fleetgraph, and one math
library thread each, so two workers on a shared machine do not spin against each other.
"""

from __future__ import annotations

import os
import select
import statistics
import subprocess
import tempfile

POOL_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def checkout_env(checkout: str) -> dict[str, str]:
    """The environment of a process that imports `checkout`'s fleetgraph, one math thread each."""
    env = dict(os.environ, **{name: "1" for name in POOL_VARS})
    env["PYTHONPATH"] = checkout + os.pathsep + env.get("PYTHONPATH", "")
    return env


class Worker:
    """One interpreter running `argv`: it prints "ready" once set up, then answers each case label
    written to its stdin with one line, a figure."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], cwd: str) -> None:
        self.name = name
        self.errors = tempfile.TemporaryFile("w+")  # a pipe nobody reads could fill and stall the worker
        self.proc = subprocess.Popen(
            argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.errors, text=True, cwd=cwd
        )
        while self._answer(300) != "ready":  # what an import prints on stdout comes first
            pass

    def _answer(self, timeout: float) -> str:
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        line = self.proc.stdout.readline() if ready else ""
        if not line:
            self.proc.kill()
            self.errors.seek(0)
            raise SystemExit(f"{self.name}: no answer after {timeout:.0f} s:\n{self.errors.read()[-2000:]}")
        return line.strip()

    def time(self, label: str) -> float:
        self.proc.stdin.write(label + "\n")
        self.proc.stdin.flush()
        return float(self._answer(600))

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        self.errors.close()


def take_turns(workers: list[Worker], labels, reps: int) -> dict[tuple[str, str], list[float]]:
    """Every worker's figures for every label, `reps` of each: each rep asks every worker for a label
    before the next label, so a burst of load elsewhere hits all of them alike."""
    figures: dict[tuple[str, str], list[float]] = {}
    try:
        for _ in range(reps):
            for label in labels:
                for w in workers:
                    figures.setdefault((w.name, label), []).append(w.time(label))
    finally:
        for w in workers:
            w.close()
    return figures


def median_spread(values: list[float], digits: int = 2) -> str:
    """ "median (lowest-highest)", the figures of one case over its reps."""
    return f"{statistics.median(values):,.{digits}f} ({min(values):,.{digits}f}-{max(values):,.{digits}f})"


def change(ours: list[float], theirs: list[float], higher_is_better: bool) -> str:
    """How much better (+) or worse (-) our median is than theirs, in percent."""
    a, b = statistics.median(ours), statistics.median(theirs)
    return f"{100 * ((a / b) if higher_is_better else (b / a)) - 100:+.1f}%"
