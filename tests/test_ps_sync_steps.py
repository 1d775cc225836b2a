"""Sync steps stay all or none across pservers whatever dies, and whatever the trainers still alive
send afterwards (exe.close(), a checkpoint saved on error): cases played over the wire, and twenty
jobs with a trainer killed at a random moment. Every role is forked from one process that imported
ps_train.py once (forked_roles.py), so a job starts in milliseconds."""

from __future__ import annotations

import os
import random
import re
import time

import numpy as np
import pytest
from dist_helpers import endpoints
from forked_roles import ForkedGroup, Forks, kill

KILL_RUNS = 20
KILL_TIMEOUT_S = 2
PLAYED_TIMEOUT_S = 3


@pytest.fixture(scope="module")
def forks():
    forks = Forks()
    yield forks
    forks.close()


def _steps_of(out: str) -> int:
    found = re.search(r"stopped after (\d+) optimization steps", out)
    assert found, out[-2000:]
    return int(found.group(1))


def _pserver_steps(eps, results) -> list[int]:
    return [_steps_of(results[f"pserver {ep}"][1]) for ep in eps]


def _assert_one_step(saved: str, step: int, trainer_out: str) -> None:
    """The checkpoint `saved` is labelled `step` and holds every parameter as trainer 0 held it when
    its training failed: the values of its last recv, all from that step."""
    from fleetgraph.store import checkpoint

    # the save used to fail too when the failed barrier left another pserver's answer unread
    assert os.path.exists(os.path.join(saved, "manifest.json")), trainer_out[-3000:]
    assert checkpoint.meta(saved)["step"] == step
    arrays = checkpoint.load(saved)
    held = np.load(saved + ".held.npz")
    assert sorted(held.files) == ["fc_0.b_0", "fc_0.w_0"]
    for name in held.files:
        np.testing.assert_array_equal(arrays[name], held[name], err_msg=f"{name} of the checkpoint at step {step}")


def _job(forks, directory, eps, steps: int, timeout_s: float, trainer0: list[str]) -> ForkedGroup:
    """Both pservers and trainer 0 (with the options `trainer0`) of a 2 x 2 sync fit_a_line job."""
    env = {"FLEETGRAPH_RPC_TIMEOUT": str(timeout_s)}
    common = ["--pservers", ",".join(eps), "--trainers", "2", "--steps", str(steps)]
    group = ForkedGroup(forks, str(directory), timeout=60)
    for ep in eps:
        group.start(f"pserver {ep}", ["pserver", ep, *common], env=env)
    group.start("trainer 0", ["trainer", "0", "--out", os.devnull, *trainer0, *common], env=env)
    return group


# -- a trainer that dies between its barriers to two pservers, played over the wire ---------------

SAVE = ["--save_on_error", "SAVED", "--close_on_error"]
# case: (what trainer 0 does once its barrier failed, the pserver that gets trainer 1's barrier)
CASES = {"exit": ([], 0), "close": (["--close_on_error"], 0), "save": (SAVE, 0), "save, second answered": (SAVE, 1)}


@pytest.fixture(scope="module")
def half_barriered_jobs(forks, tmp_path_factory):
    """One job for each of CASES, all at once: trainer 1, played here, sends its gradients to both
    pservers and its send barrier to one of them only, and dies. Trainer 0's barrier is answered by
    that pserver and refused by the other; then trainer 0 just fails, or calls exe.close() first, or
    saves a checkpoint and closes. {case: (endpoints, results, checkpoint)}."""
    import zmq

    from fleetgraph.executor.comm.wire import Kind, decode, encode

    jobs = {}
    for case, (options, _) in CASES.items():
        directory = tmp_path_factory.mktemp(case.replace(" ", "_").replace(",", ""))
        saved = str(directory / "saved")
        eps = endpoints(2)
        options = [saved if o == "SAVED" else o for o in options]
        jobs[case] = (eps, _job(forks, directory, eps, 5, PLAYED_TIMEOUT_S, options), saved)
    context = zmq.Context()
    socks = []

    def ask(sock, frames):
        sock.send_multipart(frames)
        assert sock.poll(20000), "no answer from a pserver"
        return decode(sock.recv_multipart())

    try:
        for case, (eps, _, _) in jobs.items():
            pair = [context.socket(zmq.DEALER) for _ in eps]
            socks += pair
            for sock, ep in zip(pair, eps):
                sock.setsockopt(zmq.LINGER, 0)
                sock.connect(f"tcp://{ep}")
                assert ask(sock, encode(Kind.FETCH_BARRIER, sender=1, seq=1)).kind == Kind.ACK  # its startup
            grads = [("fc_0.b_0@GRAD.trainer_1", (1,)), ("fc_0.w_0@GRAD.trainer_1", (13, 1))]
            for sock, (name, shape) in zip(pair, grads):
                assert ask(sock, encode(Kind.SEND, name, np.zeros(shape, "float32"), sender=1, seq=2)).kind == Kind.ACK
            pair[CASES[case][1]].send_multipart(encode(Kind.SEND_BARRIER, sender=1, seq=3))  # ... and dies
        results = {case: (eps, group.wait(), saved) for case, (eps, group, saved) in jobs.items()}
    finally:
        for sock in socks:
            sock.close()
        context.term()
    return results


