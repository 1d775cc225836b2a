"""Fleet jobs as real processes on 127.0.0.1 (parameter-server and collective), roles from the
environment, against a single process as the oracle."""

from __future__ import annotations

import json
import os
import re

import numpy as np
import pytest
from dist_helpers import SCRIPTS, ProcessGroup, assert_all_exit_zero, endpoints, run_collective_job
from dist_scripts import fleet_fluid_ps, fleet_ps
from models import global_batches

import fleetgraph as paddle
from fleetgraph.ir import Program, program_guard, unique_name
from fleetgraph.store import checkpoint

# -- whole jobs as real processes ----------------------------------------------------------------------

RPC = {"FLEETGRAPH_RPC_TIMEOUT": "30"}


def run_ps_job(script, out, args=(), spelling="fleet", workers=2, servers=2, timeout=120):
    """Start `servers` servers and `workers` workers of a script, with their roles in the environment."""
    server_eps = endpoints(servers)
    if spelling == "fleet":
        common = {"PADDLE_PSERVERS_IP_PORT_LIST": ",".join(server_eps), "PADDLE_TRAINERS_NUM": str(workers)}
        as_server = lambda ep: {"TRAINING_ROLE": "PSERVER", "POD_IP": ep.split(":")[0], "PADDLE_PORT": ep.split(":")[1]}  # noqa: E731
        as_worker = lambda i: {"TRAINING_ROLE": "TRAINER", "PADDLE_TRAINER_ID": str(i)}  # noqa: E731
    else:  # Fluid's: one port on every server host; 127.0.0.x are distinct loopback hosts
        port = endpoints(1)[0].split(":")[1]
        hosts = [f"127.0.0.{i + 1}" for i in range(servers)]
        common = {"PADDLE_PSERVER_IPS": ", ".join(hosts), "PADDLE_PSERVER_PORT": port, "PADDLE_TRAINERS": str(workers)}
        server_eps = hosts
        as_server = lambda host: {"PADDLE_TRAINING_ROLE": "PSERVER", "PADDLE_CURRENT_IP": host}  # noqa: E731
        as_worker = lambda i: {"PADDLE_TRAINING_ROLE": "TRAINER", "PADDLE_TRAINER_ID": str(i)}  # noqa: E731
    argv = [os.path.join(SCRIPTS, script), *(["--out", str(out)] if out is not None else []), *args]
    with ProcessGroup(timeout=timeout) as group:
        for ep in server_eps:
            group.start(f"server {ep}", argv, env={**RPC, **common, **as_server(ep)})
        for i in range(workers):
            group.start(f"worker {i}", argv, env={**RPC, **common, **as_worker(i)})
        results = group.wait()
    assert_all_exit_zero(results)
    return results


def fleet_ps_oracle(model, steps, rows):
    """The single process: the same network and seed trained on each whole global batch."""
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        loss, _ = fleet_ps.build(model)
        fleet_ps.optimizer(model).minimize(loss)
    scope, exe = paddle.static.Scope(), paddle.static.Executor()
    exe.run(startup, scope=scope)
    losses = [exe.run(main, feed=f, fetch_list=[loss], scope=scope)[0] for f in global_batches(model, steps, rows)]
    return {p.name: np.array(scope.vars[p.name]) for p in main.all_parameters()}, np.array(losses).reshape(-1)


def test_fleet_sync_job_equals_one_process_and_saves_a_model_without_send_recv(tmp_path):
    steps, batch = 15, 8
    run_ps_job("fleet_ps.py", tmp_path, ["--model", "mlp", "--steps", str(steps), "--batch", str(batch)])
    want, _ = fleet_ps_oracle("mlp", steps, 2 * batch)
    for w in (0, 1):
        got = np.load(tmp_path / f"worker{w}.npz")
        for name, value in want.items():
            np.testing.assert_allclose(got[name], value, atol=1e-5, err_msg=f"worker {w} {name}")
    with open(tmp_path / "inference" / "model.json") as f:
        saved_types = {op["type"] for block in json.load(f)["program"]["blocks"] for op in block["ops"]}
    assert saved_types == {"mul", "elementwise_add", "relu"}
    saved = checkpoint.load(str(tmp_path / "persistables"))  # what the pservers held, gathered by worker 0
    for name, value in want.items():
        np.testing.assert_allclose(saved[name], value, atol=1e-5, err_msg=f"saved {name}")
    assert checkpoint.meta(str(tmp_path / "persistables")) == {"step": steps}


