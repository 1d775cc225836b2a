"""Collective training at run time: the ring's all-reduce, broadcast and barrier (ranks as threads
of this process) over both its transports, shared memory and TCP, its errors, and collective
training as real processes on 127.0.0.1 against a single process trained on the whole batches as
the oracle."""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import pytest
import zmq
from dist_helpers import SCRIPTS, ProcessGroup, assert_all_exit_zero, endpoints
from dist_scripts.collective_train import build
from models import global_batches

import fleetgraph as paddle
from fleetgraph.executor.comm import chunks, security, shm
from fleetgraph.executor.comm import ring as ring_module
from fleetgraph.executor.comm.collective import RingError
from fleetgraph.executor.comm.config import CommTimeout
from fleetgraph.executor.comm.ring import Ring
from fleetgraph.executor.comm.wire import Kind, encode
from fleetgraph.ir.dtypes import BFLOAT16
from fleetgraph.ops.collective import coalesced_offsets

COLLECTIVE_TRAIN = os.path.join(SCRIPTS, "collective_train.py")
NO_SHM = "no /dev/shm with POSIX semaphores here"


@pytest.fixture(autouse=True)
def _short_timeout(monkeypatch):
    monkeypatch.setenv("FLEETGRAPH_RPC_TIMEOUT", "5")


@pytest.fixture(params=["shm", "tcp"])
def transport(request, monkeypatch) -> str:
    """Each ring test runs once with the ranks moving bytes through shared memory (the default on
    one host) and once over TCP (as between hosts)."""
    if request.param == "shm" and not shm.available():
        pytest.skip(NO_SHM)
    monkeypatch.setenv("FLEETGRAPH_RING_TRANSPORT", "auto" if request.param == "shm" else "tcp")
    return request.param


