"""The loopback handshake (executor/comm/handshake.py) against squatters, replays, wrong secrets and
login floods, on in-process sockets; the pserver and ring paths end to end are in test_ps_faults.py
and test_collective_runtime.py."""

from __future__ import annotations

import logging
import threading
import time

import numpy as np
import pytest
import zmq
from dist_helpers import endpoints

from fleetgraph.executor.comm import security
from fleetgraph.executor.comm.handshake import AuthError, Prover, prove
from fleetgraph.executor.comm.wire import Kind, WireError, decode, encode

SECRET = "the job"


@pytest.fixture
def context(monkeypatch):
    monkeypatch.setenv(security.SECRET_ENV, SECRET)
    monkeypatch.setenv("FLEETGRAPH_RPC_TIMEOUT", "5")
    ctx = zmq.Context()
    yield ctx
    security.stop(ctx)
    ctx.destroy(linger=0)  # closes what a failed test left open: term() alone would wait on it forever


class Server(threading.Thread):
    """A listening socket that answers as a pserver does: the handshake, an error for anything from
    a connection that did not prove a role, an ACK naming the role otherwise."""

    def __init__(self, context, endpoint: str, roles=("trainer:0",)) -> None:
        super().__init__(daemon=True)
        self.sock = context.socket(zmq.ROUTER)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.gate = security.secure_server(context, self.sock, endpoint, "pserver", list(roles), "listen_and_serv")
        self.sock.bind(f"tcp://{endpoint}")
        self.running = True
        self.start()

    def run(self) -> None:
        while self.running:
            if not self.sock.poll(20):
                continue
            identity, *body = self.sock.recv_multipart(copy=False)
            try:
                msg = decode(body)
            except WireError as e:
                self.sock.send_multipart([identity, *self.gate.refuse_unproved(body[0], f"a malformed message ({e})")])
                continue
            if msg.kind == Kind.AUTH:
                reply = self.gate.answer(body[0], msg)
            elif self.gate.role(body[0]) is None:
                reply = self.gate.refuse_unproved(body[0], msg.describe())
            else:
                reply = encode(Kind.ACK, self.gate.role(body[0]), seq=msg.seq)
            if reply:
                self.sock.send_multipart([identity, *reply])

    def stop(self) -> None:
        self.running = False
        self.join(5)
        self.sock.close()


class Squatter:
    """A process that bound a server's port first: it records whatever arrives and answers a hello
    with a challenge it makes up."""

    def __init__(self, context, endpoint: str) -> None:
        self.sock = context.socket(zmq.ROUTER)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.bind(f"tcp://{endpoint}")
        self.captured: list[list[bytes]] = []

    def serve_once(self, timeout_s: float = 5) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.sock.poll(50):
                identity, *body = self.sock.recv_multipart()
                self.captured.append(body)
                made_up = encode(Kind.AUTH, f"challenge\n{'ab' * 16}\n{'cd' * 32}")
                self.sock.send_multipart([identity, *made_up])
            elif self.captured:
                return

    def close(self) -> None:
        self.sock.close()


def _dealer(context, endpoint: str):
    sock = context.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(f"tcp://{endpoint}")
    return sock


def _ask(sock, seq: int = 7):
    sock.send_multipart(encode(Kind.GET, "fc_0.w_0", sender=0, seq=seq))
    assert sock.poll(5000), "no answer"
    return decode(sock.recv_multipart())


def test_a_trainer_proves_itself_and_its_connection_speaks_for_its_role(context):
    ep = endpoints(1)[0]
    server = Server(context, ep)
    try:
        sock = context.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        security.connect(sock, ep, "pserver", "trainer:0", "trainer 0")
        answer = _ask(sock)
        sock.close()
    finally:
        server.stop()
    assert answer.kind == Kind.ACK and answer.name == "trainer:0"


