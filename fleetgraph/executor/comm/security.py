"""Job authentication: ZeroMQ CURVE keys derived from one job secret (imported where sockets are made).

Every role of a job knows `FLEETGRAPH_JOB_SECRET`: the launcher sets a fresh one for the jobs it
starts on one host; for several hosts, or roles started by hand or by a scheduler, the user sets
the same value in every role's environment. From it each role derives (SHA-256) the job's server
key pair and its own client key pair (`trainer:3`, `rank:1`), so nothing but the secret has to be
distributed. Every listening socket (a pserver, a ring rank's inbox) is a CURVE server whose ZAP
handler admits only the client keys of the roles that may talk to it, and tags each connection
with the role it proved (ZeroMQ's User-Id), so a pserver takes a trainer's id from its connection,
not from what the message says. A process without the secret cannot complete the handshake: its
messages never reach the server. Traffic between hosts is encrypted as a side effect.

On loopback addresses the same admission runs over ZeroMQ's PLAIN mechanism instead: each role
proves itself with a password derived from the secret like its keys, which crosses only this
host's loopback (readable by root alone, who can read the processes' memory anyway). The policy is
the same, a process without the secret gets nothing through; what is saved is CURVE's encryption
of every byte, most of a one-host parameter-server job's communication time (a 2 x 2 CTR job
moves ~7 MB a step: encrypting it cost ~8 ms of CPU a step).

Without a secret a job runs unauthenticated on loopback addresses, with a warning that names the
variable; on any other address a role refuses to start unless `FLEETGRAPH_INSECURE=1` says an
unauthenticated job is wanted.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import threading

import zmq
from zmq.auth.thread import ThreadAuthenticator
from zmq.utils import z85

from ...ir import FleetgraphError
from ...ir.endpoints import is_loopback

SECRET_ENV = "FLEETGRAPH_JOB_SECRET"
INSECURE_ENV = "FLEETGRAPH_INSECURE"
_SERVER_ROLE = "server"

log = logging.getLogger("fleetgraph.comm")
_lock = threading.Lock()
_admissions: dict[int, ThreadAuthenticator] = {}  # id(context) -> its ZAP handler
_warned = False


class InsecureJobError(FleetgraphError):
    """A role would talk to another host without a job secret."""


def job_secret() -> bytes | None:
    raw = os.environ.get(SECRET_ENV, "")
    return raw.encode("utf-8") if raw else None


def keypair(secret: bytes, role: str) -> tuple[bytes, bytes]:
    """(public, secret) Z85 CURVE keys of `role` in the job of `secret`."""
    raw = hashlib.sha256(b"fleetgraph-curve\0" + secret + b"\0" + role.encode("utf-8")).digest()
    secret_key = z85.encode(raw)
    return zmq.curve_public(secret_key), secret_key


def authenticated(endpoint: str, what: str) -> bool:
    """Whether sockets to or at `endpoint` authenticate: with a job secret, yes; without one, a
    warning on loopback and an InsecureJobError elsewhere (unless FLEETGRAPH_INSECURE=1)."""
    global _warned
    if job_secret() is not None:
        return True
    if not is_loopback(endpoint.rsplit(":", 1)[0]):
        if os.environ.get(INSECURE_ENV, "") not in ("", "0"):
            return False
        raise InsecureJobError(
            f"{what} {endpoint}: no {SECRET_ENV}, so any process that reaches this address could read "
            f"parameters, push gradients or end the job; set {SECRET_ENV} to the same random value in every "
            f"role (the launcher does it for jobs on one host), or {INSECURE_ENV}=1 to run unauthenticated"
        )
    if not _warned:
        _warned = True
        log.warning(
            "%s is not set: this job's sockets on %s take messages from any local process; set it to the "
            "same random value in every role (the launcher does)",
            SECRET_ENV,
            endpoint.rsplit(":", 1)[0],
        )
    return False


def password(secret: bytes, role: str) -> str:
    """The PLAIN password of `role` in the job of `secret` (loopback connections)."""
    return hashlib.sha256(b"fleetgraph-plain\0" + secret + b"\0" + role.encode("utf-8")).hexdigest()


def encrypts(endpoint: str) -> bool:
    """Whether authenticated connections to `endpoint` use CURVE (another host) rather than PLAIN
    (this host's loopback, see the module)."""
    return not is_loopback(endpoint.rsplit(":", 1)[0])


def secure_server(context, sock, endpoint: str, domain: str, clients: list[str], what: str) -> bool:
    """Make `sock` (before it binds `endpoint`) a server admitting only the given client roles,
    each connection tagged with its role; nothing without a job secret on loopback. Whether it
    authenticates."""
    if not authenticated(endpoint, what):
        return False
    secret = job_secret()
    sock.zap_domain = domain.encode()
    if not encrypts(endpoint):
        _admission(context).admit_plain(domain, {role: password(secret, role) for role in clients})
        sock.plain_server = True
        return True
    public, secret_key = keypair(secret, _SERVER_ROLE)
    _admission(context).admit(domain, {keypair(secret, role)[0]: role for role in clients})
    sock.curve_secretkey, sock.curve_publickey = secret_key, public
    sock.curve_server = True
    return True


def secure_client(sock, endpoint: str, role: str, what: str) -> None:
    """Make `sock` (before it connects to `endpoint`) a client proving `role`."""
    if authenticated(endpoint, what):
        prove(sock, endpoint, job_secret(), role)


def prove(sock, endpoint: str, secret: bytes, role: str) -> None:
    """Credentials of `role` in the job of `secret` on `sock`, for connecting to `endpoint`."""
    if not encrypts(endpoint):
        sock.plain_username, sock.plain_password = role.encode("utf-8"), password(secret, role).encode()
        return
    sock.curve_serverkey = keypair(secret, _SERVER_ROLE)[0]
    sock.curve_publickey, sock.curve_secretkey = keypair(secret, role)


def peer_role(frame) -> str | None:
    """The role a received frame's connection authenticated as (None when unauthenticated)."""
    try:
        return frame.get("User-Id")
    except Exception:  # noqa: BLE001 - a NULL-mechanism connection has no User-Id property
        return None


def _admission(context):
    with _lock:
        admission = _admissions.get(id(context))
        if admission is None:
            admission = _admissions[id(context)] = _Admission(context)
            admission.start()
        return admission


def stop(context) -> None:
    """Stop the ZAP handler of `context`, before the context terminates."""
    with _lock:
        admission = _admissions.pop(id(context), None)
    if admission is not None:
        admission.stop()


class _Admission(ThreadAuthenticator):
    """The ZAP handler of one context: per domain (a listening socket), the client keys it admits;
    a connection's User-Id is the role of its key."""

    def __init__(self, context) -> None:
        super().__init__(context, log=log)
        self.roles: dict[bytes, str] = {}
        self.domains: dict[str, set[bytes]] = {}

    def admit(self, domain: str, keys: dict[bytes, str]) -> None:
        self.roles.update(keys)
        self.domains[domain] = set(keys)
        self.configure_curve_callback(domain, credentials_provider=self)

    def admit_plain(self, domain: str, passwords: dict[str, str]) -> None:
        """PLAIN connections to `domain`: role -> password; the role is the connection's User-Id."""
        self.configure_plain(domain, passwords)

    def _authenticate_plain(self, domain: str, username: str, password: str) -> tuple[bool, bytes]:
        expected = self.passwords.get(domain, {}).get(username)
        if expected is not None and hmac.compare_digest(expected.encode(), password.encode()):
            return True, b"OK"
        log.error("refused a connection to %s: %r did not prove a role of this job", domain, username)
        return False, b"not a role of this job"

    def callback(self, domain: str, key: bytes) -> bool:
        allowed = key in self.domains.get(domain, ())
        if not allowed:
            log.error("refused a connection to %s: its key is not one of this job's roles", domain)
        return allowed

    def curve_user_id(self, client_public_key: bytes) -> str:
        return self.roles.get(z85.encode(client_public_key), "")
