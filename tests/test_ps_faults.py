"""A pserver against faults and attacks, as real processes on 127.0.0.1: a killed pserver, malformed
and hostile messages (hypothesis among them), memory a peer could pin, unauthenticated processes, a
taken port. Killed trainers and sync steps that stay all or none: test_ps_sync_steps.py."""

from __future__ import annotations

import os
import signal
import time

import numpy as np
from dist_helpers import SCRIPTS, ProcessGroup, assert_all_exit_zero, endpoints, wait_for_cpu

PS_TRAIN = os.path.join(SCRIPTS, "ps_train.py")
FAST_TIMEOUT = {"FLEETGRAPH_RPC_TIMEOUT": "30"}


def _start_long_run(group, eps, timeout_s):
    env = {"FLEETGRAPH_RPC_TIMEOUT": str(timeout_s)}
    common = ["--pservers", ",".join(eps), "--trainers", "2", "--steps", "100000"]
    for ep in eps:
        group.start(f"pserver {ep}", [PS_TRAIN, "pserver", ep, *common], env=env)
    for t in (0, 1):
        group.start(f"trainer {t}", [PS_TRAIN, "trainer", str(t), "--out", os.devnull, *common], env=env)


def _kill(proc) -> None:
    os.killpg(proc.popen.pid, signal.SIGKILL)


def test_pserver_killed_makes_trainers_fail_within_the_timeout():
    eps = endpoints(2)
    with ProcessGroup(timeout=60) as group:
        _start_long_run(group, eps, 3)
        for trainer in group.procs[2:]:
            wait_for_cpu(trainer.popen.pid, 1.2)  # training is under way
        started = time.monotonic()
        _kill(group.procs[0])  # the first pserver
        results = group.wait()
    assert time.monotonic() - started < 30
    for t in (0, 1):
        code, out = results[f"trainer {t}"]
        assert code != 0
        assert f"from {eps[0]}: no answer after 3.0 s (FLEETGRAPH_RPC_TIMEOUT)" in out, out[-2000:]


def test_garbage_and_truncated_messages_are_refused_and_the_server_keeps_serving(tmp_path):
    import zmq

    from fleetgraph.executor.comm.wire import Kind, decode, encode

    ep = endpoints(1)[0]
    common = ["--pservers", ep, "--trainers", "2", "--steps", "30"]
    good = encode(Kind.SEND, "fc_0.w_0@GRAD.trainer_0", np.ones((13, 1), "float32"), sender=0, seq=1)
    wrong_dtype = encode(Kind.SEND, "fc_0.w_0@GRAD.trainer_0", np.ones((13, 1), "float64"), sender=0, seq=2)
    wrong_shape = encode(Kind.SEND, "fc_0.w_0@GRAD.trainer_0", np.ones((12, 1), "float32"), sender=0, seq=3)
    bad_messages = [
        [b"garbage"],  # not even a header
        [good[0]],  # truncated: the header without its payload
        [good[0], bytes(good[1])[:20]],  # truncated payload
        wrong_dtype,
        wrong_shape,
        encode(Kind.SEND, "fc_0.w_0@GRAD.trainer_1", np.ones((13, 1), "float32"), sender=0, seq=4),  # not its copy
        encode(Kind.GET, "learning_rate_9", sender=0, seq=5),  # no such parameter
        encode(Kind.SEND, "x", np.ones((2, 13), "float32"), sender=7, seq=6),  # no such trainer
        # these three crashed the pserver: 2^32 x 2^32 elements wrapped to 0 bytes, a SelectedRows of
        # rank 0, and send barriers before any gradient (KeyError in the optimize step)
        [_wire_header(Kind.SEND, b"fc_0.w_0@GRAD.trainer_0", (2**32, 2**32)), b""],
        [_wire_header(Kind.SEND, b"fc_0.w_0@GRAD.trainer_0", (), flags=1), b"\0" * 8, b"\0" * 4],
        encode(Kind.SEND_BARRIER, sender=0, seq=7),
        encode(Kind.SEND_BARRIER, sender=1, seq=8),
    ]
    context = zmq.Context()
    sock = context.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    try:
        with ProcessGroup(timeout=90) as group:
            group.start("pserver", [PS_TRAIN, "pserver", ep, *common], env=FAST_TIMEOUT)
            sock.connect(f"tcp://{ep}")
            replies = []
            for frames in bad_messages:
                sock.send_multipart(frames)
                assert sock.poll(20000), "the pserver stopped answering"
                replies.append(decode(sock.recv_multipart()))
            for t in (0, 1):
                group.start(
                    f"trainer {t}",
                    [PS_TRAIN, "trainer", str(t), "--out", str(tmp_path / f"{t}.npz"), *common],
                    env=FAST_TIMEOUT,
                )
            results = group.wait()
    finally:
        sock.close()
        context.term()
    assert [r.kind for r in replies] == [Kind.ERROR] * len(bad_messages)
    assert "bad magic" in replies[0].text or "header of" in replies[0].text
    assert "expected float32 [13, 1], got float64 [13, 1]" in replies[3].text
    assert "expected float32 [13, 1], got float32 [12, 1]" in replies[4].text
    assert "may only send its own copies" in replies[5].text
    assert "not a parameter this pserver holds" in replies[6].text
    assert "shape [4294967296, 4294967296] has more than 2^48 elements" in replies[8].text
    assert "SelectedRows value of rank 0" in replies[9].text
    for sender, reply in ((0, replies[10]), (1, replies[11])):
        assert f"send barrier of trainer {sender} before its gradients ['fc_0.b_0@GRAD.trainer_{sender}'" in reply.text
    assert_all_exit_zero(results)
    assert "dropped a malformed message" in results["pserver"][1]