def test_a_squatter_bound_first_captures_nothing_that_opens_a_connection(context):
    """The trainer meets a listener that cannot prove the secret and stops there; all it sent (a
    role, a domain, a nonce) opens nothing on the real server, whatever the squatter replays."""
    ep = endpoints(1)[0]
    squatter = Squatter(context, ep)
    sock = context.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    failed: list[BaseException] = []
    client = threading.Thread(target=lambda: _connect_expecting_failure(sock, ep, failed))
    client.start()
    squatter.serve_once()
    client.join(10)
    sock.close()
    squatter.close()
    assert len(failed) == 1 and isinstance(failed[0], AuthError)
    assert "did not prove this job's FLEETGRAPH_JOB_SECRET" in str(failed[0])
    kinds = [decode(body).name.split("\n")[0] for body in squatter.captured]
    assert kinds[0] == "hello" and "proof" not in kinds  # no proof ever reached the squatter

    server = Server(context, ep)  # the real pserver starts once the squatter let go of the port
    try:
        replay = _dealer(context, ep)
        for body in squatter.captured:
            replay.send_multipart(body)
        answers = []
        while replay.poll(500):
            answers.append(decode(replay.recv_multipart()))
        after = _ask(replay)
        replay.close()
    finally:
        server.stop()
    assert all(a.kind != Kind.AUTH or not a.name.startswith("welcome") for a in answers)
    assert after.kind == Kind.ERROR and "did not authenticate" in after.text
    assert not server.gate.proved


def _connect_expecting_failure(sock, ep: str, failed: list) -> None:
    try:
        security.connect(sock, ep, "pserver", "trainer:0", "trainer 0")
    except BaseException as e:  # noqa: BLE001 - the test asserts on it
        failed.append(e)


def test_a_replayed_handshake_is_refused(context):
    """What an eavesdropper saw of a successful handshake (the hello and the proof) does not
    authenticate a new connection: the server's nonce is new."""
    ep = endpoints(1)[0]
    server = Server(context, ep)
    seen: list[list] = []
    original = server.gate.answer

    def recording(frame, msg):
        seen.append(encode(Kind.AUTH, msg.name))
        return original(frame, msg)

    server.gate.answer = recording
    try:
        member = context.socket(zmq.DEALER)
        member.setsockopt(zmq.LINGER, 0)
        security.connect(member, ep, "pserver", "trainer:0", "trainer 0")
        member.close()
        recorded = list(seen)  # the member's handshake, not the replay's own
        replay = _dealer(context, ep)
        replies = []
        for frames in recorded:
            replay.send_multipart(frames)
            assert replay.poll(5000)
            replies.append(decode(replay.recv_multipart()))
        after = _ask(replay)
        replay.close()
    finally:
        server.stop()
    assert [decode(m).name.split("\n")[0] for m in recorded] == ["hello", "proof"]
    assert replies[0].name.startswith("challenge") and replies[1].kind == Kind.ERROR
    assert "different FLEETGRAPH_JOB_SECRET (or replayed an old handshake)" in replies[1].text
    assert after.kind == Kind.ERROR and len(server.gate.proved) == 1  # only the member's connection


def test_a_relay_to_another_server_of_the_job_is_caught(context):
    """A squatter on one pserver's port relaying to another pserver of the same job: that server
    proves the secret for its own endpoint, not the one the trainer dialled."""
    ep_real, ep_dialled = endpoints(2)
    server = Server(context, ep_real)
    try:
        sock = context.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        sock.connect(f"tcp://{ep_real}")  # what the relay amounts to
        prover = Prover(domain=f"pserver@{ep_dialled}", role="trainer:0", secret=SECRET.encode(), where="trainer 0")
        with pytest.raises(AuthError, match="a hello as 'trainer:0' for 'pserver@"):
            prove(sock, prover, timeout=5)
        sock.close()
    finally:
        server.stop()


