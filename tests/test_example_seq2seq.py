"""examples/seq2seq as its README runs it, on smaller generated data: it learns to translate in one
process; with 2 pservers and 2 workers it trains synchronously to the single-process parameters
(1e-5) and asynchronously to a falling loss."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMEOUT_S = 300


def _run(cwd, *args) -> str:
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT_S, env=env)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return out.stdout + out.stderr


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    where = tmp_path_factory.mktemp("seq2seq")
    for name in ("generate_data.py", "model.py", "train.py"):
        shutil.copy(os.path.join(REPO, "examples", "seq2seq", name), where)
    _run(where, "generate_data.py", "--out", "small", "--train", "2000", "--test", "100")
    _run(where, "generate_data.py", "--out", "tiny", "--train", "512", "--test", "20")
    return where


def _launch(where, *args) -> list[str]:
    shutil.rmtree(where / "log", ignore_errors=True)
    _run(where, "-m", "fleetgraph.distributed.launch", "--server_num", "2", "--worker_num", "2", "train.py", *args)
    return [(where / "log" / f"workerlog.{i}").read_text() for i in range(2)]


def test_seq2seq_learns_to_translate_in_one_process(example):
    out = _run(example, "train.py", "--data", "small", "--epochs", "12")
    losses = [float(v) for v in re.findall(r"mean loss ([0-9.]+)", out)]
    exact = float(re.search(r"exact translations on the test set: ([0-9.]+)", out).group(1))
    assert losses[-1] < losses[0] / 5 and exact > 0.3, out


def test_seq2seq_with_sync_parameter_servers_equals_one_process(example):
    _run(example, "train.py", "--data", "tiny", "--epochs", "2", "--save", "local.npz")
    _launch(example, "--data", "tiny", "--epochs", "2", "--save", "dist.npz")
    local, dist = np.load(example / "local.npz"), np.load(example / "dist.npz")
    assert sorted(local.files) == sorted(dist.files) and len(local.files) == 12
    for name in local.files:
        np.testing.assert_allclose(dist[name], local[name], atol=1e-5, err_msg=name)


def test_seq2seq_with_async_parameter_servers_lowers_the_loss(example):
    for log in _launch(example, "--data", "tiny", "--epochs", "3", "--mode", "async"):
        losses = [float(v) for v in re.findall(r"mean loss ([0-9.]+)", log)]
        assert len(losses) == 3 and losses[-1] < losses[0], log