def _wire_header(kind, name: bytes, shape, flags=0) -> bytes:
    """A header frame as a peer could forge it (float32, sender 0)."""
    import struct

    from fleetgraph.executor.comm.wire import _FIXED, MAGIC

    head = _FIXED.pack(MAGIC, int(kind), 1, len(shape), flags, 0, 1, 0, len(name))
    return head + name + struct.pack(f"<{len(shape)}q", *shape)


def test_any_frames_at_a_live_pserver_are_answered_and_leave_training_unchanged(tmp_path):
    """Hypothesis draws messages (random frames, and headers built field by field) for a live pserver:
    every one gets an answer, and the trainers afterwards train exactly as without them."""
    import struct

    import zmq
    from hypothesis import HealthCheck, assume, given, settings
    from hypothesis import strategies as st

    from fleetgraph.executor.comm.wire import _FIXED, MAGIC, WireError, decode

    headers = st.builds(
        lambda kind, dtype, dims, flags, sender, name, extra: [
            _FIXED.pack(MAGIC, kind, dtype, len(dims), flags, sender, 1, 0, len(name))
            + name
            + struct.pack(f"<{len(dims)}q", *dims),
            *extra,
        ],
        st.integers(0, 20),
        st.integers(0, 12),
        st.lists(st.integers(-(2**63), 2**63 - 1), max_size=4),
        st.integers(0, 7),
        st.integers(-(2**31), 2**31 - 1),
        st.sampled_from([b"fc_0.w_0", b"fc_0.b_0", b"fc_0.w_0@GRAD.trainer_0", b"", b"x"]),
        st.lists(st.binary(max_size=64), max_size=3),
    )
    messages = st.one_of(st.lists(st.binary(min_size=1, max_size=120), min_size=1, max_size=4), headers)

    ep = endpoints(1)[0]
    common = ["--pservers", ep, "--trainers", "2", "--steps", "10"]
    context = zmq.Context()
    sock = context.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    try:
        with ProcessGroup(timeout=120) as group:
            group.start("pserver", [PS_TRAIN, "pserver", ep, *common], env={"FLEETGRAPH_RPC_TIMEOUT": "120"})
            sock.connect(f"tcp://{ep}")

            @settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
            @given(messages)
            def answered(frames):
                try:
                    assume(decode(frames).sender not in (0, 1))  # nothing a live trainer could mean
                except WireError:
                    pass
                sock.send_multipart(frames)
                assert sock.poll(20000), f"no answer to {frames!r}"
                sock.recv_multipart()

            answered()
            for t in (0, 1):
                out = str(tmp_path / f"{t}.npz")
                group.start(f"trainer {t}", [PS_TRAIN, "trainer", str(t), "--out", out, *common], env=FAST_TIMEOUT)
            assert_all_exit_zero(group.wait())
    finally:
        sock.close()
        context.term()
    _unfuzzed_run(tmp_path, common)
    for t in (0, 1):
        got = np.load(tmp_path / f"{t}.npz")
        for name, value in np.load(tmp_path / f"ref{t}.npz").items():
            np.testing.assert_array_equal(got[name], value, err_msg=f"trainer {t} {name}")


