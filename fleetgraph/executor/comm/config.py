"""Runtime settings read from the environment."""

from __future__ import annotations

import ipaddress
import os
import socket

from ...ir import FleetgraphError

DEFAULT_RPC_TIMEOUT = 60.0


def rpc_timeout() -> float:
    """Seconds any blocking wait may take: FLEETGRAPH_RPC_TIMEOUT (default 60)."""
    raw = os.environ.get("FLEETGRAPH_RPC_TIMEOUT", "")
    if not raw:
        return DEFAULT_RPC_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if value <= 0:
        raise FleetgraphError(f"FLEETGRAPH_RPC_TIMEOUT={raw!r}: expected a positive number of seconds, e.g. 30")
    return value


DEFAULT_MAX_MESSAGE_MB = 64


def max_message_bytes(largest_var_bytes: int = 0) -> int:
    """The largest frame a pserver takes from a peer (a bigger one disconnects it before ZeroMQ
    allocates it): the largest variable its program declares, with room for a header, and at least
    FLEETGRAPH_MAX_MESSAGE_MB (default 64; worker exchanges such as a global shuffle carry data of
    no declared shape)."""
    raw = os.environ.get("FLEETGRAPH_MAX_MESSAGE_MB", "")
    try:
        floor_mb = float(raw) if raw else DEFAULT_MAX_MESSAGE_MB
    except ValueError:
        floor_mb = -1.0
    if floor_mb <= 0:
        raise FleetgraphError(f"FLEETGRAPH_MAX_MESSAGE_MB={raw!r}: expected a positive number of MiB, e.g. 256")
    return max(int(floor_mb * (1 << 20)), largest_var_bytes + (1 << 20))


class CommTimeout(FleetgraphError, TimeoutError):
    """A wait ran past FLEETGRAPH_RPC_TIMEOUT; the message names who was waited for and for what."""


RING_TRANSPORTS = ("auto", "tcp")


def ring_transport() -> str:
    """How a collective ring moves its bytes: FLEETGRAPH_RING_TRANSPORT, 'auto' (the default: shared
    memory when every rank is on this host, else TCP) or 'tcp' (always TCP)."""
    raw = os.environ.get("FLEETGRAPH_RING_TRANSPORT", "") or "auto"
    if raw not in RING_TRANSPORTS:
        raise FleetgraphError(f"FLEETGRAPH_RING_TRANSPORT={raw!r}: expected one of {list(RING_TRANSPORTS)}, e.g. tcp")
    return raw


def bind_address(endpoint: str) -> str:
    """The address to listen on for `endpoint`: as given when its host is an IP address (or *),
    else the address its host name resolves to, so that the name peers connect to (a Kubernetes
    pod's DNS name, a Slurm node's) can be a job's endpoint too; ZeroMQ binds only to addresses."""
    host, _, port = endpoint.rpartition(":")
    try:
        ipaddress.ip_address(host.strip("[]"))
        return endpoint
    except ValueError:
        pass
    if host in ("*", ""):
        return endpoint
    try:
        return f"{socket.getaddrinfo(host, None, socket.AF_INET)[0][4][0]}:{port}"
    except OSError as e:
        raise FleetgraphError(
            f"endpoint {endpoint!r}: cannot resolve {host!r} to an address to listen on: {e}"
        ) from None
