"""Mutual proof of the job secret on a connection, server first, with fresh nonces both ways.

Loopback connections of a job with FLEETGRAPH_JOB_SECRET run ZeroMQ's NULL mechanism, which sends
nothing secret; the admission handler tags each new connection with a random token (its User-Id,
which no peer can set), and a listening socket takes a connection's messages only once that
connection has run this handshake (`Kind.AUTH` messages, each field one line of the name):

  1. client -> server  hello     role, server domain, nonce_c (16 random bytes)
  2. server -> client  challenge nonce_s, MAC("server", domain, role, nonce_c, nonce_s)
  3. client -> server  proof     MAC("client", domain, role, nonce_c, nonce_s)
  4. server -> client  welcome   (or an ERROR naming authentication)

MAC is HMAC-SHA256 under a key derived from the secret; the domain names the listening socket and
the endpoint the client dialled (`pserver@127.0.0.1:6174`, `ring0.1@127.0.0.1:6180`). The client
reveals its proof only after the server proved it holds the secret for that very endpoint, so a
process that bound the port first (a "squatter") learns a role, a domain and a nonce: nothing that
opens a connection. A proof covers both nonces, so a recorded handshake replayed on a new
connection meets a new nonce_s and is refused. Once proved, the connection's messages are not
signed one by one: on loopback only root can inject into another process's TCP connection.

Either side that finds the other without the secret, or with another, fails at once with an
`AuthError` that says which side and what to set, instead of both timing out; refusals are logged
at most once per peer per minute (`RateLimitedLog`), so a flood of failed logins costs a line, not
a disk.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import time
from collections import OrderedDict

from ...ir import FleetgraphError
from .wire import Kind, Message, WireError, decode, encode

log = logging.getLogger("fleetgraph.comm")

NONCE_BYTES = 16
PENDING_LIMIT = 1024  # half-done handshakes a listening socket remembers; the oldest go first
LOG_INTERVAL_S = 60.0
_HINT = "set the same FLEETGRAPH_JOB_SECRET in every role of the job"


class AuthError(FleetgraphError):
    """A peer did not prove the job secret, or this role could not prove it to the peer."""


def _key(secret: bytes) -> bytes:
    return hashlib.sha256(b"fleetgraph-auth\0" + secret).digest()


def _mac(key: bytes, side: str, domain: str, role: str, nonce_c: bytes, nonce_s: bytes) -> str:
    text = "\n".join((side, domain, role, nonce_c.hex(), nonce_s.hex())).encode("utf-8")
    return hmac.new(key, text, hashlib.sha256).hexdigest()


def _fields(msg: Message, step: str, count: int) -> list[str] | None:
    parts = msg.name.split("\n")
    if msg.kind != Kind.AUTH or parts[0] != step or len(parts) != count + 1:
        return None
    return parts[1:]


def _hex(text: str, nbytes: int) -> bytes | None:
    try:
        raw = bytes.fromhex(text)
    except ValueError:
        return None
    return raw if len(raw) == nbytes else None


class RateLimitedLog:
    """At most one error line per key (a peer) per LOG_INTERVAL_S, counting the ones left out."""

    def __init__(self, interval_s: float = LOG_INTERVAL_S, limit: int = PENDING_LIMIT) -> None:
        self.interval_s, self.limit = interval_s, limit
        self.last: OrderedDict[str, tuple[float, int]] = OrderedDict()  # key -> (logged at, left out since)

    def error(self, key: str, fmt: str, *args) -> None:
        now = time.monotonic()
        logged, left_out = self.last.get(key, (-self.interval_s, 0))
        if now - logged < self.interval_s:
            self.last[key] = (logged, left_out + 1)
            return
        self.last[key] = (now, 0)
        self.last.move_to_end(key)
        while len(self.last) > self.limit:
            self.last.popitem(last=False)
        if left_out:
            fmt, args = fmt + " (and %d more like it in the last minute)", (*args, left_out)
        log.error(fmt, *args)


class Gate:
    """The server side of one listening socket: which connections proved which role.

    `mode` is "open" (no job secret: every connection speaks for whom it says), "curve" (ZeroMQ's
    CURVE proved the role: a frame's User-Id is it) or "challenge" (the handshake above proves
    it: a frame's User-Id is the connection's token)."""

    def __init__(self, mode: str, *, domain: str = "", roles=(), secret: bytes | None = None, where: str = "") -> None:
        self.mode, self.domain, self.roles, self.where = mode, domain, frozenset(roles), where
        self.key = _key(secret) if secret is not None else None
        self.proved: dict[str, str] = {}  # token -> role
        self.pending: OrderedDict[str, tuple[str, bytes, bytes]] = OrderedDict()  # token -> (role, nonce_c, nonce_s)
        self.refusals = RateLimitedLog()
        self.last_refusal = ""  # for the server's own timeout errors
        self.mismatched = False  # a client said this server's secret differs from its own

    @property
    def secure(self) -> bool:
        return self.mode != "open"

    def role(self, frame) -> str | None:
        """The role the connection of `frame` (a received body frame) proved; None before it did
        (and always in "open" mode)."""
        if self.mode == "open":
            return None
        user = _user_id(frame)
        return user if self.mode == "curve" else self.proved.get(user)

    def answer(self, frame, msg: Message) -> list:
        """The reply frames to an AUTH message received on `frame`'s connection."""
        token, peer = _user_id(frame), _peer(frame)
        if self.mode != "challenge":
            why = (
                f"{self.where} runs without FLEETGRAPH_JOB_SECRET, but a peer that has one connected"
                if self.mode == "open"
                else f"{self.where} authenticates with CURVE keys; the handshake for loopback addresses came"
            )
            return self._refuse(peer, why)
        hello = _fields(msg, "hello", 3)
        if hello is not None:
            return self._challenge(token, peer, *hello)
        proof = _fields(msg, "proof", 1)
        if proof is not None:
            return self._check(token, peer, proof[0])
        mismatch = _fields(msg, "mismatch", 1)
        if mismatch is not None:
            if self.pending.pop(token, None) is None:  # only a client this server challenged can say so
                return self._refuse(peer, f"{self.where}: a mismatch notice without a hello on its connection")
            self.last_refusal = (
                f"{mismatch[0][:40]!r} from {peer} found this role's FLEETGRAPH_JOB_SECRET different from its own"
            )
            self.refusals.error(peer, "%s: authentication failed: %s; %s", self.where, self.last_refusal, _HINT)
            self.mismatched = True
            return []
        return self._refuse(peer, f"{self.where}: malformed authentication message {msg.name[:40]!r}")

    def refuse_unproved(self, frame, what: str) -> list:
        """The reply to any other message on a connection that has not proved a role."""
        return self._refuse(
            _peer(frame),
            f"{self.where}: {what} on a connection that did not authenticate; this job requires "
            f"FLEETGRAPH_JOB_SECRET, and the sender has none or an old version; {_HINT}",
        )

    def _challenge(self, token: str, peer: str, role: str, domain: str, nonce_hex: str) -> list:
        nonce_c = _hex(nonce_hex, NONCE_BYTES)
        if role not in self.roles or domain != self.domain or nonce_c is None:
            expected = f"one of {sorted(self.roles)} for {self.domain!r}"
            return self._refuse(
                peer, f"{self.where}: a hello as {role[:40]!r} for {domain[:80]!r}; expected {expected}"
            )
        nonce_s = os.urandom(NONCE_BYTES)
        self.pending[token] = (role, nonce_c, nonce_s)
        while len(self.pending) > PENDING_LIMIT:
            self.pending.popitem(last=False)
        mac = _mac(self.key, "server", self.domain, role, nonce_c, nonce_s)
        return encode(Kind.AUTH, f"challenge\n{nonce_s.hex()}\n{mac}")

    def _check(self, token: str, peer: str, mac: str) -> list:
        started = self.pending.pop(token, None)
        if started is None:
            return self._refuse(peer, f"{self.where}: a proof without a hello on its connection")
        role, nonce_c, nonce_s = started
        expected = _mac(self.key, "client", self.domain, role, nonce_c, nonce_s)
        if not hmac.compare_digest(expected, mac):
            return self._refuse(
                peer,
                f"{self.where}: {role} from {peer} proved a different FLEETGRAPH_JOB_SECRET "
                "(or replayed an old handshake)",
            )
        self.proved[token] = role
        return encode(Kind.AUTH, "welcome")

    def _refuse(self, peer: str, why: str) -> list:
        self.last_refusal = why
        self.refusals.error(peer, "authentication failed: %s", why)
        return encode(Kind.ERROR, "auth", text=f"authentication failed: {why}")


