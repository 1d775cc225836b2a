"""Runtime settings read from the environment."""

from __future__ import annotations

import os

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
