"""The optimizers that wrap another (Lookahead, ExponentialMovingAverage, ModelAverage,
RecomputeOptimizer) in collective training: ranks as real processes equal one process on the whole
batch, the averages included (their parameter-server counterparts: test_ps_runtime.py)."""

from __future__ import annotations

import numpy as np
import pytest
from dist_helpers import assert_all_exit_zero
from dist_scripts.collective_train import build
from dist_scripts.ps_train import averaged_params
from models import global_batches
from test_collective_runtime import run_ranks_as_processes

import fleetgraph as paddle


def single_process(optimizer: str, steps: int, rows: int, seed: int = 11) -> dict:
    main, startup, loss = build("mlp", seed, optimizer)
    scope = paddle.static.Scope()
    exe = paddle.static.Executor()
    exe.run(startup, scope=scope)
    for feed in global_batches("mlp", steps, rows, seed):
        exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
    return {p.name: np.array(scope.vars[p.name]) for p in main.all_parameters()} | averaged_params(exe, main, scope)


@pytest.mark.parametrize("optimizer", ["lookahead", "ema", "model_average", "recompute"])
def test_two_ranks_with_a_wrapping_optimizer_equal_one_process(tmp_path, optimizer):
    steps, batch = 12, 8
    args = ["--model", "mlp", "--optimizer", optimizer, "--steps", str(steps), "--batch", str(batch), "--fuse_mb", "1"]
    outs, results = run_ranks_as_processes(tmp_path, 2, args, env={"FLEETGRAPH_RPC_TIMEOUT": "30"})
    assert_all_exit_zero(results)
    want = single_process(optimizer, steps, 2 * batch)
    assert any(n.endswith("@AVERAGED") for n in want) == (optimizer in ("ema", "model_average"))
    for r in range(2):
        trained = np.load(outs[r])
        assert sorted(trained.files) == sorted([*want, "losses"])
        for name, value in want.items():
            np.testing.assert_allclose(trained[name], value, atol=1e-5, err_msg=f"rank {r} {name}")