@pytest.mark.parametrize(
    "client_secret, expected",
    [
        ("another job", "did not prove this job's FLEETGRAPH_JOB_SECRET"),
        (None, "on a connection that did not authenticate; this job requires FLEETGRAPH_JOB_SECRET"),
    ],
)
def test_a_wrong_or_missing_secret_fails_at_once_naming_authentication(context, monkeypatch, client_secret, expected):
    ep = endpoints(1)[0]
    server = Server(context, ep)
    started = time.monotonic()
    try:
        if client_secret is None:
            monkeypatch.delenv(security.SECRET_ENV)
        else:
            monkeypatch.setenv(security.SECRET_ENV, client_secret)
        sock = context.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        try:
            security.connect(sock, ep, "pserver", "trainer:0", "trainer 0")
            answer = _ask(sock)
            error = answer.text if answer.kind == Kind.ERROR else ""
        except AuthError as e:
            error = str(e)
        sock.close()
        time.sleep(0.1)  # the server takes the client's word that the secrets differ
    finally:
        server.stop()
    assert time.monotonic() - started < 2
    assert "authentication failed" in error and expected in error
    if client_secret is not None:  # the server says so too, not only the client
        assert "FLEETGRAPH_JOB_SECRET different from its own" in server.gate.last_refusal


def test_a_secret_on_the_client_only_is_diagnosed(context, monkeypatch):
    monkeypatch.delenv(security.SECRET_ENV)
    ep = endpoints(1)[0]
    server = Server(context, ep)
    monkeypatch.setenv(security.SECRET_ENV, SECRET)
    try:
        sock = context.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        with pytest.raises(AuthError, match="runs without FLEETGRAPH_JOB_SECRET, but a peer that has one connected"):
            security.connect(sock, ep, "pserver", "trainer:0", "trainer 0")
        sock.close()
    finally:
        server.stop()


def test_a_login_flood_logs_at_most_one_line_per_peer_per_minute(context, caplog):
    """Hundreds of failed logins of every kind from one local address: one error line."""
    ep = endpoints(1)[0]
    server = Server(context, ep)
    caplog.set_level(logging.ERROR, logger="fleetgraph.comm")
    attempts = [
        encode(Kind.AUTH, f"hello\ntrainer:0\npserver@{ep}\n{'00' * 16}"),
        encode(Kind.AUTH, f"proof\n{'11' * 32}"),
        encode(Kind.AUTH, f"hello\ntrainer:9\npserver@{ep}\n{'00' * 16}"),
        encode(Kind.AUTH, "garbage"),
        encode(Kind.SEND, "fc_0.w_0@GRAD", np.ones(3, "float32"), sender=0, seq=1),
        [b"FGW1 not a header"],
    ]
    try:
        socks = [_dealer(context, ep) for _ in range(20)]
        for i in range(300):
            socks[i % len(socks)].send_multipart(attempts[i % len(attempts)])
        deadline = time.monotonic() + 10
        answered = 0
        while answered < 300 and time.monotonic() < deadline:
            for sock in socks:
                while sock.poll(0):
                    sock.recv_multipart()
                    answered += 1
            time.sleep(0.01)
        for sock in socks:
            sock.close()
    finally:
        server.stop()
    lines = [r for r in caplog.records if r.name == "fleetgraph.comm" and r.levelno >= logging.ERROR]
    assert answered >= 250  # every attempt was refused (the hellos for trainer:0 answered with challenges)
    assert len(lines) <= 1, [r.getMessage() for r in lines]


