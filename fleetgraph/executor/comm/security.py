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

On loopback addresses the connections run ZeroMQ's NULL mechanism instead and prove the secret
with the handshake of `handshake.py`: the listener first, with fresh nonces both ways, so a process
that bound a port before its server learns nothing it can use, and nothing recorded replays. The
admission handler here only tags each such connection with a random token that the handshake then
binds to a role. What is saved is CURVE's encryption of every byte, most of a one-host
parameter-server job's communication time (a 2 x 2 CTR job moves ~7 MB a step: encrypting it cost
~8 ms of CPU a step).

Without a secret a job runs unauthenticated on loopback addresses, with a warning that names the
variable; on any other address a role refuses to start unless `FLEETGRAPH_INSECURE=1` says an
unauthenticated job is wanted.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time

import zmq
from zmq.auth.thread import ThreadAuthenticator
from zmq.utils import z85

from ...ir import FleetgraphError
from ...ir.endpoints import is_loopback
from .config import rpc_timeout
from .handshake import AuthError, Gate, Prover, RateLimitedLog, prove

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


def encrypts(endpoint: str) -> bool:
    """Whether authenticated connections to `endpoint` use CURVE (another host) rather than PLAIN
    (this host's loopback, see the module)."""
    return not is_loopback(endpoint.rsplit(":", 1)[0])


def secure_server(context, sock, endpoint: str, domain: str, clients: list[str], what: str) -> Gate:
    """Make `sock` (before it binds `endpoint`) a server admitting only the given client roles,
    each connection tagged with its role; nothing without a job secret on loopback. Its Gate."""
    where = f"{what} {endpoint}"
    if not authenticated(endpoint, what):
        return Gate("open", where=where)
    secret = job_secret()
    sock.zap_domain = domain.encode()
    if not encrypts(endpoint):
        _admission(context).tag_connections(domain)
        return Gate("challenge", domain=f"{domain}@{endpoint}", roles=clients, secret=secret, where=where)
    public, secret_key = keypair(secret, _SERVER_ROLE)
    _admission(context).admit(domain, {keypair(secret, role)[0]: role for role in clients})
    sock.curve_secretkey, sock.curve_publickey = secret_key, public
    sock.curve_server = True
    return Gate("curve", roles=clients, where=where)


def secure_client(sock, endpoint: str, domain: str, role: str, what: str) -> Prover | None:
    """Make `sock` (before it connects to the server socket `domain` at `endpoint`) a client proving
    `role`: CURVE keys for another host; for loopback, the Prover of the handshake to run once
    connected (None without a job secret, or over CURVE)."""
    if not authenticated(endpoint, what):
        return None
    if not encrypts(endpoint):
        return Prover(domain=f"{domain}@{endpoint}", role=role, secret=job_secret(), where=f"{what} {endpoint}")
    secret = job_secret()
    sock.curve_serverkey = keypair(secret, _SERVER_ROLE)[0]
    sock.curve_publickey, sock.curve_secretkey = keypair(secret, role)
    return None


def connect(sock, endpoint: str, domain: str, role: str, what: str) -> None:
    """Connect the DEALER `sock` to the server socket `domain` at `endpoint` as `role`, proving the
    job secret as `secure_client` says (for loopback, the handshake runs here, each answer awaited
    at most FLEETGRAPH_RPC_TIMEOUT)."""
    prover = secure_client(sock, endpoint, domain, role, what)
    if sock.getsockopt(zmq.MECHANISM) == zmq.CURVE:
        _connect_curve(sock, endpoint, role, what)
        return
    sock.connect(f"tcp://{endpoint}")
    if prover is not None:
        prove(sock, prover, timeout=rpc_timeout())


