"""Job authentication policy (executor/comm/security.py); the live checks are in test_ps_faults.py
and test_collective_runtime.py."""

from __future__ import annotations

import pytest

from fleetgraph.executor.comm import security


@pytest.fixture(autouse=True)
def _no_secret(monkeypatch):
    monkeypatch.delenv(security.SECRET_ENV, raising=False)
    monkeypatch.delenv(security.INSECURE_ENV, raising=False)
    monkeypatch.setattr(security, "_warned", False)


def test_without_a_secret_another_hosts_address_refuses_to_start():
    with pytest.raises(security.InsecureJobError, match="listen_and_serv 10.1.2.3:6174: no FLEETGRAPH_JOB_SECRET"):
        security.authenticated("10.1.2.3:6174", "listen_and_serv")


def test_an_explicit_opt_out_runs_unauthenticated_off_loopback(monkeypatch):
    monkeypatch.setenv(security.INSECURE_ENV, "1")
    assert security.authenticated("10.1.2.3:6174", "trainer") is False


def test_without_a_secret_loopback_runs_with_one_warning_naming_the_variable(caplog):
    assert security.authenticated("127.0.0.2:6174", "trainer") is False
    assert security.authenticated("127.0.0.1:6175", "trainer") is False
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1  # once per process
    assert warnings[0].startswith("FLEETGRAPH_JOB_SECRET is not set: this job's sockets on 127.0.0.2 take")


def test_with_a_secret_every_address_authenticates(monkeypatch):
    monkeypatch.setenv(security.SECRET_ENV, "s")
    assert security.authenticated("10.1.2.3:6174", "trainer") is True
    assert security.authenticated("127.0.0.1:6174", "trainer") is True


def test_keys_follow_from_the_secret_and_the_role():
    assert security.keypair(b"s", "trainer:0") == security.keypair(b"s", "trainer:0")
    publics = {security.keypair(secret, role)[0] for secret in (b"s", b"t") for role in ("trainer:0", "trainer:1")}
    assert len(publics) == 4


def test_connections_encrypt_between_hosts_and_prove_a_password_on_loopback():
    assert security.encrypts("10.1.2.3:6174") and security.encrypts("host-b:6174")
    assert not security.encrypts("127.0.0.1:6174") and not security.encrypts("localhost:6174")
    passwords = {security.password(secret, role) for secret in (b"s", b"t") for role in ("trainer:0", "trainer:1")}
    assert len(passwords) == 4 and security.password(b"s", "trainer:0") == security.password(b"s", "trainer:0")


def test_on_loopback_a_job_secret_admits_only_its_roles_each_tagged_with_its_role(monkeypatch):
    """A server socket of a job with a secret on 127.0.0.1 (PLAIN): a client without credentials or
    with another job's gets nothing through; the job's trainer:0 does, and its frames say so."""
    import zmq
    from dist_helpers import endpoints

    monkeypatch.setenv(security.SECRET_ENV, "the job")
    ep = endpoints(1)[0]
    context = zmq.Context()
    socks = []
    try:
        server = context.socket(zmq.ROUTER)
        socks.append(server)
        assert security.secure_server(context, server, ep, "pserver", ["trainer:0"], "test") is True
        server.bind(f"tcp://{ep}")
        for secret, payload in ((None, b"no credentials"), (b"another job", b"another job"), (b"the job", b"member")):
            client = context.socket(zmq.DEALER)
            socks.append(client)
            if secret is not None:
                security.prove(client, ep, secret, "trainer:0")
            client.connect(f"tcp://{ep}")
            try:
                client.send(payload, zmq.NOBLOCK)
            except zmq.Again:  # a refused handshake leaves no connection to queue on
                pass
        assert server.poll(10000)
        identity, got = server.recv_multipart(copy=False)
        assert got.bytes == b"member" and got.get("User-Id") == "trainer:0"
        assert server.getsockopt(zmq.MECHANISM) == zmq.PLAIN
        assert server.poll(1000) == 0  # the other two never arrive
    finally:
        for sock in socks:
            sock.close(linger=0)
        security.stop(context)
        context.term()
