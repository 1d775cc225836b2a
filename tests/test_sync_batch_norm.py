"""SyncBatchNorm on real processes: a 2-rank job started by `launch --nproc_per_node 2`, each rank on
half of every batch, ends where one process training BatchNorm on the whole batch ends, in dynamic
mode (paddle.DataParallel) and in a static fleet collective program."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from dist_helpers import REPO, SCRIPTS

sys.path.insert(0, SCRIPTS)
import sync_batch_norm_job as job  # noqa: E402

PARTS = ("dynamic", "static")


@pytest.fixture(scope="module")
def ranks(tmp_path_factory) -> list[dict]:
    """One launched job for every assertion: each rank's saved arrays."""
    out = tmp_path_factory.mktemp("sync_bn")
    env = dict(os.environ, PYTHONPATH=REPO, FLEETGRAPH_RPC_TIMEOUT="30")
    args = ["--nproc_per_node", "2", "--log_dir", str(out / "log"), os.path.join(SCRIPTS, "sync_batch_norm_job.py")]
    proc = subprocess.Popen(
        [sys.executable, "-m", "fleetgraph.distributed.launch", *args, str(out)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        log, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
            proc.communicate()
    logs = "".join((out / "log" / f"workerlog.{r}").read_text()[-2000:] for r in range(2) if (out / "log").exists())
    assert proc.returncode == 0, log[-3000:] + logs
    return [dict(np.load(out / f"rank{r}.npz")) for r in range(2)]


@pytest.fixture(scope="module")
def oracle() -> dict:
    """One process, BatchNorm, the whole batch: each part's results under the job's keys."""
    from fleetgraph.dygraph import mode

    old = mode._mode
    try:
        mode._mode = None
        dynamic = job.dynamic()
        static = job.static()
    finally:
        mode._mode = old
    return {f"{part}/{k}": v for part, got in zip(PARTS, (dynamic, static)) for k, v in got.items()}


def _close(got, want, what):
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=what)


@pytest.mark.parametrize("part", PARTS)
def test_two_ranks_losses_average_to_the_whole_batch_loss(ranks, oracle, part):
    _close((ranks[0][f"{part}/losses"] + ranks[1][f"{part}/losses"]) / 2, oracle[f"{part}/losses"], part)


@pytest.mark.parametrize("part", PARTS)
def test_two_ranks_end_with_the_whole_batch_parameters_and_running_statistics(ranks, oracle, part):
    names = sorted(k for k in oracle if k.startswith(f"{part}/state/"))
    assert {n.split("/")[-1].split(".")[-1] for n in names} >= {"weight", "bias", "_mean", "_variance"}
    for rank in ranks:
        assert sorted(k for k in rank if k.startswith(f"{part}/state/")) == names
        for name in names:
            _close(rank[name], oracle[name], name)


@pytest.mark.parametrize("part", PARTS)
def test_eval_mode_normalizes_by_the_running_statistics_of_the_whole_batch(ranks, oracle, part):
    for rank in ranks:
        _close(rank[f"{part}/eval"], oracle[f"{part}/eval"], part)


def test_build_strategy_sync_batch_norm_normalizes_cpu_replicas_by_the_whole_batch(oracle):
    """Two CPU replicas of one process with BuildStrategy.sync_batch_norm end as one replica on the
    whole batch; without it each replica normalizes by its own half (and the running statistics
    are replica 0's)."""
    from fleetgraph.dygraph import mode

    old = mode._mode
    try:
        synced = job.static(sync=True, replicas=2)
        local = job.static(sync=False, replicas=2)
    finally:
        mode._mode = old
    for key, got in synced.items():
        _close(got, oracle[f"static/{key}"], key)
    assert not np.allclose(local["state/bn._mean"], oracle["static/state/bn._mean"], rtol=1e-3)


def test_sync_batch_norm_exports_for_inference_as_batch_normalization():
    import onnx
    from onnx.reference import ReferenceEvaluator

    import fleetgraph as paddle
    from fleetgraph.dygraph import mode
    from fleetgraph.ir import unique_name
    from fleetgraph.onnx.export import export

    old = mode._mode
    try:
        paddle.enable_static()
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup), unique_name.guard():
            x = paddle.static.data("x", [-1, 3, 4, 4], "float32")
            norm = paddle.nn.SyncBatchNorm(3)
            norm.eval()
            y = norm(x)
        scope = paddle.static.Scope()
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup, scope=scope)
        scope.vars[norm._mean.name] = np.array([0.5, -1.0, 2.0], "float32")
        scope.vars[norm._variance.name] = np.array([4.0, 0.25, 1.0], "float32")
        feed = np.random.default_rng(0).normal(size=(2, 3, 4, 4)).astype("float32")
        (want,) = exe.run(main, feed={"x": feed}, fetch_list=[y], scope=scope)
        model = export(main, ["x"], [y.name], scope.vars)
    finally:
        mode._mode = old
    onnx.checker.check_model(model, full_check=True)
    assert [n.op_type for n in model.graph.node if n.op_type != "Identity"] == ["BatchNormalization"]
    (got,) = ReferenceEvaluator(model).run(None, {"x": feed})
    _close(got, want, "onnx")
    _close(want, (feed - [[[0.5]], [[-1.0]], [[2.0]]]) / np.sqrt(np.array([4.0, 0.25, 1.0])[:, None, None] + 1e-5), "y")
