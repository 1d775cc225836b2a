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


def test_connections_encrypt_between_hosts_and_run_the_handshake_on_loopback():
    assert security.encrypts("10.1.2.3:6174") and security.encrypts("host-b:6174")
    assert not security.encrypts("127.0.0.1:6174") and not security.encrypts("localhost:6174")
