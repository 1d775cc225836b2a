"""Checkpoints: a save is atomic (a kill at any moment leaves the previous checkpoint loadable), a
damaged file is one clear error and loads nothing, and a killed job resumed from its last checkpoint
ends where an uninterrupted job ends -- parameter-server (2 pservers, a sparse table, or 3 pservers
after resuming) and collective."""

from __future__ import annotations

import multiprocessing
import os
import random
import time

import numpy as np
import pytest
from dist_helpers import SCRIPTS, ProcessGroup, assert_all_exit_zero, endpoints
from models import fit_a_line_2x

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.store import checkpoint
from fleetgraph.store.checkpoint import CheckpointError

# -- one process ------------------------------------------------------------------------------------


def test_a_checkpoint_round_trips_with_a_manifest_naming_its_file_size_and_checksum(tmp_path):
    arrays = {"w": np.arange(6.0).reshape(2, 3), "step": np.array([4])}
    path = checkpoint.save(str(tmp_path), arrays, meta={"step": 4})
    manifest = checkpoint.read_manifest(str(tmp_path))
    entry = manifest["files"]["persistables.npz"]
    assert entry["path"] == os.path.basename(path) and entry["bytes"] == os.path.getsize(path)
    assert checkpoint.meta(str(tmp_path)) == {"step": 4}
    loaded = checkpoint.load(str(tmp_path))
    assert sorted(loaded) == ["step", "w"] and np.array_equal(loaded["w"], arrays["w"])
    checkpoint.save(str(tmp_path), {"w": np.zeros(1)})
    assert sorted(os.listdir(tmp_path)) == sorted(
        ["manifest.json", checkpoint.read_manifest(str(tmp_path))["files"]["persistables.npz"]["path"]]
    )


def _save_forever(directory: str, version: int, conn) -> None:
    """A saver (a forked process): checkpoints versions version + 1, + 2, ... and reports each one."""
    big = np.random.default_rng(0).random(200_000)
    while True:
        version += 1
        checkpoint.save(directory, {"version": np.array([version]), "big": big + version}, meta={"version": version})
        conn.send(version)


def test_twenty_kills_during_saves_never_leave_an_unloadable_checkpoint(tmp_path):
    directory = str(tmp_path / "ckpt")
    checkpoint.save(directory, {"version": np.array([0]), "big": np.zeros(1)}, meta={"version": 0})
    rng, last = random.Random(7), 0
    fork = multiprocessing.get_context("fork")
    for _ in range(20):
        ours, theirs = fork.Pipe()
        saver = fork.Process(target=_save_forever, args=(directory, last, theirs), daemon=True)
        saver.start()
        try:
            assert ours.poll(30) and ours.recv()  # one save done: the next is under way
            time.sleep(rng.random() * 0.02)  # a random moment of a save (each takes a few ms)
        finally:
            saver.kill()  # SIGKILL
            saver.join(10)
        loaded = checkpoint.load(directory)  # never raises: the old or the new checkpoint
        version = int(loaded["version"][0])
        assert version > last and checkpoint.meta(directory) == {"version": version}
        np.testing.assert_array_equal(loaded["big"][:3], np.random.default_rng(0).random(3) + version)
        last = version
    assert len(os.listdir(directory)) <= 4  # manifest, data, at most a killed save's two files


def _saved_fit_a_line(tmp_path):
    main, startup, *_ = fit_a_line_2x()
    exe = paddle.static.Executor()
    scope = paddle.static.Scope()
    with paddle.static.scope_guard(scope):
        exe.run(startup)
        fluid.io.save_persistables(exe, str(tmp_path), main)
    return main, startup, exe


def _entry_path(directory) -> str:
    return os.path.join(directory, checkpoint.read_manifest(str(directory))["files"]["persistables.npz"]["path"])


