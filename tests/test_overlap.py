"""All-reduce overlapped with backward: where the plan starts and waits for each bucket, the ring's
communication thread keeping every rank's operations in one order, and overlapped training ending
bit for bit where training with every all-reduce in place ends."""

from __future__ import annotations

import numpy as np
import pytest
from dist_helpers import assert_all_exit_zero
from dist_scripts.collective_train import build
from test_collective_runtime import run_ranks, run_ranks_as_processes

from fleetgraph.executor import overlap
from fleetgraph.executor.comm import shm
from fleetgraph.executor.comm.collective import RingError
from fleetgraph.executor.comm.config import CommTimeout
from fleetgraph.executor.comm.ring import ASYNC_MIN_BYTES
from fleetgraph.executor.plan import Plan
from fleetgraph.ir import FleetgraphError
from fleetgraph.transpiler import fuse_allreduce_with_plan, insert_allreduce

HIDDEN = (512, 512, 512)  # 1 MiB weight gradients: large enough for the ring to overlap them
FUSE_MB = 2


@pytest.fixture(autouse=True)
def _short_timeout(monkeypatch):
    monkeypatch.setenv("FLEETGRAPH_RPC_TIMEOUT", "5")
    monkeypatch.delenv(overlap.ENV, raising=False)


def _trainer_program(fuse_mb=FUSE_MB):
    main, _, _ = build("mlp", 11, hidden=HIDDEN)
    return fuse_allreduce_with_plan(insert_allreduce(main, nranks=2), fuse_grad_size_in_MB=fuse_mb)


def _plan_lines(program) -> list[str]:
    """Each step as 'start X' / 'wait X' (an overlapped all-reduce of X) or its op type."""
    lines = []
    for step in Plan(program.global_block()).steps:
        kind = {"_Start": "start ", "_Wait": "wait "}.get(type(step).__name__)
        lines.append(f"{kind}{step.op.input('X')[0]}" if kind else step.op.type)
    return lines


def test_each_bucket_starts_after_its_producer_and_is_waited_for_before_the_comm_sync():
    program, buckets = _trainer_program()
    assert [b.fused for b in buckets] == ["@FUSEDVAR@_0", "@FUSEDVAR@_1", "fc_0.w_0@GRAD"]
    lines = _plan_lines(program)
    ops = [op.type for op in program.global_block().ops]
    as_program = ["c_allreduce_sum" if line.startswith("start") else line for line in lines if "wait" not in line]
    assert as_program == ops  # the program's order
    assert lines.count("c_allreduce_sum") == 1  # the last bucket's: only the comm sync would run beside it
    for fused in ("@FUSEDVAR@_0", "@FUSEDVAR@_1"):
        start = lines.index(f"start {fused}")
        assert lines[start - 2 : start] == ["coalesce_tensor", "c_sync_calc_stream"]
        assert "mul_grad" in lines[start:]  # backward goes on while it is reduced
    sync = lines.index("c_sync_comm_stream")
    assert lines[sync - 3 : sync] == ["c_allreduce_sum", "wait @FUSEDVAR@_0", "wait @FUSEDVAR@_1"]
    assert all(line == "scale" for line in lines[sync + 1 : sync + 1 + 2 * len(HIDDEN) + 2])


def test_a_wait_comes_before_the_first_op_reading_a_gradient_of_the_bucket():
    program, _ = _trainer_program()
    block = program.global_block()
    start = next(i for i, op in enumerate(block.ops) if op.type == "c_allreduce_sum")
    block.create_var("peek", [512], "float32")
    block._insert_op(start + 2, "scale", {"X": ["fc_2.b_0@GRAD"]}, {"Out": ["peek"]})  # a view of bucket 0
    lines = _plan_lines(program)
    peek = next(i for i, op in enumerate(block.ops) if op.output_arg_names == ["peek"])
    assert lines[lines.index("wait @FUSEDVAR@_0") + 1] == block.ops[peek].type
    assert lines.index("wait @FUSEDVAR@_0") < lines.index("start @FUSEDVAR@_1")  # not at the comm sync