def _connect_curve(sock, endpoint: str, role: str, what: str) -> None:
    """Connect and wait for the CURVE handshake, so that keys from another secret are an error
    naming authentication here, not a time-out at the first request. A server that refuses the
    role's key says so (at once); one that cannot read the client's HELLO (its server key is from
    another secret) only drops the connection, as a relay does before its server is up: dropped
    handshakes are retried until the timeout, then named."""
    from zmq.utils.monitor import recv_monitor_message

    refused = zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL | zmq.EVENT_HANDSHAKE_FAILED_AUTH
    events = zmq.EVENT_HANDSHAKE_SUCCEEDED | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL | refused
    monitor = sock.get_monitor_socket(events)
    hint = "set the same FLEETGRAPH_JOB_SECRET in every role of the job"
    dropped = 0
    try:
        sock.connect(f"tcp://{endpoint}")
        timeout = rpc_timeout()
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not monitor.poll(left * 1000):
                if dropped:
                    raise AuthError(
                        f"{what} {endpoint}: authentication failed: {dropped} CURVE handshakes as {role} were dropped "
                        f"in {timeout} s (FLEETGRAPH_RPC_TIMEOUT): the roles' FLEETGRAPH_JOB_SECRET differ, or this is "
                        f"not a fleetgraph server; {hint}"
                    )
                raise AuthError(
                    f"{what} {endpoint}: authentication: no CURVE handshake after {timeout} s "
                    "(FLEETGRAPH_RPC_TIMEOUT); the server is not up"
                )
            event = recv_monitor_message(monitor)["event"]
            if event == zmq.EVENT_HANDSHAKE_SUCCEEDED:
                return
            if event & refused:
                raise AuthError(
                    f"{what} {endpoint}: authentication failed: the server refused the CURVE keys of {role} (the "
                    f"roles' FLEETGRAPH_JOB_SECRET differ); {hint}"
                )
            dropped += 1
    finally:
        sock.disable_monitor()
        monitor.close(linger=0)


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
    """The ZAP handler of one context: per CURVE domain (a listening socket), the client keys it
    admits, a connection's User-Id the role of its key; per loopback domain, a fresh random token as
    each connection's User-Id, for the handshake to bind to a role. Refusals are logged at most once
    per peer address per minute."""

    def __init__(self, context) -> None:
        super().__init__(context, log=log)
        self.roles: dict[bytes, str] = {}
        self.domains: dict[str, set[bytes]] = {}
        self.tagged: set[str] = set()
        self.refusals = RateLimitedLog()

    def admit(self, domain: str, keys: dict[bytes, str]) -> None:
        self.roles.update(keys)
        self.domains[domain] = set(keys)
        self.configure_curve_callback(domain, credentials_provider=self)

    def tag_connections(self, domain: str) -> None:
        self.tagged.add(domain)

    async def handle_zap_message(self, msg: list[bytes]) -> None:
        if len(msg) >= 6 and msg[5] == b"NULL":
            domain = msg[2].decode("utf-8", "replace")
            if domain in self.tagged:
                self._send_zap_reply(msg[1], b"200", b"OK", "conn:" + os.urandom(16).hex())
            else:
                self.refusals.error(
                    msg[3].decode("utf-8", "replace"), "refused a connection to %s without CURVE keys", domain
                )
                self._send_zap_reply(msg[1], b"400", b"CURVE keys required")
            return
        if len(msg) >= 6 and msg[5] == b"PLAIN":  # no socket of ours takes PLAIN any more
            self._send_zap_reply(msg[1], b"400", b"PLAIN is not accepted")
            return
        self.peer = msg[3].decode("utf-8", "replace") if len(msg) >= 6 else "?"
        await super().handle_zap_message(msg)

    def callback(self, domain: str, key: bytes) -> bool:
        allowed = key in self.domains.get(domain, ())
        if not allowed:
            self.refusals.error(
                self.peer,
                "authentication failed: refused a connection to %s from %s: its key is not one of this "
                "job's roles (a different FLEETGRAPH_JOB_SECRET, or none)",
                domain,
                self.peer,
            )
        return allowed

    def curve_user_id(self, client_public_key: bytes) -> str:
        return self.roles.get(z85.encode(client_public_key), "")