def _unfuzzed_run(tmp_path, common) -> None:
    """The same two-trainer job, unfuzzed: tmp_path/ref<t>.npz."""
    ep = endpoints(1)[0]
    common = ["--pservers", ep, *common[2:]]
    with ProcessGroup(timeout=60) as group:
        group.start("pserver", [PS_TRAIN, "pserver", ep, *common], env=FAST_TIMEOUT)
        for t in (0, 1):
            out = str(tmp_path / f"ref{t}.npz")
            group.start(f"trainer {t}", [PS_TRAIN, "trainer", str(t), "--out", out, *common], env=FAST_TIMEOUT)
        assert_all_exit_zero(group.wait())


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:")) / 1024


def test_a_huge_frame_and_unread_answers_do_not_grow_a_pserver(tmp_path):
    """A 256 MiB frame (bigger than any variable of the program) disconnects its sender before it is
    read, and 3,000 requests for a 100 KB parameter whose answers are never read queue a bounded
    number of answers (they all stayed in the pserver before: 300 MB)."""
    import zmq

    from fleetgraph.executor.comm.wire import Kind, encode

    ep = endpoints(1)[0]
    common = ["--pservers", ep, "--trainers", "1", "--steps", "20", "--model", "mlp"]
    context = zmq.Context()
    try:
        with ProcessGroup(timeout=120) as group:
            server = group.start("pserver", [PS_TRAIN, "pserver", ep, *common], env=FAST_TIMEOUT)
            hog = context.socket(zmq.DEALER)
            hog.setsockopt(zmq.LINGER, 0)
            hog.connect(f"tcp://{ep}")
            ask = encode(Kind.GET, "fc_0.w_0", sender=0, seq=1)
            hog.send_multipart(ask)
            assert hog.poll(30000), "the pserver never answered"
            hog.recv_multipart()
            before = _rss_mb(server.popen.pid)
            big = np.zeros(64 << 20, "float32")  # 256 MiB
            hog.send_multipart(encode(Kind.SEND, "fc_0.w_0@GRAD", big, sender=0, seq=2), copy=False)
            del big
            reader = context.socket(zmq.DEALER)
            reader.setsockopt(zmq.LINGER, 0)
            reader.setsockopt(zmq.RCVHWM, 1)
            reader.setsockopt(zmq.RCVBUF, 4096)
            reader.connect(f"tcp://{ep}")
            for seq in range(3000):  # each answer packs its own copy of the parameter
                reader.send_multipart(encode(Kind.GET_BATCH, "fc_0.w_0\nfc_0.b_0", sender=0, seq=seq))
            probe = context.socket(zmq.DEALER)
            probe.setsockopt(zmq.LINGER, 0)
            probe.connect(f"tcp://{ep}")
            time.sleep(1)
            probe.send_multipart(ask)  # answered once the server got through what came before
            assert probe.poll(30000), "the pserver stopped answering"
            probe.close()
            after = _rss_mb(server.popen.pid)
            hog.close()
            reader.close()
            group.start("trainer 0", [PS_TRAIN, "trainer", "0", "--out", str(tmp_path / "t.npz"), *common])
            results = group.wait()
    finally:
        context.term()
    assert_all_exit_zero(results)
    assert after - before < 40, f"RSS {before:.0f} -> {after:.0f} MB"