def test_between_hosts_keys_from_another_secret_fail_naming_authentication(context, monkeypatch):
    """CURVE (every address but loopback; here loopback made to count as another host): a trainer
    with another job's secret fails at connect, saying so, instead of timing out later."""
    monkeypatch.setattr(security, "encrypts", lambda endpoint: True)
    monkeypatch.setenv("FLEETGRAPH_RPC_TIMEOUT", "1")  # dropped handshakes are retried that long
    ep = endpoints(1)[0]
    server = Server(context, ep)
    try:
        for secret in (SECRET, "another job"):
            monkeypatch.setenv(security.SECRET_ENV, secret)
            sock = context.socket(zmq.DEALER)
            sock.setsockopt(zmq.LINGER, 0)
            started = time.monotonic()
            try:
                security.connect(sock, ep, "pserver", "trainer:0", "trainer 0")
                answer = _ask(sock).name
            except AuthError as e:
                answer = str(e)
            sock.close()
            assert time.monotonic() - started < 2
            if secret == SECRET:
                assert answer == "trainer:0"
            else:
                assert "authentication failed: " in answer and "CURVE handshakes as trainer:0 were dropped" in answer
    finally:
        server.stop()
    assert server.gate.mode == "curve"


def test_a_squatter_on_a_ranks_port_captures_no_proof(context):
    """Rank 0 of a ring meets a listener on rank 1's endpoint that cannot prove the secret: it stops
    there with an error naming authentication, having sent no proof."""
    from fleetgraph.executor.comm.ring import Ring

    eps = endpoints(2)
    squatter = Squatter(context, eps[1])
    failed: list[BaseException] = []

    def rank0() -> None:
        try:
            Ring(context, 2, 0, eps, 0).close()
        except BaseException as e:  # noqa: BLE001 - the test asserts on it
            failed.append(e)

    thread = threading.Thread(target=rank0)
    thread.start()
    squatter.serve_once()
    thread.join(10)
    squatter.close()
    assert len(failed) == 1 and "did not prove this job's FLEETGRAPH_JOB_SECRET" in str(failed[0])
    kinds = [decode(body).name.split("\n")[0] for body in squatter.captured]
    assert "hello" in kinds and "proof" not in kinds


@pytest.mark.parametrize("secrets", [("the job", "another job"), ("the job", None)])
def test_ranks_with_different_secrets_fail_at_once_naming_authentication(context, monkeypatch, secrets):
    from test_collective_runtime import run_ranks

    by_thread = {f"rank {r}": (s.encode() if s else None) for r, s in enumerate(secrets)}
    monkeypatch.setattr(security, "job_secret", lambda: by_thread.get(threading.current_thread().name))
    started = time.monotonic()
    results = run_ranks(2, lambda ring: ring.allreduce(np.ones(2, np.float32)), context=zmq.Context())
    assert time.monotonic() - started < 2
    assert all(isinstance(r, AuthError) and "authentication failed" in str(r) for r in results), results


def test_a_formed_ring_ignores_a_stranger_saying_the_secrets_differ(monkeypatch):
    """Only the connection a rank challenged during set-up can stop it with a mismatch notice; once
    the ring formed, a local process sending hello + mismatch is refused and the ring trains on."""
    from test_collective_runtime import run_ranks

    monkeypatch.setenv(security.SECRET_ENV, SECRET)
    monkeypatch.setenv("FLEETGRAPH_RING_TRANSPORT", "tcp")
    context = zmq.Context()
    strangers = []

    def body(ring):
        if ring.rank == 0:
            sock = _dealer(context, ring.endpoints[0])
            sock.send_multipart(encode(Kind.AUTH, f"hello\nrank:1\nring0.0@{ring.endpoints[0]}\n{'00' * 16}"))
            sock.send_multipart(encode(Kind.AUTH, "mismatch\nrank:1"))
            sock.send_multipart(encode(Kind.AUTH, "mismatch\nrank:1"))  # and one without a challenge
            strangers.append(sock)
        return [ring.allreduce(np.full(4, ring.rank + 1.0, np.float32)) for _ in range(20)]

    results = run_ranks(2, body, context=zmq.Context(), transport="tcp")
    for sock in strangers:
        sock.close()
    context.term()
    for rank_results in results:
        assert not isinstance(rank_results, Exception), rank_results
        for got in rank_results:
            np.testing.assert_array_equal(got, [3, 3, 3, 3])
