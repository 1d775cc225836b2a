"""The launcher starts real processes on 127.0.0.1 with tiny scripts (tests/dist_scripts/launch_*.py) and must
give each its role environment, its log file, and leave no process behind whatever happens."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid

import pytest
from dist_helpers import REPO, SCRIPTS, assert_nothing_left, free_ports, processes_with

from fleetgraph.distributed.launch import launch, make_plan, parse_args
from fleetgraph.distributed.launch_utils import LaunchError, Supervisor, env_table

REMOTE = "192.0.2.1"  # TEST-NET-1: never this host


@pytest.fixture
def marker():
    """A unique argument for the scripts; whatever still carries it afterwards is killed (and the test fails)."""
    mark = f"fgmark-{uuid.uuid4().hex[:12]}"
    yield mark
    for pid, _ in processes_with(mark):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _env(**extra: str) -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""), **extra)


def run_launcher(tmp_path, *args: str, module: str = "launch", **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", f"fleetgraph.distributed.{module}", *args],
        cwd=tmp_path,
        env=_env(**env),
        capture_output=True,
        text=True,
        timeout=60,
    )


def script(name: str) -> str:
    return os.path.join(SCRIPTS, f"launch_{name}.py")


def logged_env(path) -> dict[str, str]:
    for line in path.read_text().splitlines():
        if line.startswith("ENV "):
            return json.loads(line[4:])
    raise AssertionError(f"no ENV line in {path}:\n{path.read_text()}")


# -- parameter-server mode --------------------------------------------------------------------------------------


def test_ps_mode_gives_each_role_its_log_and_both_spellings_of_its_env(tmp_path, marker):
    done = run_launcher(tmp_path, "--server_num", "2", "--worker_num", "2", script("env"), marker)

    assert done.returncode == 0, done.stdout + done.stderr
    log = tmp_path / "log"
    assert sorted(p.name for p in log.iterdir()) == [
        "endpoints.log",
        "serverlog.0",
        "serverlog.1",
        "workerlog.0",
        "workerlog.1",
    ]
    servers = [logged_env(log / f"serverlog.{i}") for i in range(2)]
    workers = [logged_env(log / f"workerlog.{i}") for i in range(2)]
    server_list = servers[0]["PADDLE_PSERVERS_IP_PORT_LIST"].split(",")
    worker_list = workers[0]["PADDLE_TRAINER_ENDPOINTS"].split(",")
    assert len(set(server_list + worker_list)) == 4
    # one host: the servers get loopback addresses of their own on one port, so that Fluid scripts
    # can build their endpoints from PADDLE_PSERVER_IPS and PADDLE_PSERVER_PORT
    port = server_list[0].split(":")[1]
    assert server_list == [f"127.0.0.1:{port}", f"127.0.0.2:{port}"]
    for i, env in enumerate(servers):
        assert env == {
            "TRAINING_ROLE": "PSERVER",
            "PADDLE_TRAINING_ROLE": "PSERVER",
            "PADDLE_PSERVERS_IP_PORT_LIST": ",".join(server_list),
            "PADDLE_TRAINER_ENDPOINTS": ",".join(worker_list),
            "PADDLE_TRAINERS_NUM": "2",
            "PADDLE_TRAINERS": "2",
            "PADDLE_PORT": port,
            "POD_IP": f"127.0.0.{i + 1}",
            "PADDLE_CURRENT_IP": f"127.0.0.{i + 1}",
            "PADDLE_CURRENT_ENDPOINT": server_list[i],
            "PADDLE_PSERVER_IPS": "127.0.0.1,127.0.0.2",
            "PADDLE_PSERVER_PORT": port,
        }
    for i, env in enumerate(workers):
        assert env["TRAINING_ROLE"] == env["PADDLE_TRAINING_ROLE"] == "TRAINER"
        assert env["PADDLE_TRAINER_ID"] == str(i)
        assert env["PADDLE_PORT"] == worker_list[i].split(":")[1]
        assert env["PADDLE_TRAINERS_NUM"] == env["PADDLE_TRAINERS"] == "2"
        assert env["PADDLE_PSERVERS_IP_PORT_LIST"] == ",".join(server_list)
        assert env["PADDLE_CURRENT_ENDPOINT"] == worker_list[i]
        assert env["PADDLE_PSERVER_IPS"] == "127.0.0.1,127.0.0.2" and env["PADDLE_PSERVER_PORT"] == port
    assert (log / "endpoints.log").read_text().split() == [
        "PADDLE_TRAINER_ENDPOINTS:",
        *worker_list,
        "PADDLE_PSERVERS_IP_PORT_LIST:",
        *server_list,
    ]
    assert f"ARGS {marker}" in (log / "workerlog.1").read_text()
    # the env tables of the first server and worker, and worker 0's own output, on the launcher's stdout
    assert "|                        Distributed Envs                      Value" in done.stdout
    assert done.stdout.count("Distributed Envs") == 2
    assert f"|{'PADDLE_CURRENT_ENDPOINT':>40s}  {server_list[0]:^45s}|" in done.stdout
    assert f"|{'PADDLE_TRAINER_ID':>40s}  {'0':^45s}|" in done.stdout
    assert json.dumps(workers[0], sort_keys=True) in done.stdout
    assert 'PADDLE_TRAINER_ID": "1"' not in done.stdout
    # the servers would have waited forever
    assert_nothing_left(marker)


def test_launch_ps_defaults_and_one_server_shares_its_port(tmp_path, marker):
    done = run_launcher(tmp_path, "--server_num", "1", script("env"), marker, module="launch_ps")

    assert done.returncode == 0, done.stdout + done.stderr
    logs = tmp_path / "logs"  # Paddle's launch_ps log directory
    assert sorted(p.name for p in logs.iterdir()) == ["endpoints.log", "serverlog.0", "workerlog.0", "workerlog.1"]
    server = logged_env(logs / "serverlog.0")
    worker = logged_env(logs / "workerlog.1")
    assert server["PADDLE_PSERVER_PORT"] == worker["PADDLE_PSERVER_PORT"] == server["PADDLE_PORT"]
    assert worker["PADDLE_PSERVER_IPS"] == "127.0.0.1"
    assert_nothing_left(marker)


def test_explicit_endpoints_start_only_this_hosts_roles(tmp_path, marker):
    server, worker = (f"127.0.0.1:{p}" for p in free_ports(2))
    done = run_launcher(
        tmp_path,
        *("--servers", f"{server},{REMOTE}:6170", "--workers", f"{REMOTE}:6171,{worker}"),
        script("env"),
        marker,
    )

    assert done.returncode == 0, done.stdout + done.stderr
    log = tmp_path / "log"
    assert sorted(p.name for p in log.iterdir()) == ["endpoints.log", "serverlog.0", "workerlog.1"]
    env = logged_env(log / "workerlog.1")
    assert env["PADDLE_PSERVERS_IP_PORT_LIST"] == f"{server},{REMOTE}:6170"
    assert env["PADDLE_TRAINER_ENDPOINTS"] == f"{REMOTE}:6171,{worker}"
    assert env["PADDLE_TRAINER_ID"] == "1"
    assert env["PADDLE_PSERVER_IPS"] == f"127.0.0.1,{REMOTE}"
    assert logged_env(log / "serverlog.0")["PADDLE_CURRENT_ENDPOINT"] == server
    assert_nothing_left(marker)


# -- collective mode --------------------------------------------------------------------------------------------


def test_collective_mode_gives_each_rank_its_env(tmp_path, marker):
    done = run_launcher(tmp_path, "--gpus", "0,1", script("env"), marker)

    assert done.returncode == 0, done.stdout + done.stderr
    log = tmp_path / "log"
    assert sorted(p.name for p in log.iterdir()) == ["endpoints.log", "workerlog.0", "workerlog.1"]
    ranks = [logged_env(log / f"workerlog.{i}") for i in range(2)]
    endpoints = ranks[0]["PADDLE_TRAINER_ENDPOINTS"].split(",")
    assert len(set(endpoints)) == 2
    for rank, env in enumerate(ranks):
        assert env == {
            "PADDLE_TRAINER_ID": str(rank),
            "PADDLE_TRAINERS_NUM": "2",
            "PADDLE_TRAINER_ENDPOINTS": ",".join(endpoints),
            "PADDLE_CURRENT_ENDPOINT": endpoints[rank],
            "FLAGS_selected_gpus": str(rank),
            "TRAINING_ROLE": "TRAINER",
            "PADDLE_TRAINING_ROLE": "TRAINER",
            "PADDLE_TRAINERS": "2",
            "PADDLE_CURRENT_IP": "127.0.0.1",
            "POD_IP": "127.0.0.1",
            "PADDLE_PORT": endpoints[rank].split(":")[1],
        }
    assert done.stdout.count("Distributed Envs") == 1
    assert f"|{'FLAGS_selected_gpus':>40s}  {'0':^45s}|" in done.stdout
    if not any(d.startswith("nvidia") and d[6:].isdigit() for d in os.listdir("/dev")):
        assert "launch: warning: --gpus 0,1 but this host shows no NVIDIA GPU" in done.stderr
    assert_nothing_left(marker)


def test_collective_ranks_span_every_host_in_ips_order(tmp_path):
    (tmp_path / "train.py").write_text("")
    argv = ["--ips", f"127.0.0.1,{REMOTE}", "--nproc_per_node", "2", "--started_port", "7000", "--gpus", "0,1,2,3"]
    plan = make_plan(parse_args([*argv, str(tmp_path / "train.py")]))

    assert plan.workers == ["127.0.0.1:7000", "127.0.0.1:7001", f"{REMOTE}:7000", f"{REMOTE}:7001"]
    assert [s.name for s in plan.local] == ["worker.0", "worker.1"]
    assert [s.env["FLAGS_selected_gpus"] for s in plan.local] == ["0,1", "2,3"]
    assert plan.local[1].env["PADDLE_TRAINERS_NUM"] == "4"


@pytest.mark.parametrize(
    ("nproc", "gpus", "selected"),
    [("2", "0,1,2,3", ["0,1", "2,3"]), ("4", "0,1", ["0", "1", "0", "1"]), ("2", "5,7", ["5", "7"])],
)
def test_gpus_are_shared_out_between_local_processes(tmp_path, nproc, gpus, selected):
    (tmp_path / "train.py").write_text("")
    plan = make_plan(parse_args(["--nproc_per_node", nproc, "--gpus", gpus, str(tmp_path / "train.py")]))
    assert [s.env["FLAGS_selected_gpus"] for s in plan.local] == selected


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--nproc_per_node", "3", "--gpus", "0,1"], "expected a divisor or multiple of the 2 GPUs"),
        (["--server_num", "2", "--servers", "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3"], "--server_num: expected 3"),
        (["--servers", "127.0.0.1:5,127.0.0.1:5"], "expected each ip:port once, got 127.0.0.1:5"),
        (["--workers", "127.0.0.1:99999"], "port in 1..65535"),
        (["--ips", REMOTE], f"none of --ips {REMOTE} is this host"),
        (["--worker_num", "2", "--nproc_per_node", "2"], "--nproc_per_node applies to collective mode"),
    ],
)
def test_bad_arguments_are_reported_before_anything_starts(tmp_path, argv, message):
    (tmp_path / "train.py").write_text("")
    with pytest.raises(LaunchError, match=message.replace(".", r"\.").replace("+", r"\+")):
        make_plan(parse_args([*argv, str(tmp_path / "train.py")]))


def test_missing_script_exits_2_with_one_line(tmp_path, capsys):
    assert launch(["--worker_num", "1", str(tmp_path / "nope.py")]) == 2
    assert "training_script" in capsys.readouterr().err


def test_env_table_widens_for_long_values():
    long = ",".join(f"127.0.0.1:{6000 + i}" for i in range(8))
    lines = env_table({"PADDLE_TRAINER_ENDPOINTS": long, "PADDLE_TRAINER_ID": "0"}).splitlines()
    assert len({len(line) for line in lines}) == 1
    assert long in lines[3]


# -- failures and signals ---------------------------------------------------------------------------------------


def test_failing_worker_stops_the_rest_and_shows_its_log_tail(tmp_path, marker):
    done = run_launcher(tmp_path, "--server_num", "1", "--worker_num", "2", script("fail"), marker)

    assert done.returncode == 3, done.stdout + done.stderr
    assert "worker.1 exited with status 3" in done.stderr
    tail = done.stderr.split("last 20 lines of worker.1's log")[1]
    assert "worker 1 is failing on purpose" in tail and "worker 1 line 11" in tail
    assert "worker 1 line 10" not in tail
    assert "waiting" in done.stdout  # worker 0's output, streamed
    assert_nothing_left(marker)


def _start_sleepers(tmp_path, marker: str, *extra: str, **env: str) -> subprocess.Popen:
    launcher = subprocess.Popen(
        [sys.executable, "-m", "fleetgraph.distributed.launch", "--nproc_per_node", "2"]
        + [script("sleep"), marker, *extra],
        cwd=tmp_path,
        env=_env(**env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    _wait_for_ready(tmp_path, 2, launcher.poll)
    assert len(processes_with(marker)) == 5  # the launcher, 2 workers, 2 grandchildren
    return launcher


def _wait_for_ready(tmp_path, n: int, launcher_status) -> None:
    logs = [tmp_path / "log" / f"workerlog.{i}" for i in range(n)]
    deadline = time.monotonic() + 30
    while not all(p.exists() and "ready" in p.read_text() for p in logs):
        if time.monotonic() > deadline or launcher_status() is not None:
            raise AssertionError(
                "workers never printed 'ready': "
                + " | ".join(p.read_text() if p.exists() else "(no log)" for p in logs)
            )
        time.sleep(0.05)


def test_sigint_to_the_launcher_stops_every_child_and_grandchild(tmp_path, marker):
    launcher = _start_sleepers(tmp_path, marker)
    launcher.send_signal(signal.SIGINT)
    out, err = launcher.communicate(timeout=30)

    assert launcher.returncode == 130, out + err
    assert "launcher got SIGINT" in err
    assert_nothing_left(marker)


def test_sigterm_escalates_to_sigkill_for_children_that_ignore_it(tmp_path, marker):
    launcher = _start_sleepers(tmp_path, marker, "ignore-term", FLEETGRAPH_LAUNCH_GRACE="0.5")
    launcher.send_signal(signal.SIGTERM)
    out, err = launcher.communicate(timeout=30)

    assert launcher.returncode == 128 + signal.SIGTERM, out + err
    assert "s after SIGTERM; sending SIGKILL" in err
    assert_nothing_left(marker)


def test_an_error_inside_the_launcher_still_kills_every_child(tmp_path, marker, monkeypatch):
    def broken_watch(self):
        _wait_for_ready(tmp_path, 2, lambda: None)
        raise RuntimeError("a bug in the launcher")

    monkeypatch.setattr(Supervisor, "watch", broken_watch)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(RuntimeError, match="a bug in the launcher"):
        launch(["--nproc_per_node", "2", script("sleep"), marker])
    assert_nothing_left(marker)