@pytest.mark.parametrize("mode", ["async", "geo"])
def test_fleet_async_and_geo_jobs_lower_the_loss(tmp_path, mode):
    """Stated tolerance: the workers' mean loss over the last 5 steps is at most a tenth of the first
    steps' and within 1.5x (plus 0.1) of the single process's (GEO's summed deltas overshoot a little)."""
    steps, batch = 40, 16
    run_ps_job("fleet_ps.py", tmp_path, ["--mode", mode, "--steps", str(steps), "--batch", str(batch)])
    _, oracle = fleet_ps_oracle("fit_a_line", steps, batch)
    losses = [np.load(tmp_path / f"worker{w}.npz")["losses"] for w in (0, 1)]
    last, first = np.mean([x[-5:].mean() for x in losses]), np.mean([x[:3].mean() for x in losses])
    assert last <= first / 10 and last <= 1.5 * oracle[-5:].mean() + 0.1, (first, last, oracle[-5:].mean())


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_parameter_server_workers_meet_at_barrier_worker(tmp_path, mode):
    run_ps_job("fleet_ps.py", tmp_path, ["--mode", mode, "--steps", "3", "--barrier_late", "0.5"], workers=3)
    times = []
    for w in range(3):
        with open(tmp_path / f"barrier{w}.json") as f:
            times.append(json.load(f))
    last_to_arrive = max(t["reached"] for t in times)
    assert last_to_arrive - min(t["reached"] for t in times) >= 0.4  # the late worker was late
    assert all(t["left"] >= last_to_arrive for t in times)


