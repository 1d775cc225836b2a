"""The replicas of one process (executor/parallel.py's threads) as a collective group: what their
ops see as `ctx.comm`, so an op that all-reduces (sync_batch_norm) runs across replicas as it runs
across the ranks of a job. Every replica reads the same sum, added up in replica order."""

from __future__ import annotations

import threading
from concurrent.futures import Future

import numpy as np

from ...ir import FleetgraphError
from .config import CommTimeout, rpc_timeout


class ThreadGroup:
    """`n` replicas that call the same collective operations in the same order; `comm(i)` is what
    replica i's ops see as `ctx.comm` (its ring 0 is the group)."""

    def __init__(self, nranks: int) -> None:
        self.nranks = nranks
        self._barrier = threading.Barrier(nranks)
        self._slots: list = [None] * nranks
        self._failure: BaseException | None = None

    def comm(self, rank: int) -> ReplicaComm:
        return ReplicaComm(_Member(self, rank))

    def abort(self, error: BaseException) -> None:
        """Replica code failed: the others stop waiting for it (their wait names `error`)."""
        self._failure = error
        self._barrier.abort()

    def wait(self, rank: int, name: str) -> None:
        timeout = rpc_timeout()
        try:
            self._barrier.wait(timeout)
        except threading.BrokenBarrierError:
            if self._failure is not None:
                raise FleetgraphError(f"{name} on replica {rank}: another replica failed: {self._failure}") from None
            raise CommTimeout(
                f"{name} on replica {rank}: the others did not arrive after {timeout} s (FLEETGRAPH_RPC_TIMEOUT)"
            ) from None


class _Member:
    """Replica `rank`'s side of a ThreadGroup, with the Collective interface (executor/comm/collective.py)."""

    transport = "threads"

    def __init__(self, group: ThreadGroup, rank: int) -> None:
        self.group, self.rank, self.nranks = group, rank, group.nranks

    def allreduce(self, array, name: str = "") -> np.ndarray:
        group = self.group
        group._slots[self.rank] = np.asarray(array)
        group.wait(self.rank, name or "allreduce")  # every replica's array is in
        total = group._slots[0].copy()
        for other in group._slots[1:]:
            total += other
        group.wait(self.rank, name or "allreduce")  # every replica has read them
        if isinstance(array, np.ndarray) and array.flags.writeable and array.flags.c_contiguous:
            array[...] = total
            return array
        return total

    def allreduce_async(self, array, name: str = "") -> Future:
        future: Future = Future()
        future.set_result(self.allreduce(array, name))
        return future

    def broadcast(self, array, root: int = 0, name: str = "") -> np.ndarray:
        raise FleetgraphError(f"broadcast {name!r}: the replicas of one process share their parameters")

    def barrier(self) -> None:
        self.group.wait(self.rank, "barrier")

    def close(self) -> None:
        pass


class ReplicaComm:
    """A replica's `ctx.comm`: ring 0 is its replica group; the process has no other ring here."""

    def __init__(self, member: _Member) -> None:
        self._member = member

    def has_ring(self, ring_id: int = 0) -> bool:
        return ring_id == 0

    def ring(self, ring_id: int = 0) -> _Member:
        if ring_id != 0:
            raise FleetgraphError(f"collective ring {ring_id}: the replicas of one process form ring 0 only")
        return self._member