@pytest.mark.parametrize("damage", ["truncated", "altered"])
def test_a_damaged_file_is_one_error_naming_it_and_nothing_loads(tmp_path, damage):
    main, startup, exe = _saved_fit_a_line(tmp_path)
    path = _entry_path(tmp_path)
    with open(path, "r+b") as f:
        if damage == "truncated":
            f.truncate(os.path.getsize(path) // 2)
        else:
            f.seek(os.path.getsize(path) // 2)
            byte = f.read(1)
            f.seek(-1, os.SEEK_CUR)
            f.write(bytes([byte[0] ^ 0xFF]))
    scope = paddle.static.Scope()
    with paddle.static.scope_guard(scope):
        exe.run(startup)
        before = {n: np.array(v) for n, v in scope.vars.items() if v is not None}
        with pytest.raises(CheckpointError, match=os.path.basename(path)):
            fluid.io.load_persistables(exe, str(tmp_path), main)
    assert all(np.array_equal(scope.vars[n], v) for n, v in before.items())


def test_a_tampered_shape_is_one_error_and_nothing_loads(tmp_path):
    main, startup, exe = _saved_fit_a_line(tmp_path)
    saved = checkpoint.load(str(tmp_path))
    saved["fc_0.w_0"] = np.zeros((12, 1), "float32")  # a consistent file with a wrong shape
    checkpoint.save(str(tmp_path), saved)
    scope = paddle.static.Scope()
    with paddle.static.scope_guard(scope):
        exe.run(startup)
        before = np.array(scope.vars["fc_0.b_0"])
        with pytest.raises(paddle.FleetgraphError, match="fc_0.w_0"):
            fluid.io.load_persistables(exe, str(tmp_path), main)
        assert np.array_equal(scope.vars["fc_0.b_0"], before)


# -- killed jobs, resumed ------------------------------------------------------------------------------

CKPT = os.path.join(SCRIPTS, "ckpt_train.py")
RPC = {"FLEETGRAPH_RPC_TIMEOUT": "30"}


def _start_job(group: ProcessGroup, args: list[str], servers: int, workers: int = 2, collective: bool = False):
    if collective:
        eps = endpoints(workers)
        for i in range(workers):
            env = {"PADDLE_TRAINER_ID": str(i), "PADDLE_TRAINER_ENDPOINTS": ",".join(eps)}
            env.update(PADDLE_CURRENT_ENDPOINT=eps[i], PADDLE_TRAINERS_NUM=str(workers), **RPC)
            group.start(f"rank {i}", [CKPT, *args, "--collective"], env=env)
        return
    eps = endpoints(servers)
    common = {"PADDLE_PSERVERS_IP_PORT_LIST": ",".join(eps), "PADDLE_TRAINERS_NUM": str(workers), **RPC}
    for ep in eps:
        host, port = ep.split(":")
        group.start(
            f"server {ep}",
            [CKPT, *args],
            env={**common, "TRAINING_ROLE": "PSERVER", "POD_IP": host, "PADDLE_PORT": port},
        )
    for i in range(workers):
        group.start(
            f"worker {i}", [CKPT, *args], env={**common, "TRAINING_ROLE": "TRAINER", "PADDLE_TRAINER_ID": str(i)}
        )


def _run(tmp_path, name, extra=(), servers=2, collective=False):
    args = ["--ckpt", str(tmp_path / name / "ckpt"), "--final", str(tmp_path / name / "final"), *extra]
    with ProcessGroup(timeout=120) as group:
        _start_job(group, args, servers, collective=collective)
        assert_all_exit_zero(group.wait())
    return checkpoint.load(str(tmp_path / name / "final"))


def _step_of(ckpt: str, collective: bool) -> int:
    try:
        if collective:
            return int(checkpoint.load(ckpt)["ckpt_step"][0])
        return checkpoint.meta(ckpt).get("step", 0)
    except (CheckpointError, FileNotFoundError, KeyError):
        return 0


def _killed_then_resumed(tmp_path, seed, servers_after=2, collective=False, extra=()):
    ckpt = tmp_path / "run" / "ckpt"
    args = ["--ckpt", str(ckpt), "--final", str(tmp_path / "run" / "final"), "--pause", "0.05", *extra]
    with ProcessGroup(timeout=120) as group:
        _start_job(group, args, 2, collective=collective)
        deadline = time.monotonic() + 90
        while _step_of(str(ckpt), collective) < 10 and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(random.Random(seed).random() * 0.3)  # a random point after step 10
        group.kill()
    killed_at = _step_of(str(ckpt), collective)
    assert 10 <= killed_at < 20, killed_at
    with ProcessGroup(timeout=120) as group:
        _start_job(group, [*args, "--resume"], servers_after, collective=collective)
        assert_all_exit_zero(group.wait())
    return checkpoint.load(str(tmp_path / "run" / "final"))


def _assert_same_state(got: dict, want: dict) -> None:
    """Every array equal to 1e-6; a table's rows compared id by id."""
    assert sorted(got) == sorted(want)
    for name in want:
        if name.endswith("@ROWS"):
            continue
        if name.endswith("@IDS"):
            base = name[: -len("@IDS")]
            g, w = np.argsort(got[name]), np.argsort(want[name])
            np.testing.assert_array_equal(got[name][g], want[name][w])
            np.testing.assert_allclose(got[base + "@ROWS"][g], want[base + "@ROWS"][w], atol=1e-6, err_msg=base)
        else:
            np.testing.assert_allclose(got[name], want[name], atol=1e-6, err_msg=name)


@pytest.fixture(scope="module")
def uninterrupted_sync_job(tmp_path_factory):
    """The sync job with a table run whole, once for every resume below to be compared with."""
    want = _run(tmp_path_factory.mktemp("sync"), "whole")
    assert "table@IDS" in want and "moment1_0@IDS" in "".join(want)  # the table and its Adam state
    return want


@pytest.mark.parametrize("servers_after, spelling", [(2, "fleet"), (3, "fleet"), (2, "fluid")])
def test_a_killed_sync_job_with_a_table_resumes_to_the_uninterrupted_parameters(
    tmp_path, uninterrupted_sync_job, servers_after, spelling
):
    """fleet.save_persistables, or fluid.io.save_persistables of the trainer program: both ask the pservers."""
    want = uninterrupted_sync_job
    extra = ["--fluid_save"] if spelling == "fluid" else []
    got = _killed_then_resumed(tmp_path, seed=servers_after, servers_after=servers_after, extra=extra)
    _assert_same_state(got, want)


def test_a_killed_collective_job_resumes_to_the_uninterrupted_parameters(tmp_path):
    want = _run(tmp_path, "whole", collective=True)
    got = _killed_then_resumed(tmp_path, seed=5, collective=True)
    _assert_same_state(got, want)
