"""The executor's BLAS pool: one thread unless the environment says otherwise, the user's setting
or the launcher's share of the cores for each of a host's processes."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from dist_helpers import REPO

from fleetgraph.distributed.launch import make_plan, parse_args
from fleetgraph.executor.native import BLAS_THREADS, THREAD_POOL_VARS


def blas_threads(env: dict[str, str], module: str = "fleetgraph") -> int:
    """The BLAS pool's width in a fresh process with only `env` of the thread variables, once it
    imported `module`."""
    clean = {k: v for k, v in os.environ.items() if k not in THREAD_POOL_VARS}
    code = (
        f"import {module}, threadpoolctl\n"
        "print(max(p['num_threads'] for p in threadpoolctl.threadpool_info() if p['user_api'] == 'blas'))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**clean, **env, "PYTHONPATH": REPO},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return int(done.stdout)


def test_the_executor_holds_the_blas_pool_to_one_thread_by_default():
    assert BLAS_THREADS == 1
    assert blas_threads({}) == 1


@pytest.mark.parametrize("name", THREAD_POOL_VARS)
def test_a_thread_variable_in_the_environment_leaves_the_pool_as_the_blas_library_set_it(name):
    # the library reads the variables it knows when it loads; the executor changes nothing then
    assert blas_threads({name: "2"}) == blas_threads({name: "2"}, module="numpy")


def two_rank_plan(folder):
    script = folder / "train.py"
    script.write_text("")
    return make_plan(parse_args(["--nproc_per_node", "2", str(script)]))


def test_the_launcher_gives_each_local_rank_its_share_of_the_cores_and_the_executor_keeps_it(tmp_path, monkeypatch):
    for name in THREAD_POOL_VARS:
        monkeypatch.delenv(name, raising=False)
    plan = two_rank_plan(tmp_path)
    share = str(max(1, (os.cpu_count() or 1) // 2))
    for spec in plan.local:
        assert {name: spec.env.get(name) for name in THREAD_POOL_VARS} == dict.fromkeys(THREAD_POOL_VARS, share)
    assert blas_threads(dict.fromkeys(THREAD_POOL_VARS, share)) == int(share)


def test_the_users_thread_variable_wins_over_the_launchers_share(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
    plan = two_rank_plan(tmp_path)
    assert all("OPENBLAS_NUM_THREADS" not in spec.env for spec in plan.local)  # the inherited "2" stays
