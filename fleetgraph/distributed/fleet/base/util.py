"""`fleet.util`: the workers of a job swap values — all_reduce, all_gather, barrier — and split files.

Parameter-server workers swap through the first server (a worker exchange: each worker's arrays for
each worker, answered once every worker still training has sent its own); collective ranks through
ring 0. A job of one worker needs nobody.
"""

from __future__ import annotations

import numpy as np

from ....ir import FleetgraphError

_MODES = {"sum": np.add, "max": np.maximum, "min": np.minimum}


class UtilBase:
    """Paddle's `fleet.util` (UtilBase) over fleetgraph's communication."""

    def __init__(self, fleet) -> None:
        self._fleet = fleet

    # -- swapping values -------------------------------------------------------------------------
    def exchange(self, payloads: list[list[np.ndarray]]) -> list[list[np.ndarray]]:
        """Send payloads[w] (a list of arrays) to worker w; returns what each worker sent here, by
        worker index (workers that already stopped send nothing)."""
        role = self._role("exchange")
        count = role.worker_num()
        if len(payloads) != count:
            raise FleetgraphError(f"fleet.util.exchange: {len(payloads)} payloads; expected one per worker ({count})")
        if count == 1:
            return [list(payloads[0])]
        from ....executor.comm import process_comm

        if self._fleet._is_collective:
            return _ring_exchange(process_comm().ring(0), role.worker_index(), payloads)
        got = process_comm().ps_client().worker_exchange(role.get_pserver_endpoints()[0], role.worker_index(), payloads)
        return [got.get(w, []) for w in range(count)]

    def all_gather(self, input, comm_world: str = "worker") -> list:
        """Every worker's value, by worker index."""
        _check_world(comm_world, "all_gather")
        value = np.asarray(input)
        got = self.exchange([[value]] * self._role("all_gather").worker_num())
        out = [arrays[0] if arrays else None for arrays in got]
        return [v.item() if v is not None and np.ndim(input) == 0 else v for v in out]

    def all_reduce(self, input, mode: str = "sum", comm_world: str = "worker"):
        """The sum (max, min) of every worker's array, elementwise."""
        _check_world(comm_world, "all_reduce")
        if mode not in _MODES:
            raise FleetgraphError(f"fleet.util.all_reduce: mode {mode!r}; expected one of {', '.join(_MODES)}")
        value = np.asarray(input)
        values = [v for v in self.all_gather(value) if v is not None]
        for v in values:
            if np.shape(v) != value.shape:
                raise FleetgraphError(
                    f"fleet.util.all_reduce: a worker sent shape {list(np.shape(v))}; expected {list(value.shape)}"
                )
        return _MODES[mode].reduce(np.stack([np.asarray(v) for v in values]), axis=0).astype(value.dtype)

    def barrier(self, comm_world: str = "worker") -> None:
        _check_world(comm_world, "barrier")
        self._fleet.barrier_worker()

    # -- files -----------------------------------------------------------------------------------
    def get_file_shard(self, files) -> list:
        """This worker's contiguous share of `files` (the first len % workers shares one longer). A
        script that shards its files itself gets datasets that read every file they are given."""
        if not isinstance(files, (list, tuple)):
            raise TypeError(f"fleet.util.get_file_shard: files expected a list, got {type(files).__name__}")
        from ....data import set_file_shard

        set_file_shard(0, 1)
        role = self._role("get_file_shard")
        count, index = role.worker_num(), role.worker_index()
        base, extra = divmod(len(files), count)
        start = index * base + min(index, extra)
        return list(files[start : start + base + (index < extra)])

    def print_on_rank(self, message: str, rank_id: int) -> None:
        if self._role("print_on_rank").worker_index() == rank_id:
            print(message, flush=True)

    def _role(self, what: str):
        role = self._fleet._role()
        if not role.is_worker():
            raise FleetgraphError(f"fleet.util.{what}: this process is a server; expected a worker")
        return role


def _check_world(comm_world: str, what: str) -> None:
    if comm_world != "worker":
        raise FleetgraphError(
            f"fleet.util.{what}: comm_world {comm_world!r}; fleetgraph's workers swap values, expected 'worker'"
        )


def _ring_exchange(ring, rank: int, payloads: list[list[np.ndarray]]) -> list[list[np.ndarray]]:
    """All-to-all over a ring that only sums: every rank owns one row of a zero buffer per receiver."""
    from ....executor.comm.wire import pack_arrays, unpack_arrays

    mine = [pack_arrays(p) for p in payloads]
    sizes = np.zeros((ring.nranks, ring.nranks), dtype=np.int64)
    sizes[rank] = [len(m) for m in mine]
    sizes = ring.allreduce(sizes, name="exchange sizes")
    width = -(-int(sizes.max()) // 8)
    buffer = np.zeros((ring.nranks, ring.nranks, width), dtype=np.int64)
    for receiver, packed in enumerate(mine):
        buffer[rank, receiver].view(np.uint8)[: len(packed)] = packed
    buffer = ring.allreduce(buffer, name="exchange")
    return [unpack_arrays(buffer[s, rank].view(np.uint8)[: sizes[s, rank]]) for s in range(ring.nranks)]