def test_init_server_restores_a_saved_job(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir(), second.mkdir()
    run_ps_job("fleet_ps.py", first, ["--model", "mlp", "--steps", "5"])
    run_ps_job("fleet_ps.py", second, ["--model", "mlp", "--steps", "0", "--init_from", str(first / "persistables")])
    saved = checkpoint.load(str(first / "persistables"))
    for w in (0, 1):
        received = np.load(second / f"worker{w}.npz")
        for name in (n for n in saved if n in received):
            np.testing.assert_array_equal(received[name], saved[name], err_msg=f"worker {w} {name}")


def fluid_oracle(steps, rows):
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x, y, avg_cost = fleet_fluid_ps.build()
        paddle.fluid.optimizer.SGD(learning_rate=0.05).minimize(avg_cost)
    scope, exe = paddle.static.Scope(), paddle.static.Executor()
    exe.run(startup, scope=scope)
    feeder = paddle.fluid.DataFeeder(feed_list=[x, y])
    for data in paddle.batch(fleet_fluid_ps.samples(steps, rows, 0, 1), batch_size=rows)():
        exe.run(main, feed=feeder.feed(data), fetch_list=[avg_cost], scope=scope)
    return {p.name: np.array(scope.vars[p.name]) for p in main.all_parameters()}


@pytest.mark.parametrize("given", ["config", "sync", "half_async", "async", "geo"])
def test_fluid_era_job_with_fluid_environment(tmp_path, given):
    steps, batch = 30, 8
    run_ps_job("fleet_fluid_ps.py", tmp_path, ["--strategy", given, "--steps", str(steps)], spelling="fluid")
    trained = [np.load(tmp_path / f"trainer{t}.npz") for t in (0, 1)]
    if given in ("config", "sync"):
        for name, value in fluid_oracle(steps, 2 * batch).items():
            for t in (0, 1):
                np.testing.assert_allclose(trained[t][name], value, atol=1e-5, err_msg=f"trainer {t} {name}")
    else:
        for t in (0, 1):
            losses = trained[t]["losses"]
            assert losses[-5:].mean() <= losses[:3].mean() / 3, (given, t, losses)


def test_seed_004_compiled_program_of_a_sync_trainer_equals_one_process(tmp_path, monkeypatch):
    """CompiledProgram(fleet.main_program).with_data_parallel(...) with the strategy's build and
    execution strategies: 2 trainers x 2 replicas x 4 rows == one process x 16 rows."""
    monkeypatch.setenv("CPU_NUM", "2")
    steps = 20
    args = ["--strategy", "sync", "--steps", str(steps), "--compiled"]
    results = run_ps_job("fleet_fluid_ps.py", tmp_path, args, spelling="fluid")
    assert all("2 replicas" in results[f"worker {t}"][1] for t in (0, 1))
    for name, value in fluid_oracle(steps, 16).items():
        for t in (0, 1):
            trained = np.load(tmp_path / f"trainer{t}.npz")
            np.testing.assert_allclose(trained[name], value, atol=1e-5, err_msg=f"trainer {t} {name}")
            assert trained["losses"].ndim == 1


@pytest.mark.parametrize("strategy", ["sync", "half_async", "async", "geo"])
def test_seed_004_sparse_embedding_trains_from_a_dataset_in_every_strategy(tmp_path, strategy):
    rng = np.random.default_rng(0)
    for f in range(4):  # two files per trainer
        ids = rng.integers(0, 1000, size=400)
        (tmp_path / f"part-{f}").write_text("".join(f"1 {i} 1 {int(i < 500)}\n" for i in ids))
    results = run_ps_job(
        "seed004_sparse_dataset.py", None, ["--data", str(tmp_path), "--strategy", strategy], spelling="fluid"
    )
    for worker in ("worker 0", "worker 1"):
        losses = [float(v) for v in re.findall(r"loss: ([0-9.e+-]+)", results[worker][1])]
        # 4 epochs of its 2 files x 400 samples: 50 batches of 16 each, every 5th printed
        assert len(losses) == 4 * 50 // 5, results[worker][1][-2000:]
        # from ln 2 (0.69) down in every strategy; which samples make up a batch varies with the reader
        # threads, and with it how far 4 epochs get: over ten sync jobs the last epoch's ten printed
        # losses averaged 0.40 to 0.61 of the first three (the bound was 0.6 of the last three: it failed
        # about one job in ten)
        assert np.mean(losses[-10:]) < 0.75 * np.mean(losses[:3]), (strategy, worker, losses)


def test_collective_job_equals_one_process(tmp_path):
    steps, batch = 8, 8
    run_collective_job([os.path.join(SCRIPTS, "fleet_collective.py"), "--out", str(tmp_path), "--steps", str(steps)])
    want, _ = fleet_ps_oracle("mlp", steps, 2 * batch)
    for rank in (0, 1):
        got = np.load(tmp_path / f"rank{rank}.npz")
        for name, value in want.items():
            np.testing.assert_allclose(got[name], value, atol=1e-5, err_msg=f"rank {rank} {name}")


def test_seed_003_script_trains_with_two_servers_and_two_workers():
    servers = endpoints(2)
    common = {"SEED003_WORKERS": "2", "SEED003_SERVERS": ",".join(servers), **RPC}
    script = os.path.join(SCRIPTS, "seed003_fleet.py")
    with ProcessGroup(timeout=120) as group:
        for role, count in (("SERVER", 2), ("WORKER", 2)):
            for i in range(count):
                group.start(f"{role} {i}", [script], env={**common, "SEED003_ID": str(i), "SEED003_ROLE": role})
        results = group.wait()
    assert_all_exit_zero(results)
    for i in range(2):
        lines = [ln for ln in results[f"WORKER {i}"][1].splitlines() if ln.startswith("Pass ")]
        assert len(lines) == 10 * 10 and lines[-1].startswith("Pass 9, cost = ")
        costs = [float(ln.split("cost = ")[1].split(",")[0]) for ln in lines]
        assert np.mean(costs[-10:]) < np.mean(costs[:10])


def _open_mpi() -> str | None:
    """mpirun when it is Open MPI's and mpi4py imports (the `mpi` extra); None otherwise."""
    import shutil
    import subprocess

    mpirun = shutil.which("mpirun")
    if mpirun is None:
        return None
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return None
    version = subprocess.run([mpirun, "--version"], capture_output=True, text=True, timeout=30).stdout
    return mpirun if "Open MPI" in version else None


@pytest.mark.skipif(
    _open_mpi() is None,
    reason="needs Open MPI's mpirun (apt-get install openmpi-bin) and mpi4py (pip install 'fleetgraph[mpi]')",
)
def test_seed_003_runs_under_mpirun_with_the_default_role_maker(tmp_path):
    """`mpirun -np 4 python seed003_fleet.py`, fleet.init(role_maker=None): MPISymetricRoleMaker makes
    ranks 0 and 2 servers and ranks 1 and 3 workers, gathers their endpoints over MPI, and rank 0's
    job secret authenticates the job."""
    import subprocess
    import sys

    from dist_helpers import REPO

    script = os.path.join(SCRIPTS, "seed003_fleet.py")
    env = dict(os.environ, PYTHONPATH=REPO, **RPC)
    for name in ("FLEETGRAPH_JOB_SECRET", "TRAINING_ROLE", "PADDLE_TRAINING_ROLE"):
        env.pop(name, None)
    argv = [_open_mpi(), "--allow-run-as-root", "--oversubscribe", "--output-filename", str(tmp_path / "out")]
    argv += ["-np", "4", sys.executable, script]
    done = subprocess.run(argv, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    outs = {rank: (tmp_path / "out" / "1" / f"rank.{rank}" / "stdout").read_text() for rank in range(4)}
    for rank in (1, 3):  # the workers
        lines = [ln for ln in outs[rank].splitlines() if ln.startswith("Pass ")]
        assert len(lines) == 10 * 10 and lines[-1].startswith("Pass 9, cost = "), outs[rank][-2000:]
    assert not any(ln.startswith("Pass ") for rank in (0, 2) for ln in outs[rank].splitlines())
    assert "FLEETGRAPH_JOB_SECRET is not set" not in done.stdout + done.stderr + "".join(outs.values())


def test_seed_003_runs_as_srun_starts_it_with_the_default_role_maker():
    """Four tasks with the variables srun sets (one node, 'localhost'), fleet.init(role_maker=None):
    SlurmRoleMaker pairs them up and finds every endpoint from the node list alone."""
    script = os.path.join(SCRIPTS, "seed003_fleet.py")
    base = next(p for p in range(20000, 60000, 7) if _ports_free(p, 4))
    common = {
        "SLURM_NTASKS": "4",
        "SLURM_JOB_NODELIST": "localhost",
        "SLURM_TASKS_PER_NODE": "4",
        "FLEETGRAPH_SLURM_PORT": str(base),
        **RPC,
    }
    with ProcessGroup(timeout=120) as group:
        for task in range(4):
            group.start(f"task {task}", [script], env={**common, "SLURM_PROCID": str(task), "SLURM_LOCALID": str(task)})
        results = group.wait()
    assert_all_exit_zero(results)
    for task in (1, 3):  # the workers
        lines = [ln for ln in results[f"task {task}"][1].splitlines() if ln.startswith("Pass ")]
        assert len(lines) == 10 * 10 and lines[-1].startswith("Pass 9, cost = ")
    assert not any("Pass " in results[f"task {task}"][1] for task in (0, 2))


def _ports_free(first: int, count: int) -> bool:
    import socket

    socks = []
    try:
        for port in range(first, first + count):
            s = socket.socket()
            socks.append(s)
            s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        for s in socks:
            s.close()
