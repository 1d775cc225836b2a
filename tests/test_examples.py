"""The examples run as the README says."""

from __future__ import annotations

import subprocess
import sys

from dist_helpers import REPO


def _run(*args, timeout=180):
    return subprocess.run([sys.executable, *args], cwd=REPO, capture_output=True, text=True, timeout=timeout)


def test_fit_a_line_example_trains():
    out = _run("examples/fit_a_line/train.py")
    assert out.returncode == 0, out.stderr
    first, last = (float(v) for v in out.stdout.split("of the first epoch ")[1].split(", of the last "))
    assert last < first / 10


def test_distributed_demo_shows_programs_and_a_falling_loss(tmp_path):
    out = _run("examples/dist_fit_a_line/demo.py")
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "block0: listen_and_serv" in out.stdout and "send_barrier recv recv fetch_barrier" in out.stdout
    losses = [float(ln.rsplit(" ", 1)[1]) for ln in out.stdout.splitlines() if ln.startswith("worker 0 epoch")]
    assert len(losses) >= 5 and losses[-1] < losses[0] / 10
    assert "the job succeeded" in out.stdout + out.stderr