def test_without_the_job_secret_a_process_can_neither_read_push_nor_end_a_job(tmp_path):
    """A pserver of a job with FLEETGRAPH_JOB_SECRET: a process without the secret (or with another)
    is refused whatever it asks, told that authentication failed; a trainer's connection can speak
    only for that trainer."""
    import zmq

    from fleetgraph.executor.comm.handshake import AuthError, Prover, prove
    from fleetgraph.executor.comm.wire import Kind, decode, encode

    ep = endpoints(1)[0]
    secret = {"FLEETGRAPH_JOB_SECRET": "a job secret", **FAST_TIMEOUT}
    common = ["--pservers", ep, "--trainers", "2", "--steps", "10"]
    attempts = [
        encode(Kind.GET, "fc_0.w_0", sender=0, seq=1),  # read a parameter
        encode(Kind.SEND, "fc_0.w_0@GRAD.trainer_0", np.full((13, 1), 1e6, "float32"), sender=0, seq=2),  # push
        encode(Kind.COMPLETE, sender=0, seq=3),  # end the job: "trainer 0 is done"
        encode(Kind.COMPLETE, sender=1, seq=4),
    ]

    def client(secret_for=None, role="trainer:0"):
        sock = context.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        sock.connect(f"tcp://{ep}")
        if secret_for is not None:
            prover = Prover(domain=f"pserver@{ep}", role=role, secret=secret_for, where="test")
            try:
                prove(sock, prover, timeout=20)
            except AuthError as e:
                failures.append(str(e))
        return sock

    context = zmq.Context()
    failures: list[str] = []
    try:
        with ProcessGroup(timeout=90) as group:
            group.start("pserver", [PS_TRAIN, "pserver", ep, *common], env=secret)
            plain, forged = client(), client(b"another secret")
            answers = []
            for sock in (plain, forged):
                for frames in attempts:
                    sock.send_multipart(frames)
                    assert sock.poll(20000), "no answer to an unauthenticated request"
                    answers.append(decode(sock.recv_multipart()))
            # the right secret as trainer 0: it may not speak for trainer 1
            member = client(b"a job secret")
            member.send_multipart(encode(Kind.COMPLETE, sender=1, seq=5))
            assert member.poll(20000), "no answer to an authenticated trainer"
            refused = decode(member.recv_multipart())
            for sock in (plain, forged, member):
                sock.close()
            for t in (0, 1):
                out = str(tmp_path / f"{t}.npz")
                group.start(f"trainer {t}", [PS_TRAIN, "trainer", str(t), "--out", out, *common], env=secret)
            results = group.wait()
    finally:
        context.term()
    assert len(failures) == 1 and "did not prove this job's FLEETGRAPH_JOB_SECRET" in failures[0]
    assert all(a.kind == Kind.ERROR and "did not authenticate" in a.text for a in answers), answers
    assert refused.kind == Kind.ERROR
    assert "sender 1 on a connection that authenticated as trainer:0" in refused.text
    assert_all_exit_zero(results)  # the pushes and the completes never counted: both trainers trained
    for t in (0, 1):
        assert f"trainer {t}: 10 steps" in results[f"trainer {t}"][1]
    assert results["pserver"][1].count("authentication failed") <= 1  # one line per peer per minute


def test_a_pserver_whose_port_is_taken_exits_at_once_saying_so():
    import socket

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    ep = f"127.0.0.1:{taken.getsockname()[1]}"
    try:
        with ProcessGroup(timeout=60) as group:
            started = time.monotonic()
            group.start("pserver", [PS_TRAIN, "pserver", ep, "--pservers", ep, "--trainers", "1"], env=FAST_TIMEOUT)
            results = group.wait()
    finally:
        taken.close()
    code, out = results["pserver"]
    assert code != 0 and time.monotonic() - started < 30  # it hung in Context.term before
    assert f"listen_and_serv {ep}: cannot listen there: Address already in use" in out, out[-2000:]