class Prover:
    """The client side of the handshake for one connection, one message at a time (a ring rank
    proves itself to the next rank while it answers the previous one)."""

    def __init__(self, *, domain: str, role: str, secret: bytes, where: str) -> None:
        self.domain, self.role, self.where = domain, role, where
        self.key, self.nonce_c = _key(secret), os.urandom(NONCE_BYTES)
        self.step, self.done = "challenge", False
        self.mismatch: list | None = None  # what to tell a server that did not prove the secret

    def hello(self) -> list:
        return encode(Kind.AUTH, f"hello\n{self.role}\n{self.domain}\n{self.nonce_c.hex()}")

    def reply(self, msg: Message) -> list | None:
        """What to send after the server's `msg` (None once welcomed); AuthError if it refused us
        or did not prove the secret."""
        if msg.kind == Kind.ERROR:
            raise AuthError(f"{self.where}: {msg.text}")
        fields = _fields(msg, self.step, 2 if self.step == "challenge" else 0)
        if fields is None:
            raise AuthError(f"{self.where}: authentication: expected a {self.step}, got {msg.describe()}")
        if self.step == "welcome":
            self.done = True
            return None
        nonce_s = _hex(fields[0], NONCE_BYTES)
        expected = _mac(self.key, "server", self.domain, self.role, self.nonce_c, nonce_s) if nonce_s else ""
        if not hmac.compare_digest(expected, fields[1]):
            self.mismatch = encode(Kind.AUTH, f"mismatch\n{self.role}")
            raise AuthError(
                f"{self.where}: authentication failed: the listener did not prove this job's FLEETGRAPH_JOB_SECRET "
                f"(its secret differs, or another process holds this address); nothing it could use was sent; {_HINT}"
            )
        self.step = "welcome"
        return encode(Kind.AUTH, f"proof\n{_mac(self.key, 'client', self.domain, self.role, self.nonce_c, nonce_s)}")


