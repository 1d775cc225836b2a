"""The interface every collective group implements: the TCP ring, the shared-memory ring and, later, an NCCL group.

Two layers:
  - `Collective` is what the run context hands to ops (`ctx.comm.ring(ring_id)`): all-reduce,
    its asynchronous form, broadcast and barrier on whole arrays, addressed by a name for errors.
    `ring.Ring` implements it. An NCCL group plugs in here: a class with these methods and a
    `transport` of 'nccl', returned by `ProcessComm.init_ring` for rings of GPU ranks; the ops and
    the executor's overlap need no change.
  - `Transport` is how a formed group moves the bytes of one operation it has already numbered
    and checked: `shm.SharedMemory` implements it for ranks on one host; the TCP ring's own
    protocol is the fallback inside `Ring`.
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import Protocol, runtime_checkable

import numpy as np

from ...ir import FleetgraphError


class RingError(FleetgraphError):
    """The ranks of a ring disagree: a malformed message, or one from another step or operation."""


@runtime_checkable
class Collective(Protocol):
    """A group of ranks that run the same collective operations in the same order."""

    nranks: int
    rank: int

    @property
    def transport(self) -> str:
        """How the bytes move: 'local' (one rank), 'tcp', 'shm' (and 'nccl' for a GPU group)."""
        ...

    def allreduce(self, array, name: str = "") -> np.ndarray:
        """The sum of `array` over all ranks, written into `array` where it can be."""
        ...

    def allreduce_async(self, array, name: str = "") -> Future:
        """Start `allreduce(array, name)`; `array` is not to be touched until the future is done.
        Operations started this way run in the order they were started, before any later one."""
        ...

    def broadcast(self, array, root: int = 0, name: str = "") -> np.ndarray:
        """Rank `root`'s `array` on every rank, written into `array` where it can be."""
        ...

    def barrier(self) -> None:
        """Return once every rank has called barrier()."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class Transport(Protocol):
    """How a group moves the bytes of one operation: `seq` numbers it (every rank the same),
    `where` names it for errors. `flat` is a C-contiguous 1-D array, summed or filled in place."""

    def allreduce(self, flat: np.ndarray, seq: int, op: str, where: str) -> None: ...

    def broadcast(self, flat: np.ndarray, root: int, seq: int, where: str) -> None: ...

    def barrier(self, seq: int, where: str) -> None: ...

    def close(self) -> None: ...
