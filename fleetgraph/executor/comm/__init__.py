"""Communication between processes over ZeroMQ: the only package that opens sockets.

One `ProcessComm` per process owns every socket: the parameter-server client of a trainer, the
collective rings of a rank (each a `collective.Collective`). Kernels reach it through `ctx.comm`.
"""

from __future__ import annotations

import atexit
import threading
from typing import TYPE_CHECKING

from ...ir import FleetgraphError

if TYPE_CHECKING:
    from .collective import Collective

_lock = threading.Lock()
_process: ProcessComm | None = None


class ProcessComm:
    def __init__(self) -> None:
        import zmq

        self.context = zmq.Context()
        self._ps_client = None
        self._rings: dict[int, Collective] = {}

    def ps_client(self):
        """This process's client of the pservers (created on first use)."""
        if self._ps_client is None:
            from .ps_client import PSClient

            self._ps_client = PSClient(self.context)
        return self._ps_client

    def init_ring(self, ring_id: int, nranks: int, rank: int, endpoints: list[str]) -> Collective:
        from .ring import Ring

        running = self._rings.get(ring_id)
        if running is not None:
            # The same members again (a fleet program's c_comm_init after init_parallel_env): the
            # running ring serves. Rebinding it would lose the first rank's authentication in the old
            # socket of a rank that has not yet come to its own second start.
            if running.serves(nranks, rank, endpoints):
                return running
            running.close()
        self._rings[ring_id] = Ring(self.context, nranks, rank, endpoints, ring_id)
        return self._rings[ring_id]

    def has_ring(self, ring_id: int = 0) -> bool:
        """Whether ring `ring_id` was started (a job of one process starts none)."""
        return ring_id in self._rings

    def ring(self, ring_id: int = 0) -> Collective:
        if ring_id not in self._rings:
            raise FleetgraphError(
                f"collective ring {ring_id} is not initialized; run the startup program (its c_comm_init op) first"
            )
        return self._rings[ring_id]

    def serve(self, **kwargs):
        from .ps_server import PServer

        return PServer(self.context, **kwargs).serve()

    def stop_worker(self) -> None:
        if self._ps_client is not None:
            self._ps_client.complete()

    def close(self) -> None:
        if self._ps_client is not None:
            self._ps_client.close()
            self._ps_client = None
        for ring in self._rings.values():
            ring.close()
        self._rings.clear()
        from .security import stop

        stop(self.context)
        self.context.term()


def process_comm() -> ProcessComm:
    global _process
    with _lock:
        if _process is None:
            _process = ProcessComm()
        return _process


def finish_thread() -> None:
    """A thread that talked to the pservers is done: check its pending answers, close its sockets."""
    if _process is not None and _process._ps_client is not None:
        _process._ps_client.finish_thread()


def stop_worker() -> None:
    """Tell every pserver this trainer talked to that it is done (`exe.close()`, `fleet.stop_worker()`)."""
    if _process is not None:
        _process.stop_worker()


@atexit.register
def _close_at_exit() -> None:
    global _process
    if _process is not None:
        _process.close()
        _process = None