def prove(sock, prover: Prover, *, timeout: float) -> None:
    """Run `prover`'s handshake on the connected DEALER `sock`, each answer awaited at most
    `timeout` seconds; AuthError when the server does not prove the secret for the prover's domain,
    refuses its role, or does not answer."""
    frames = prover.hello()
    while frames is not None:
        sock.send_multipart(frames)
        try:
            frames = prover.reply(_await(sock, prover.step, timeout, prover.where))
        except AuthError:
            if prover.mismatch:  # tell the server why, so that both sides say it
                sock.send_multipart(prover.mismatch)
            raise


def _await(sock, step: str, timeout: float, where: str) -> Message:
    import zmq

    if not sock.poll(timeout * 1000, zmq.POLLIN):
        raise AuthError(
            f"{where}: authentication: no {step} after {timeout} s (FLEETGRAPH_RPC_TIMEOUT); the listener is not "
            "up, or it is not a fleetgraph role of this version"
        )
    try:
        return decode(sock.recv_multipart())
    except WireError as e:
        raise AuthError(f"{where}: authentication: malformed {step} ({e})") from None


def _user_id(frame) -> str:
    try:
        return frame.get("User-Id")
    except Exception:  # noqa: BLE001 - a connection without an admission handler has no User-Id
        return ""


def _peer(frame) -> str:
    try:
        return frame.get("Peer-Address")
    except Exception:  # noqa: BLE001 - no such property on this transport
        return "?"
