"""The launcher running real Fleet jobs: parameter-server and collective (seed 002), with the
process table checked afterwards for anything left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid

import pytest
from dist_helpers import REPO, SCRIPTS, assert_nothing_left, processes_with


@pytest.fixture
def marker():
    mark = f"fgjob-{uuid.uuid4().hex[:12]}"
    yield mark
    for pid, _ in processes_with(mark):
        os.kill(pid, signal.SIGKILL)


def launcher(tmp_path, module: str, *args: str, **env: str) -> subprocess.Popen:
    full_env = dict(os.environ, PYTHONPATH=REPO, FLEETGRAPH_RPC_TIMEOUT="20", **env)
    return subprocess.Popen(
        [sys.executable, "-m", f"fleetgraph.distributed.{module}", "--log_dir", str(tmp_path / "log"), *args],
        env=full_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def fleet_job(tmp_path, marker, *script_args: str) -> subprocess.Popen:
    """fleet_launched.py as 2 servers + 2 workers under launch_ps."""
    script = os.path.join(SCRIPTS, "fleet_launched.py")
    return launcher(tmp_path, "launch_ps", "--server_num", "2", "--worker_num", "2", script, *script_args, marker)


def finish(proc: subprocess.Popen, timeout: float = 120) -> tuple[int, str]:
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    return proc.returncode, out


def test_fleet_parameter_server_job_runs_under_launch_ps(tmp_path, marker):
    code, out = finish(fleet_job(tmp_path, marker))
    assert code == 0, out[-3000:]
    assert "worker 0 done" in out  # worker 0's output is streamed
    logs = sorted(p.name for p in (tmp_path / "log").iterdir())
    assert {"serverlog.0", "serverlog.1", "workerlog.0", "workerlog.1"} <= set(logs)
    assert "worker 1 done" in (tmp_path / "log" / "workerlog.1").read_text()
    assert_nothing_left(marker)


def test_a_failing_fleet_worker_stops_the_whole_job(tmp_path, marker):
    code, out = finish(fleet_job(tmp_path, marker, "--steps", "100000", "--fail_worker", "1"))
    assert code != 0
    assert "worker 1 fails on purpose" in out
    assert_nothing_left(marker)


def test_sigint_stops_a_running_fleet_job(tmp_path, marker):
    proc = fleet_job(tmp_path, marker, "--steps", "100000")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(processes_with(marker)) < 4:
        time.sleep(0.2)
    time.sleep(2)  # training under way
    os.kill(proc.pid, signal.SIGINT)
    code, _ = finish(proc, timeout=60)
    assert code == 130
    assert_nothing_left(marker)


def test_seed_002_static_collective_script_runs_with_two_ranks(tmp_path, marker):
    """The seed as written (flowers through DataLoader.from_generator, accuracy top-1 and top-5,
    L2Decay, 10 epochs), on 64 synthetic flowers: 2 batches of 32 an epoch, each rank's loss printed
    every 5 batches, so once an epoch."""
    code, out = finish(
        launcher(
            tmp_path,
            "launch",
            "--nproc_per_node",
            "2",
            os.path.join(SCRIPTS, "seed002_static_collective.py"),
            marker,
            FLEETGRAPH_FLOWERS_SAMPLES="64",
        ),
        timeout=240,
    )
    assert code == 0, out[-3000:]
    for rank in (0, 1):
        log = (tmp_path / "log" / f"workerlog.{rank}").read_text()
        assert "SYNTHETIC stand-in: 64 pictures of 3x224x224 in 10 classes" in log
        lines = [ln for ln in log.splitlines() if ln.startswith("[Epoch")]
        losses = [float(ln.split("loss: ")[1].split(",")[0]) for ln in lines]
        assert len(losses) == 10 and losses[-1] < losses[0] / 4, lines
    assert_nothing_left(marker)


def test_seed_001_runs_under_launch_ps_with_two_servers_and_two_workers(tmp_path, marker):
    """Seed 001 reads PADDLE_PSERVER_IPS and one PADDLE_PSERVER_PORT: the launcher gives its two
    servers two loopback addresses on one port (it used to give two ports, and the script's
    endpoint list named one server twice)."""
    script = os.path.join(SCRIPTS, "seed001_dist_train.py")
    proc = launcher(tmp_path, "launch_ps", "--server_num", "2", "--worker_num", "2", script, marker)
    code, out = finish(proc, timeout=240)
    assert code == 0, out[-3000:]
    for t in (0, 1):
        text = (tmp_path / "log" / f"workerlog.{t}").read_text()
        lines = [ln for ln in text.splitlines() if ln.startswith("Epoch:")]
        assert lines[-1].startswith("Epoch: 29, Batch: 49"), text[-2000:]
        assert float(lines[-1].rsplit(" ", 1)[1]) < float(lines[0].rsplit(" ", 1)[1]) / 10
    assert_nothing_left(marker)


def test_a_server_whose_port_is_taken_fails_the_job_at_once_showing_why(tmp_path, marker):
    import socket

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    script = os.path.join(SCRIPTS, "fleet_launched.py")
    try:
        started = time.monotonic()
        proc = launcher(tmp_path, "launch", "--servers", f"127.0.0.1:{port}", "--workers", "127.0.0.1", script, marker)
        code, out = finish(proc, timeout=60)
    finally:
        taken.close()
    assert code != 0
    assert time.monotonic() - started < 15  # not the trainer's 20 s timeout: the server's own error, at once
    assert f"listen_and_serv 127.0.0.1:{port}: cannot listen there: Address already in use" in out, out[-3000:]
    assert_nothing_left(marker)