def test_a_trainer_dying_between_its_barriers_to_two_pservers_leaves_both_on_the_same_step(half_barriered_jobs):
    """The first pserver used to apply the step (it had every barrier) while the second could not;
    a step is applied only by a message that commits it, sent once every pserver answered."""
    eps, results, _ = half_barriered_jobs["exit"]
    assert _pserver_steps(eps, results) == [0, 0]
    assert "the next one prepared but not applied" in results[f"pserver {eps[0]}"][1]
    assert results["trainer 0"][0] != 0


def test_closing_after_a_failed_barrier_leaves_every_pserver_on_the_same_step(half_barriered_jobs):
    """exe.close() after the failed barrier used to make the first pserver apply the step (any message
    did) while the second could not: the pservers stopped one step apart."""
    eps, results, _ = half_barriered_jobs["close"]
    outs = [results[f"pserver {ep}"][1] for ep in eps]
    assert _pserver_steps(eps, results) == [0, 0]
    assert all(f"listen_and_serv {ep}: no message from trainers [1]" in out for ep, out in zip(eps, outs))  # closed
    assert "step 1 discarded at COMPLETE" in outs[0]
    assert "send_barrier of trainer 0" in results["trainer 0"][1]


def test_a_checkpoint_saved_after_a_failed_barrier_holds_every_parameter_from_one_step(half_barriered_jobs):
    """Saving after the failed barrier used to make the first pserver apply the step at the save's
    request: the checkpoint held a stepped fc_0.b_0 beside an unstepped fc_0.w_0, labelled step 0."""
    eps, results, saved = half_barriered_jobs["save"]
    assert _pserver_steps(eps, results) == [0, 0]
    _assert_one_step(saved, 0, results["trainer 0"][1])
    assert "step 1 discarded at STATE" in results[f"pserver {eps[0]}"][1]


def test_a_checkpoint_saved_when_only_the_second_pserver_answered_holds_every_parameter_from_one_step(
    half_barriered_jobs,
):
    """The first pserver refuses trainer 0's barrier before the second's answer is read: the save
    used to read that answer as its own and fail ('answer to request 3, expected 5'); the client now
    gives up a socket whose answers it stopped reading, and the second pserver discards the step."""
    eps, results, saved = half_barriered_jobs["save, second answered"]
    assert _pserver_steps(eps, results) == [0, 0]
    _assert_one_step(saved, 0, results["trainer 0"][1])
    assert "step 1 discarded at STATE" in results[f"pserver {eps[1]}"][1]


def test_the_step_a_message_commits_travels_in_its_header_and_never_with_a_selected_rows():
    from fleetgraph.executor.comm.wire import FLAG_COMMIT, Kind, WireError, decode, decode_batch, encode, encode_batch
    from fleetgraph.ops.selected_rows import SelectedRows

    get = decode(encode(Kind.GET_BATCH, "w\nb", sender=0, seq=3, commit=7))
    assert (get.kind, get.name, get.seq, get.commit) == (Kind.GET_BATCH, "w\nb", 3, 7)
    assert decode(encode(Kind.GET_BATCH, "w", sender=0, seq=3)).commit == 0
    send = encode(Kind.SEND, "g", np.ones(2, "float32"), sender=0, seq=4)
    frames = [bytes(f) for f in encode_batch([send], sender=0, seq=4, commit=8)]
    batch = decode(frames[:2])
    assert batch.commit == 8 and [m.commit for m in decode_batch(batch, frames[2:])] == [0]
    rows = SelectedRows(np.array([1]), np.ones((1, 2), "float32"), 5)
    with pytest.raises(WireError, match="SelectedRows header holds its height"):
        encode(Kind.SEND, "t", rows, sender=0, seq=5, commit=1)
    head, *payload = encode(Kind.SEND, "t", rows, sender=0, seq=5)
    forged = head[:7] + bytes([head[7] | FLAG_COMMIT]) + head[8:]  # flags is the header's 8th byte
    with pytest.raises(WireError, match="both SelectedRows and COMMIT"):
        decode([forged, *[bytes(p) for p in payload]])