def test_synchronous_all_reduces_and_overlap_turned_off_leave_the_plan_as_the_program(monkeypatch):
    program, _ = _trainer_program()
    ops = [op.type for op in program.global_block().ops]
    for op in program.global_block().ops:
        if op.type == "c_allreduce_sum":
            op.attrs["use_calc_stream"] = True  # Paddle's spelling for "on the compute stream": in place
    assert _plan_lines(program) == ops
    small, _, _ = build("mlp", 11, hidden=(32,))  # every gradient under ASYNC_MIN_BYTES: the ring runs them at once
    small = insert_allreduce(small, nranks=2)
    assert _plan_lines(small) == [op.type for op in small.global_block().ops]
    program, _ = _trainer_program()
    monkeypatch.setenv(overlap.ENV, "0")
    assert _plan_lines(program) == ops
    monkeypatch.setenv(overlap.ENV, "yes")
    with pytest.raises(FleetgraphError, match=r"FLEETGRAPH_OVERLAP_ALLREDUCE='yes': expected '1' .* or '0'"):
        _plan_lines(program)


@pytest.mark.parametrize("transport", ["shm", "tcp"])
def test_operations_started_on_the_thread_and_run_directly_keep_one_order_on_every_rank(monkeypatch, transport):
    if transport == "shm" and not shm.available():
        pytest.skip("no /dev/shm with POSIX semaphores here")
    monkeypatch.setenv("FLEETGRAPH_RING_TRANSPORT", "auto" if transport == "shm" else "tcp")
    size = ASYNC_MIN_BYTES // 4 + 3

    def body(ring):
        arrays = [np.full(size, ring.rank + k, np.float32) for k in range(3)]
        futures = [ring.allreduce_async(a) for a in arrays[:2]]
        small = ring.allreduce_async(np.array([ring.rank + 1.0], np.float32))  # queued behind them
        shared = ring.broadcast(np.full(5, 10.0 * ring.rank), root=1)  # waits for them first
        futures.append(ring.allreduce_async(arrays[2]))
        return [f.result(timeout=10) for f in futures], small.result(timeout=10), shared, arrays

    results = run_ranks(2, body, transport=transport)
    for result in results:
        if isinstance(result, Exception):
            raise result
        reduced, small, shared, arrays = result
        for k, value in enumerate(reduced):
            assert value is arrays[k]  # in place
            np.testing.assert_array_equal(value, np.full(size, 1 + 2 * k, np.float32))
        np.testing.assert_array_equal(small, [3.0])
        np.testing.assert_array_equal(shared, np.full(5, 10.0))


def test_a_failed_overlapped_all_reduce_fails_its_future_and_every_later_operation(monkeypatch):
    monkeypatch.setenv("FLEETGRAPH_RPC_TIMEOUT", "1")

    def body(ring):
        if ring.rank == 1:
            return None  # never takes part
        failed = ring.allreduce_async(np.zeros(ASYNC_MIN_BYTES // 4, np.float32))
        with pytest.raises(CommTimeout, match=r"c_allreduce_sum on ring 0, rank 0: .*after 1.0 s"):
            failed.result(timeout=10)
        with pytest.raises(RingError, match="unusable after an earlier error: CommTimeout"):
            ring.barrier()
        return True

    assert run_ranks(2, body)[0] is True


def test_overlapped_training_ends_bit_for_bit_where_in_place_training_does(tmp_path):
    args = ["--model", "mlp", "--hidden", ",".join(map(str, HIDDEN)), "--steps", "6", "--batch", "4"]
    args += ["--fuse_mb", str(FUSE_MB)]
    trained = {}
    for mode in ("1", "0"):
        (tmp_path / mode).mkdir()
        outs, results = run_ranks_as_processes(tmp_path / mode, 2, args, env={overlap.ENV: mode})
        assert_all_exit_zero(results)
        trained[mode] = [np.load(outs[r]) for r in range(2)]
    on, off = trained["1"], trained["0"]
    assert set(on[0].files) == set(off[0].files) and len(on[0].files) == 2 * len(HIDDEN) + 3  # + losses
    for name in on[0].files:
        for r in range(2):
            assert on[r][name].tobytes() == off[r][name].tobytes(), f"rank {r} {name}"
        if name != "losses":  # of each rank's own rows
            assert on[0][name].tobytes() == on[1][name].tobytes(), name
