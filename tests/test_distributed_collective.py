"""paddle.distributed's collectives in dynamic mode between two trainers that paddle.distributed.spawn
starts (Paddle 2.0's test_collective_*_api.py values: rank r holds (r + 1) * base), and the static
forms of all_reduce and broadcast."""

from __future__ import annotations

import numpy as np
import pytest

import fleetgraph as paddle
from fleetgraph.ir import FleetgraphError

BASE = np.array([[1.0, -2.0], [3.0, 0.5]], np.float32)


def _collectives():
    """Run in each spawned trainer: every collective on rank-dependent tensors; their results."""
    import fleetgraph as paddle

    dist = paddle.distributed
    paddle.disable_static()
    dist.init_parallel_env()
    rank = dist.get_rank()

    def mine():
        return paddle.to_tensor(BASE * (rank + 1))

    out = {"rank": rank, "world": dist.get_world_size()}
    for name, op in (("sum", dist.ReduceOp.SUM), ("max", dist.ReduceOp.MAX), ("min", dist.ReduceOp.MIN),
                     ("prod", dist.ReduceOp.PROD)):  # fmt: skip
        t = mine()
        dist.all_reduce(t, op)
        out[name] = t.numpy()
    t = mine()
    dist.broadcast(t, src=1)
    out["broadcast"] = t.numpy()
    gathered = []
    dist.all_gather(gathered, mine())
    out["all_gather"] = [g.numpy() for g in gathered]
    t = mine()
    dist.reduce(t, dst=0)
    out["reduce"] = t.numpy()
    t = paddle.to_tensor(np.zeros_like(BASE))
    dist.scatter(t, [paddle.to_tensor(BASE * 10), paddle.to_tensor(BASE * 20)] if rank == 0 else None, src=0)
    out["scatter"] = t.numpy()
    dist.barrier()
    return out


def test_two_spawned_trainers_reduce_broadcast_gather_and_scatter():
    context = paddle.distributed.spawn(_collectives, nprocs=2)
    results = sorted((q.get() for q in context.return_queues), key=lambda r: r["rank"])
    a, b = BASE, BASE * 2
    for r in results:
        assert r["world"] == 2
        np.testing.assert_allclose(r["sum"], a + b)
        np.testing.assert_allclose(r["max"], np.maximum(a, b))
        np.testing.assert_allclose(r["min"], np.minimum(a, b))
        np.testing.assert_allclose(r["prod"], a * b)
        np.testing.assert_allclose(r["broadcast"], b)
        np.testing.assert_allclose(np.stack(r["all_gather"]), np.stack([a, b]))
        np.testing.assert_allclose(r["scatter"], BASE * (10 if r["rank"] == 0 else 20))
    np.testing.assert_allclose(results[0]["reduce"], a + b)
    np.testing.assert_allclose(results[1]["reduce"], b)  # not dst: its own


def test_a_job_of_one_leaves_tensors_as_they_are_and_refuses_other_groups():
    paddle.disable_static()
    t = paddle.to_tensor(BASE)
    paddle.distributed.all_reduce(t)
    np.testing.assert_allclose(t.numpy(), BASE)
    gathered = []
    paddle.distributed.all_gather(gathered, t)
    assert len(gathered) == 1
    with pytest.raises(NotImplementedError, match="group 1"):
        paddle.distributed.all_reduce(t, group=1)
    with pytest.raises(ValueError, match="ReduceOp"):
        paddle.distributed.all_reduce(t, op=7)


def test_static_all_reduce_and_broadcast_append_paddles_ops():
    paddle.enable_static()
    main = paddle.static.Program()
    with paddle.static.program_guard(main, paddle.static.Program()):
        x = paddle.static.data("x", [2, 2], "float32")
        paddle.distributed.all_reduce(x)
        paddle.distributed.broadcast(x, src=0)
        with pytest.raises(NotImplementedError, match="ReduceOp.SUM"):
            paddle.distributed.all_reduce(x, paddle.distributed.ReduceOp.MAX)
    ops = main.global_block().ops
    assert [op.type for op in ops] == ["c_allreduce_sum", "c_broadcast"]
    assert ops[0].output("Out") == ["x"] and ops[1].attrs["root"] == 0


def test_spawn_reports_a_failing_process():
    with pytest.raises(FleetgraphError, match="process 0 ended"):
        paddle.distributed.spawn(_fail, nprocs=1)


def _fail():
    raise RuntimeError("trainer fails on purpose")


def test_fleet_util_is_a_util_base():
    assert isinstance(paddle.distributed.fleet.util, paddle.distributed.fleet.UtilBase)


def test_static_all_gather_appends_c_allgather_and_splits_it_per_rank(monkeypatch):
    """Paddle 2.0's: c_allgather over the job's ranks (ParallelEnv's), then split along axis 0."""
    monkeypatch.setenv("PADDLE_TRAINERS_NUM", "2")
    paddle.enable_static()
    main = paddle.static.Program()
    with paddle.static.program_guard(main, paddle.static.Program()):
        parts = []
        paddle.distributed.all_gather(parts, paddle.static.data("x", [2, 3], "float32"))
    ops = main.global_block().ops
    assert [op.type for op in ops] == ["c_allgather", "split"]
    assert ops[0].attrs["nranks"] == 2 and ops[0].attrs["use_calc_stream"]
    assert [p.shape for p in parts] == [(2, 3), (2, 3)]