# -- trainers killed at random moments ------------------------------------------------------------


def _wait_for_file(path, limit_s: float = 60) -> None:
    deadline = time.monotonic() + limit_s
    while not os.path.exists(path):
        assert time.monotonic() < deadline, f"{path} not created within {limit_s} s"
        time.sleep(0.01)


@pytest.fixture(scope="module")
def killed_sync_jobs(forks, tmp_path_factory):
    """KILL_RUNS sync jobs (2 pservers x 2 trainers), trainer 1 killed at a random moment of each
    once it trained a step; trainer 0, failing at its next barrier, saves a checkpoint and closes:
    [(pserver endpoints, {name: (exit status, output)}, checkpoint, seconds from the kill to the end)].
    One job trains at a time; the killed ones wait out their timeouts together."""
    rng = random.Random(20)
    started = []
    for run in range(KILL_RUNS):
        directory = tmp_path_factory.mktemp(f"kill{run}")
        eps, saved, ready = endpoints(2), str(directory / "saved"), str(directory / "ready")
        group = _job(forks, directory, eps, 100000, KILL_TIMEOUT_S, ["--save_on_error", saved, "--close_on_error"])
        common = ["--pservers", ",".join(eps), "--trainers", "2", "--steps", "100000"]
        victim = group.start(
            "trainer 1",
            ["trainer", "1", "--out", os.devnull, "--ready", ready, *common],
            env={"FLEETGRAPH_RPC_TIMEOUT": str(KILL_TIMEOUT_S)},
        )
        _wait_for_file(ready)
        time.sleep(rng.uniform(0.0, 0.2))
        kill(victim.pid)  # somewhere in a step
        started.append((group, eps, saved, time.monotonic()))
    done = []
    for group, eps, saved, killed in started:
        results = group.wait()
        done.append((eps, results, saved, time.monotonic() - killed))
    return done


def test_trainer_killed_in_sync_mode_makes_the_pservers_fail_with_a_timeout(killed_sync_jobs):
    for eps, results, _, seconds in killed_sync_jobs:
        assert seconds < 30
        outs = [results[f"pserver {ep}"][1] for ep in eps]
        for ep, out in zip(eps, outs):
            assert results[f"pserver {ep}"][0] != 0
            # trainer 0 said it is done (exe.close() on its error), so only trainer 1 is missed
            assert f"listen_and_serv {ep}: no message from trainers [1]" in out, out[-2000:]
            assert f"FLEETGRAPH_RPC_TIMEOUT={KILL_TIMEOUT_S}" in out
        # a pserver that had already released the barrier only knows that nobody talks to it any more
        waits = r"trainers \[0\] waited at the send barrier for trainer\(s\) \[1\]"
        assert any(re.search(waits, out) for out in outs), "\n".join(o[-1500:] for o in outs)
        code, out = results["trainer 0"]
        # the waiting trainer hears who is missing from the pserver (it used to say: send_barrier '' ...)
        assert code != 0
        refused = r"send_barrier of trainer 0 at 127\.0\.0\.1:\d+ was refused: at the send barrier"
        assert re.search(refused, out), out[-2000:]
        assert "trainer(s) [1] did not arrive within" in out


def test_a_trainer_killed_at_random_points_leaves_every_pserver_and_checkpoint_on_one_step(killed_sync_jobs):
    """Both pservers stop on the same step whichever moment of a step trainer 1 died at, and the
    checkpoint trainer 0 saves after its failed barrier holds every parameter from that step."""
    seen = [_pserver_steps(eps, results) for eps, results, _, _ in killed_sync_jobs]
    assert all(a == b > 0 for a, b in seen), seen  # the kills came while training
    for (a, _), (_, results, saved, _) in zip(seen, killed_sync_jobs):
        _assert_one_step(saved, a, results["trainer 0"][1])