def run_ranks(nranks: int, body, delays=None, context=None, transport=None) -> list:
    """Run `body(ring)` on `nranks` rings, one thread each; returns each rank's result or exception.
    With `transport`, each ring must have come up on it."""
    eps = endpoints(nranks)
    context = context or zmq.Context()
    results: list = [None] * nranks

    def rank(r: int) -> None:
        time.sleep((delays or {}).get(r, 0.0))
        ring = None
        try:
            ring = Ring(context, nranks, r, eps, 0)
            assert transport is None or ring.transport == transport, f"rank {r} is on {ring.transport}"
            results[r] = body(ring)
        except Exception as e:
            results[r] = e
        finally:
            if ring is not None:
                ring.close()

    threads = [threading.Thread(target=rank, args=(r,), name=f"rank {r}", daemon=True) for r in range(nranks)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not any(t.is_alive() for t in threads), "a rank is still running after 30 s"
    security.stop(context)  # the ZAP handler a job secret started
    context.term()
    return results


def _raise_first(results: list) -> None:
    for r in results:
        if isinstance(r, Exception):
            raise r


def _contribution(rank: int, size: int, dtype) -> np.ndarray:
    return (np.arange(size) % 97 + 10 * rank).astype(dtype)


@pytest.mark.parametrize("nranks", [2, 3])
def test_allreduce_sums_every_size_in_place(nranks, transport):
    sizes = [0, 1, 5, 3 * 1024 * 1024 + 7]  # 5: not divisible by 3 ranks; the last, 12 MB in many pieces

    def body(ring):
        out = []
        for size in sizes:
            x = _contribution(ring.rank, size, "float32")
            got = ring.allreduce(x, name=f"x{size}")
            assert got is x
            out.append(got)
        return out

    results = run_ranks(nranks, body, transport=transport)
    _raise_first(results)
    for size_index, size in enumerate(sizes):
        want = sum(_contribution(r, size, "float32") for r in range(nranks))
        for r in range(nranks):
            np.testing.assert_array_equal(results[r][size_index], want, err_msg=f"rank {r}, size {size}")


@pytest.mark.parametrize("nranks", [2, 4])
def test_allreduce_and_broadcast_in_many_small_pieces(monkeypatch, nranks, transport):
    monkeypatch.setattr(chunks, "PIECE_BYTES", 1000)  # chunks of dozens of pieces, interleaved
    monkeypatch.setattr(shm, "SEGMENT_BYTES", 4096)  # a last piece shorter than the others

    def body(ring):
        summed = ring.allreduce(_contribution(ring.rank, 20_003, "float64"))
        ints = ring.allreduce(_contribution(ring.rank, 9_999, "int32"))
        return summed, ints, ring.broadcast(_contribution(ring.rank, 5_001, "float32"), root=nranks - 1)

    results = run_ranks(nranks, body, transport=transport)
    _raise_first(results)
    for summed, ints, broadcast in results:
        np.testing.assert_array_equal(summed, sum(_contribution(r, 20_003, "float64") for r in range(nranks)))
        np.testing.assert_array_equal(ints, sum(_contribution(r, 9_999, "int32") for r in range(nranks)))
        np.testing.assert_array_equal(broadcast, _contribution(nranks - 1, 5_001, "float32"))


@pytest.mark.parametrize("nranks", [2, 3])
def test_bfloat16_allreduce_sums_in_float32_rounds_once_and_agrees_on_every_rank(monkeypatch, nranks, transport):
    monkeypatch.setattr(chunks, "PIECE_BYTES", 1000)  # several pieces, and a short last one, on each transport
    monkeypatch.setattr(shm, "SEGMENT_BYTES", 4096)
    size = 5_001
    # bfloat16 values of one magnitude: their float32 sums are exact, so any adding order rounds alike
    contributions = [
        np.random.default_rng(r).uniform(1, 2, size).astype(np.float32).astype(BFLOAT16) for r in range(nranks)
    ]

    def body(ring):
        x = contributions[ring.rank].copy()
        got = ring.allreduce(x, name="g")
        assert got is x and got.dtype == BFLOAT16
        return got, ring.broadcast(contributions[ring.rank].copy(), root=nranks - 1)

    results = run_ranks(nranks, body, transport=transport)
    _raise_first(results)
    exact = sum(c.astype(np.float64) for c in contributions)
    for got, broadcast in results:
        assert got.view(np.uint16).tolist() == results[0][0].view(np.uint16).tolist()  # bit-identical ranks
        np.testing.assert_array_equal(got.astype(np.float64), exact.astype(BFLOAT16).astype(np.float64))
        np.testing.assert_array_equal(broadcast.view(np.uint16), contributions[-1].view(np.uint16))
    if nranks > 2:  # adding in bfloat16 at every hop (NCCL's way) would round twice and differ somewhere
        per_hop = contributions[0] + contributions[1] + contributions[2]
        assert (per_hop != results[0][0]).any()


def test_allreduce_of_a_read_only_or_strided_array_returns_a_new_array(transport):
    def body(ring):
        strided = np.arange(12, dtype=np.float64).reshape(3, 4).T * (ring.rank + 1)
        frozen = np.full((2, 3), ring.rank, dtype=np.int64)
        frozen.flags.writeable = False
        return strided.copy(), ring.allreduce(strided), ring.allreduce(frozen), strided

    results = run_ranks(3, body, transport=transport)
    _raise_first(results)
    for before, summed, frozen_sum, after in results:
        np.testing.assert_array_equal(summed, np.arange(12.0).reshape(3, 4).T * 6)
        np.testing.assert_array_equal(frozen_sum, np.full((2, 3), 3))
        np.testing.assert_array_equal(after, before)  # the input is left as it was


def test_allreduce_of_a_fused_buffer_updates_the_gradients_viewing_it(transport):
    shapes = [(3, 4), (5,), (2, 2, 2)]

    def body(ring):
        offsets, total = coalesced_offsets([int(np.prod(s)) for s in shapes], 4, True)
        fused = np.zeros(total, np.float32)
        views = [fused[o : o + int(np.prod(s))].reshape(s) for o, s in zip(offsets, shapes)]
        for i, view in enumerate(views):
            view[...] = ring.rank + i
        ring.allreduce(fused)
        return views

    results = run_ranks(2, body, transport=transport)
    _raise_first(results)
    for views in results:
        for i, (view, shape) in enumerate(zip(views, shapes)):
            np.testing.assert_array_equal(view, np.full(shape, 1 + 2 * i, np.float32))


def test_broadcast_from_any_root_reaches_every_rank(transport):
    size = 700_000  # several pieces

    def body(ring):
        small = ring.broadcast(np.full(3, ring.rank, np.int32), root=1)
        big = ring.broadcast(_contribution(ring.rank, size, "float32"), root=2)
        ring.barrier()
        return small, big

    results = run_ranks(3, body, transport=transport)
    _raise_first(results)
    for small, big in results:
        np.testing.assert_array_equal(small, [1, 1, 1])
        np.testing.assert_array_equal(big, _contribution(2, size, "float32"))


def test_a_single_rank_returns_at_once():
    ring = Ring(None, 1, 0, ["127.0.0.1:1"], 0)
    x = np.ones(4, np.float32)
    assert ring.allreduce(x) is x and ring.broadcast(x, 0) is x
    ring.barrier()
    ring.close()


def test_a_ring_can_be_made_again_on_the_same_endpoints(transport):
    context = zmq.Context()  # as when a startup program runs twice: the old ring closes, a new one binds

    def body(ring):
        ring.close()
        again = Ring(context, 2, ring.rank, ring.endpoints, 0)
        try:
            assert again.transport == transport
            return again.allreduce(np.ones(3, np.float32))
        finally:
            again.close()

    results = run_ranks(2, body, context=context, transport=transport)
    _raise_first(results)
    np.testing.assert_array_equal(results[0], [2, 2, 2])


def test_ranks_may_start_in_any_order(transport):
    results = run_ranks(
        3, lambda ring: ring.allreduce(np.ones(2, np.float32)), delays={0: 0.4, 1: 0.2}, transport=transport
    )
    _raise_first(results)
    for got in results:
        np.testing.assert_array_equal(got, [3, 3])


def test_with_a_job_secret_a_ring_takes_nothing_from_processes_without_it(monkeypatch):
    """Ranks of a job with FLEETGRAPH_JOB_SECRET over TCP: garbage pushed at a rank's inbox by a
    process without the secret never reaches it (without a secret it breaks the ring)."""
    monkeypatch.setenv("FLEETGRAPH_JOB_SECRET", "ring secret")
    monkeypatch.setenv("FLEETGRAPH_RING_TRANSPORT", "tcp")
    context = zmq.Context()
    pushers = []

    def body(ring):
        if ring.rank == 0:
            sock = context.socket(zmq.DEALER)
            sock.setsockopt(zmq.LINGER, 0)
            sock.connect(f"tcp://{ring.endpoints[0]}")
            for seq in range(200):
                garbage = encode(Kind.RING, "allreduce:0:0:0", np.ones(2, np.float32), sender=1, seq=seq)
                try:  # once the handshake is refused there is no connection to queue on: a send would block
                    sock.send_multipart(garbage, zmq.NOBLOCK)
                except zmq.Again:
                    pass
            pushers.append(sock)
        return [ring.allreduce(np.full(4, ring.rank + 1.0, np.float32)) for _ in range(20)]

    results = run_ranks(2, body, context=zmq.Context(), transport="tcp")
    for sock in pushers:
        sock.close()
    context.term()
    _raise_first(results)
    for rank_results in results:
        for got in rank_results:
            np.testing.assert_array_equal(got, [3, 3, 3, 3])


def test_a_peer_that_never_starts_times_out_naming_its_endpoint(monkeypatch):
    monkeypatch.setenv("FLEETGRAPH_RPC_TIMEOUT", "0.5")
    eps = endpoints(2)
    context = zmq.Context()
    start = time.monotonic()
    try:
        with pytest.raises(CommTimeout) as info:
            Ring(context, 2, 0, eps, 0)
    finally:
        context.term()
    # the 0.5 s timeout and no more (3x margin): closing used to linger 2 s on the unsent hellos
    assert time.monotonic() - start < 1.5
    message = str(info.value)
    assert f"nothing from {eps[1]} after 0.5 s (FLEETGRAPH_RPC_TIMEOUT)" in message
    assert "c_comm_init on ring 0, rank 0" in message


def test_a_malformed_message_is_an_error_naming_the_peer():
    eps = endpoints(2)
    context = zmq.Context()
    fake_inbox, fake_outbox = context.socket(zmq.ROUTER), context.socket(zmq.DEALER)  # rank 1, impersonated
    fake_inbox.bind(f"tcp://{eps[1]}")
    fake_outbox.connect(f"tcp://{eps[0]}")
    fake_outbox.send_multipart([b"FGW1 not a header", b"payload"])
    try:
        with pytest.raises(RingError) as info:
            Ring(context, 2, 0, eps, 0)
    finally:
        fake_inbox.close(linger=0)
        fake_outbox.close(linger=0)
        context.term()
    assert f"c_comm_init on ring 0, rank 0: malformed message from {eps[1]}: header of" in str(info.value)


def test_ranks_running_different_operations_fail_clearly(monkeypatch, transport):
    monkeypatch.setenv("FLEETGRAPH_RPC_TIMEOUT", "1")

    def body(ring):
        x = np.ones(10, np.float32)
        return ring.allreduce(x, name="w@GRAD") if ring.rank == 0 else ring.broadcast(x, root=0, name="w")

    results = run_ranks(2, body, transport=transport)
    assert isinstance(results[1], RingError)
    assert "c_broadcast 'w' on ring 0, rank 1" in str(results[1])
    if transport == "tcp":
        assert "expected broadcast #1 step 0" in str(results[1]) and "got RING allreduce #1 step 0" in str(results[1])
        assert isinstance(results[0], CommTimeout) and "c_allreduce_sum 'w@GRAD'" in str(results[0])
    else:  # both ranks pass the first gate and see what the other runs
        assert "rank 0 ran 'allreduce:10xfloat32' (operation 1) where this rank ran 'broadcast:0:10xfloat32'" in str(
            results[1]
        )
        assert isinstance(results[0], RingError) and "c_allreduce_sum 'w@GRAD' on ring 0, rank 0" in str(results[0])


@pytest.mark.parametrize("dtype_of_rank_1", ["float32", "float64"], ids=["size", "dtype"])
def test_ranks_disagreeing_on_the_size_or_dtype_fail_clearly(monkeypatch, transport, dtype_of_rank_1):
    monkeypatch.setenv("FLEETGRAPH_RPC_TIMEOUT", "1")
    size_of_rank_1 = 5 if dtype_of_rank_1 == "float32" else 4

    def body(ring):
        x = np.ones(4, np.float32) if ring.rank == 0 else np.ones(size_of_rank_1, dtype_of_rank_1)
        return ring.allreduce(x, name="g")

    results = run_ranks(2, body, transport=transport)
    errors = [r for r in results if isinstance(r, RingError)]
    hint = "the ranks disagree on the array's shape or dtype" if transport == "tcp" else "of the same shape and dtype"
    assert errors and hint in str(errors[0])
    if transport == "shm":
        message = str(errors[0])
        assert "'allreduce:4xfloat32'" in message and f"'allreduce:{size_of_rank_1}x{dtype_of_rank_1}'" in message


def test_every_rank_ends_with_the_same_bits(transport):
    """Each chunk is summed by one rank, in rank order, and copied to the others: float sums that
    depend on the order still agree bit for bit on every rank."""
    rng = np.random.default_rng(5)
    contributions = [rng.standard_normal(100_003).astype(np.float32) * 10.0**r for r in range(3)]
    results = run_ranks(3, lambda ring: ring.allreduce(contributions[ring.rank].copy()), transport=transport)
    _raise_first(results)
    np.testing.assert_allclose(results[0], contributions[0] + contributions[1] + contributions[2], rtol=1e-5, atol=1e-4)
    assert all(np.array_equal(results[0], got) for got in results[1:])


def _our_shm_files() -> set[str]:
    return {f for f in os.listdir(shm.SHM_DIR) if f.startswith("fleetgraph-")}


needs_shm = pytest.mark.skipif(not shm.available(), reason=NO_SHM)


@needs_shm
def test_shared_memory_leaves_nothing_in_dev_shm(monkeypatch):
    monkeypatch.setenv("FLEETGRAPH_RING_TRANSPORT", "auto")
    before = _our_shm_files()
    seen_while_up = []

    def body(ring):
        ring.barrier()  # every rank is up
        seen_while_up.append(_our_shm_files() - before)
        return ring.allreduce(np.ones(3, np.float32))

    results = run_ranks(2, body, transport="shm")
    _raise_first(results)
    assert seen_while_up == [set(), set()]  # the files went once every rank had mapped them
    assert _our_shm_files() == before


@needs_shm
def test_ranks_that_cannot_all_map_each_other_agree_on_tcp(monkeypatch):
    """As when the ranks run on different hosts: here rank 0's segment cannot be opened by the others."""
    monkeypatch.setenv("FLEETGRAPH_RING_TRANSPORT", "auto")
    opened = shm._Segment.open
    monkeypatch.setattr(shm._Segment, "open", classmethod(lambda cls, p, n, r: None if r == 0 else opened(p, n, r)))
    before = _our_shm_files()
    results = run_ranks(3, lambda ring: ring.allreduce(np.arange(5, dtype=np.float64)), transport="tcp")
    _raise_first(results)
    for got in results:
        np.testing.assert_array_equal(got, 3 * np.arange(5.0))
    assert _our_shm_files() == before


@needs_shm
def test_a_full_dev_shm_is_a_warning_and_the_ring_runs_over_tcp(monkeypatch, caplog):
    monkeypatch.setenv("FLEETGRAPH_RING_TRANSPORT", "auto")

    def no_space(fd, offset, length):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(shm.os, "posix_fallocate", no_space)
    before = _our_shm_files()
    with caplog.at_level("WARNING", logger="fleetgraph.comm"):
        results = run_ranks(2, lambda ring: ring.allreduce(np.ones(4, np.int64)), transport="tcp")
    _raise_first(results)
    np.testing.assert_array_equal(results[1], [2, 2, 2, 2])
    assert "ring 0, rank 1: cannot reserve 4 MiB in /dev/shm: [Errno 28] No space left on device; the ring " in (
        caplog.text
    )
    assert _our_shm_files() == before


@needs_shm
def test_one_rank_asking_for_tcp_makes_the_whole_ring_tcp(monkeypatch):
    monkeypatch.setattr(
        ring_module, "ring_transport", lambda: "tcp" if threading.current_thread().name == "rank 1" else "auto"
    )
    results = run_ranks(3, lambda ring: (ring.transport, ring.allreduce(np.ones(2, np.float32))))
    _raise_first(results)
    assert [transport for transport, _ in results] == ["tcp"] * 3
    np.testing.assert_array_equal(results[0][1], [3, 3])


def test_after_a_failed_operation_the_ring_says_it_is_unusable(monkeypatch, transport):
    monkeypatch.setenv("FLEETGRAPH_RPC_TIMEOUT", "0.5")

    def body(ring):
        if ring.rank == 1:
            return None  # misses the all-reduce
        with pytest.raises(CommTimeout):
            ring.allreduce(np.ones(3, np.float32), name="a")
        with pytest.raises(RingError) as info:
            ring.barrier()
        return str(info.value)

    results = run_ranks(2, body, transport=transport)
    _raise_first(results)
    unusable = "barrier on ring 0, rank 0: the ring is unusable after an earlier error: CommTimeout: "
    assert results[0].startswith(unusable)
    assert "c_allreduce_sum 'a'" in results[0] and "hint: make the ring again" in results[0]


@needs_shm
def test_closing_the_ring_wakes_a_thread_waiting_in_it(monkeypatch):
    monkeypatch.setenv("FLEETGRAPH_RING_TRANSPORT", "auto")
    monkeypatch.setenv("FLEETGRAPH_RPC_TIMEOUT", "10")

    def body(ring):
        if ring.rank == 1:
            time.sleep(1.5)  # never joins the barrier below
            return None
        failure = []

        def wait_at_barrier():
            try:
                ring.barrier()
            except RingError as e:
                failure.append((str(e), time.monotonic()))

        waiter = threading.Thread(target=wait_at_barrier)
        waiter.start()
        time.sleep(0.3)
        closed_at = time.monotonic()
        ring.close()
        waiter.join(timeout=5)
        return failure, closed_at

    results = run_ranks(2, body, transport="shm")
    _raise_first(results)
    (message, failed_at), closed_at = results[0][0][0], results[0][1]
    assert "barrier on ring 0, rank 0: the ring was closed while this rank waited for the others" in message
    assert failed_at - closed_at < 1


def test_a_rank_missing_from_a_shared_memory_operation_times_out_naming_it(monkeypatch):
    monkeypatch.setenv("FLEETGRAPH_RPC_TIMEOUT", "0.5")

    def body(ring):
        if ring.rank == 1:
            return None  # never joins
        start = time.monotonic()
        try:
            ring.allreduce(np.ones(8, np.float32), name="w@GRAD")
        except CommTimeout as e:
            return e, time.monotonic() - start

    results = run_ranks(2, body, transport="shm")
    error, waited = results[0]
    assert waited < 3
    assert "c_allreduce_sum 'w@GRAD' on ring 0, rank 0: rank(s) [1] (127.0.0.1:" in str(error)
    assert "did not reach 'allreduce:8xfloat32' of operation 1 after 0.5 s (FLEETGRAPH_RPC_TIMEOUT)" in str(error)


def test_an_unknown_ring_transport_is_one_clear_error(monkeypatch):
    monkeypatch.setenv("FLEETGRAPH_RING_TRANSPORT", "rdma")
    results = run_ranks(2, lambda ring: None)
    assert all(isinstance(r, paddle.FleetgraphError) for r in results)
    assert "FLEETGRAPH_RING_TRANSPORT='rdma': expected one of ['auto', 'tcp'], e.g. tcp" in str(results[0])


def test_pieces_cover_each_chunk_as_array_split_does():
    for size, n in [(0, 3), (1, 3), (5, 3), (10**6 + 3, 4)]:
        pieces = chunks.pieces(size, n, 4)
        expected = np.array_split(np.arange(size), n)
        for chunk, chunk_pieces in zip(expected, pieces):
            covered = np.concatenate([np.arange(a, b) for a, b in chunk_pieces])
            np.testing.assert_array_equal(covered, chunk)
            assert all(b - a <= chunks.PIECE_BYTES // 4 for a, b in chunk_pieces)


def test_the_schedule_sends_every_message_once_and_after_the_one_it_forwards():
    for steps, count, window in [(2, 1, 1), (2, 8, 2), (4, 5, 2), (6, 3, 3)]:
        order = chunks.schedule(steps, count, window)
        assert sorted(order) == [(s, p) for s in range(steps) for p in range(count)]
        position = {message: i for i, message in enumerate(order)}
        assert all(position[(s - 1, p)] < position[(s, p)] for s, p in order if s > 0)


# -- training as processes ----------------------------------------------------------------------


def run_ranks_as_processes(tmp_path, nranks: int, args: list[str], env=None) -> tuple[dict, dict]:
    eps = ",".join(endpoints(nranks))
    outs = {r: str(tmp_path / f"rank{r}.npz") for r in range(nranks)}
    with ProcessGroup(timeout=120) as group:
        for r in range(nranks):
            extra = {"FLEETGRAPH_RPC_TIMEOUT": "30", **(env or {})}
            group.start(f"rank {r}", [COLLECTIVE_TRAIN, str(r), "--endpoints", eps, "--out", outs[r], *args], env=extra)
        results = group.wait()
    return outs, results


def single_process(model: str, steps: int, rows: int, seed: int = 11) -> dict:
    """The oracle: the same model and seed trained on the whole global batches in one process."""
    main, startup, loss = build(model, seed)
    scope = paddle.static.Scope()
    exe = paddle.static.Executor()
    exe.run(startup, scope=scope)
    for feed in global_batches(model, steps, rows, seed):
        exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
    return {p.name: np.array(scope.vars[p.name]) for p in main.all_parameters()}


COLLECTIVE_CASES = {
    f"{opt}-{layout}": (model, *how)
    for model, opt in (("fit_a_line", "sgd"), ("mlp", "adam"))
    for layout, how in {
        "2-unfused": (2, 0, "auto"),
        "2-fused": (2, 32, "auto"),
        "3-unfused": (3, 0, "auto"),
        "3-fused": (3, 32, "auto"),
        "2-unfused-tcp": (2, 0, "tcp"),
        "3-fused-tcp": (3, 32, "tcp"),
    }.items()
}
COLLECTIVE_CASES["decay_clip-2-fused"] = ("mlp_clip", 2, 32, "auto")  # clipping after the all-reduce
COLLECTIVE_CASES["decay_clip-3-unfused"] = ("mlp_clip", 3, 0, "auto")
COLLECTIVE_CASES["while_loop-2-fused"] = ("loop_rnn", 2, 32, "auto")  # gradients summed over iterations, reduced once
COLLECTIVE_CASES["lstm-2-fused"] = ("lstm", 2, 32, "auto")  # the fused rnn op's weights, read at every step


@pytest.mark.parametrize("model, nranks, fuse_mb, transport", COLLECTIVE_CASES.values(), ids=COLLECTIVE_CASES.keys())
def test_collective_training_equals_single_process_on_the_whole_batch(tmp_path, model, nranks, fuse_mb, transport):
    steps, batch = 20, 8
    args = ["--model", model, "--steps", str(steps), "--batch", str(batch), "--fuse_mb", str(fuse_mb)]
    outs, results = run_ranks_as_processes(tmp_path, nranks, args, env={"FLEETGRAPH_RING_TRANSPORT": transport})
    assert_all_exit_zero(results)
    want = single_process(model, steps, nranks * batch)
    for r in range(nranks):
        trained = np.load(outs[r])
        on = "shm" if transport == "auto" and shm.available() else "tcp"
        assert f"{1 if fuse_mb else 0} fused buckets, ring over {on}" in results[f"rank {r}"][1]
        for name, value in want.items():
            np.testing.assert_allclose(trained[name], value, atol=1e-5, err_msg=f"rank {r} {name}")


@pytest.mark.parametrize("transport", ["auto", "tcp"])
def test_a_rank_that_stops_early_makes_the_others_time_out_naming_the_gradient(tmp_path, transport):
    args = ["--model", "fit_a_line", "--steps", "3", "--steps_for", "1:0"]
    env = {"FLEETGRAPH_RPC_TIMEOUT": "1", "FLEETGRAPH_RING_TRANSPORT": transport}
    _, results = run_ranks_as_processes(tmp_path, 2, args, env=env)
    code, output = results["rank 0"]
    assert results["rank 1"][0] == 0 and code != 0
    assert "(c_allreduce_sum)" in output and "@GRAD" in output
    on_shm = transport == "auto" and shm.available()
    waited_for = "rank(s) [1] (127.0.0.1:" if on_shm else "nothing from 127.0.0.1:"
    assert f"c_allreduce_sum on ring 0, rank 0: {waited_for}" in output
    assert "after 1.0 s (FLEETGRAPH_RPC_TIMEOUT)" in output


def test_a_ring_started_again_with_the_same_members_is_the_running_one(monkeypatch):
    """A program's c_comm_init after init_parallel_env (a DataParallel part, then a fleet program, in
    one job) asks for ring 0 again on the same endpoints. Closing and rebinding it lost the first
    rank's authentication in the old socket of a rank that had not yet come to the new one (both
    timed out); the running ring now serves again."""
    from fleetgraph.executor.comm import ProcessComm

    monkeypatch.setenv("FLEETGRAPH_JOB_SECRET", "a secret both ranks share")
    eps = endpoints(2)
    comms = [ProcessComm(), ProcessComm()]
    results: list = [None, None]

    def rank(r: int) -> None:
        try:
            first = comms[r].init_ring(0, 2, r, eps)
            first.barrier()
            time.sleep(0.5 * r)  # rank 1 comes to the second start late, its first ring still open
            again = comms[r].init_ring(0, 2, r, eps)
            results[r] = (again is first, again.allreduce(np.full(2, r + 1.0, np.float32)))
        except Exception as e:
            results[r] = e

    threads = [threading.Thread(target=rank, args=(r,), daemon=True) for r in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    for comm in comms:
        comm.close()
    _raise_first(results)
    for same, total in results:
        assert same
        np.testing.assert_array_equal(total, [3, 3])
