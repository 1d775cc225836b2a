"""A trainer's client of the pservers: one DEALER socket per pserver, requests answered in order.

A call sends every request first and then collects the answers, so requests to different pservers
proceed in parallel. Each thread that talks to the pservers (the training threads of
`train_from_dataset`) has sockets of its own. Half-async sends go to a background thread with
sockets of its own, which adds up what is pending for a variable and sends the sums. GEO pushes a
parameter's change every k steps and pulls the merged value back; for a sparse table only the rows
touched since the last push travel. Rows of a table on the pservers are fetched with `prefetch`.
`traffic` counts the bytes this process sent and received. In sync mode, once every pserver answered
a send barrier, the next message to each pserver commits that step (its header names the step: what
applies it there, ps_server.py); after a barrier that failed anywhere, nothing commits it.
"""

from __future__ import annotations

import threading

import numpy as np

from ...ir import FleetgraphError
from .ps_background import Merger, Puller, compact
from .ps_connections import Commits, Connections, Prefetch, Traffic, get_batches, got
from .ps_geo import GeoParam, GeoSteps, GeoTable
from .wire import Kind, pack_arrays, unpack_arrays


class PSClient(GeoSteps):
    """The façade ops call through `ctx.comm.ps_client()`: sockets in ps_connections.py, background
    threads in ps_background.py, GEO in ps_geo.py."""

    def __init__(self, context) -> None:
        self.context = context
        self.traffic = Traffic()
        self._local = threading.local()
        self._all_connections: list[Connections] = []
        self._lock = threading.RLock()  # the connection list, GEO state (re-entered by GEO pulls)
        self.endpoints: list[str] = []  # every pserver this trainer has talked to
        self.trainer_id = -1
        self.received: dict[str, np.ndarray] = {}  # last value pulled per variable (GEO's base)
        self.geo: dict[str, GeoParam | GeoTable] = {}
        self.merger: Merger | None = None
        self.puller: Puller | None = None
        self.commits = Commits()
        self.started = False  # past the first fetch barrier
        self.completed = False

    @property
    def connections(self) -> Connections:
        """This thread's sockets."""
        conn = getattr(self._local, "connections", None)
        if conn is None:
            conn = self._local.connections = Connections(self.context, self.traffic, self.commits)
            with self._lock:
                self._all_connections.append(conn)
        return conn

    def finish_thread(self) -> None:
        """A thread is done talking to the pservers: check its pending answers, close its sockets."""
        conn = getattr(self._local, "connections", None)
        if conn is None:
            return
        self._local.connections = None
        with self._lock:
            self._all_connections.remove(conn)
        try:
            conn.flush()
        finally:
            conn.close()

    def _note(self, endpoints, trainer_id: int) -> None:
        if self.completed:
            raise FleetgraphError(
                "the trainer already told the pservers it is done (exe.close() / "
                "fleet.stop_worker()); it cannot send or receive any more"
            )
        self.trainer_id = trainer_id
        for ep in endpoints:
            if ep not in self.endpoints:
                self.endpoints.append(ep)

    def send(self, names: list[str], values: list, epmap: list[str], trainer_id: int) -> None:
        """Send without waiting: the answers are checked at the next barrier, recv or completion."""
        self._note(epmap, trainer_id)
        items = [(ep, n, compact(v)) for n, v, ep in zip(names, values, epmap)]
        self.connections.post("send", items, trainer_id)
        if self.puller is not None:  # async: this thread's next read waits for a fresh pull
            self.puller.sent()

    def send_merged(self, names: list[str], values: list, epmap: list[str], trainer_id: int) -> None:
        """Half-async: queue the values; a background thread adds up and sends what is pending."""
        self._note(epmap, trainer_id)
        with self._lock:
            if self.merger is None:
                self.merger = Merger(self.context, trainer_id, self.traffic)
                self.merger.start()
        for name, value, ep in zip(names, values, epmap):
            self.merger.push(ep, name, np.array(value) if isinstance(value, np.ndarray) else value)

    def recv(self, names: list[str], epmap: list[str], trainer_id: int, keep_base: bool = False) -> list[np.ndarray]:
        """The values, writable (a GEO trainer updates them in place); `keep_base` also keeps a copy
        as the base of the GEO deltas."""
        self._note(epmap, trainer_id)
        conn = self.connections
        hinted, conn.hinted = conn.hinted, []
        by_endpoint, items = get_batches(names, epmap)
        asked = [h.requests() for h in hinted]
        answers = conn.request("recv", items + [r for rs in asked for r in rs], trainer_id)
        values = [np.array(v) for v in got(names, by_endpoint, answers[: len(items)])]
        start = len(items)
        for h, rs in zip(hinted, asked):
            conn.prefetched.append((h, h.rows(answers[start : start + len(rs)])))
            start += len(rs)
        if keep_base:
            with self._lock:
                self.received.update((name, value.copy()) for name, value in zip(names, values))
        return values

    def recv_latest(self, names: list[str], epmap: list[str], trainer_id: int) -> list[np.ndarray]:
        """Async: values from a pull of the trainer's background receiver that began after this
        thread's last send; threads waiting together share one pull."""
        self._note(epmap, trainer_id)
        with self._lock:
            if self.puller is None:
                self.puller = Puller(self.context, trainer_id, self.traffic)
                self.puller.start()
        self.connections.send_queued()  # this step's gradients leave before its parameters are read
        return self.puller.values(names, epmap)

    def prefetch(
        self,
        names: list[str],
        epmap: list[str],
        sections: list[int],
        ids: np.ndarray,
        trainer_id: int,
        width: int,
        dtype,
    ) -> np.ndarray:
        """Rows `ids` (sorted, distinct, global) of a table cut into blocks `names` of `sections` rows
        on `epmap`: each pserver is asked for its block's rows only, all at once. Rows a sync trainer
        asked for with the last parameters (`hint_prefetch`) are taken from that answer."""
        self._note(epmap, trainer_id)
        conn, wanted = self.connections, Prefetch(names, epmap, sections, ids, width, dtype)
        for k, (asked, rows) in enumerate(conn.prefetched):
            if asked.same(wanted):
                del conn.prefetched[k]
                return rows
        return wanted.rows(conn.request("prefetch", wanted.requests(), trainer_id))

    def hint_prefetch(
        self, names: list[str], epmap: list[str], sections: list[int], ids: np.ndarray, width: int, dtype
    ):
        """Sync training: the rows `ids` of the next batch, asked for right behind this step's parameters
        at its recv (which a pserver answers only after applying the step, so the rows are the ones
        the next step's prefetch would get): the next step waits for no round trip of its own."""
        self.connections.hinted.append(Prefetch(names, epmap, sections, ids, width, dtype))

    def send_barrier(self, endpoints: list[str], trainer_id: int) -> list[np.ndarray]:
        """Wait until every pserver has every live trainer's gradients of the step; only then does
        the next message to each pserver commit the step there. With a norm clip each pserver
        answers its sums of squares (one per norm group): returned as one [pservers, groups] array,
        the op's output; otherwise nothing."""
        answers = self._barrier("send_barrier", Kind.SEND_BARRIER, endpoints, trainer_id)
        self.commits.passed_barrier(endpoints)
        values = [a.value for a in answers]
        if all(v is None for v in values):
            return []
        if any(not isinstance(v, np.ndarray) or v.shape != values[0].shape for v in values):
            shapes = [None if v is None else list(np.shape(v)) for v in values]
            raise FleetgraphError(
                f"send_barrier: the pservers {endpoints} answered sums of squares shaped {shapes}; "
                "expected one array of one shape from each"
            )
        return [np.stack(values)]

    def fetch_barrier(self, endpoints: list[str], trainer_id: int) -> None:
        """The first one (the startup program's) waits until every trainer has its first parameters;
        after it, nothing to wait for: a pserver changes parameters only at a send barrier of every
        trainer (ps_server.py), so the round trip is saved."""
        self._note(endpoints, trainer_id)
        if not self.started:
            self._barrier("fetch_barrier", Kind.FETCH_BARRIER, endpoints, trainer_id)
            self.started = True

    def state(self, endpoints: list[str], trainer_id: int) -> list[dict[str, np.ndarray]]:
        """What each pserver holds (`fleet.save_persistables`), asked of all at once: name -> value."""
        answers = self.connections.request("save", [(ep, Kind.STATE, "", None) for ep in endpoints], trainer_id)
        out = []
        for ep, answer in zip(endpoints, answers):
            names = answer.name.split("\n") if answer.name else []
            values = unpack_arrays(answer.value) if isinstance(answer.value, np.ndarray) else []
            if len(names) != len(values):
                raise FleetgraphError(f"save from {ep}: {len(values)} values for {len(names)} names; expected one each")
            out.append(dict(zip(names, values)))
        return out

    def worker_barrier(self, endpoint: str, trainer_id: int) -> None:
        """Return once every trainer still training waits here too (`fleet.barrier_worker`); the
        pserver at `endpoint`, the same for every trainer, counts them."""
        self._barrier("barrier_worker", Kind.WORKER_BARRIER, [endpoint], trainer_id)

    def worker_exchange(self, endpoint: str, trainer_id: int, payloads: list[list[np.ndarray]]) -> dict:
        """Send payloads[t] (a list of arrays) to each trainer t through the pserver at `endpoint` (the
        same for every trainer); returns {sender: the arrays it sent here}, once every trainer still
        training has exchanged too."""
        self._note([endpoint], trainer_id)
        packed = pack_arrays([pack_arrays(p) for p in payloads])
        (answer,) = self.connections.request("exchange", [(endpoint, Kind.WORKER_EXCHANGE, "", packed)], trainer_id)
        parts = unpack_arrays(answer.value)
        return {int(s): unpack_arrays(part) for s, part in zip(parts[0], parts[1:])}

    def _barrier(self, what: str, kind: Kind, endpoints: list[str], trainer_id: int) -> list:
        self._note(endpoints, trainer_id)
        return self.connections.request(
            f"{what} of trainer {trainer_id}", [(ep, kind, "", None) for ep in endpoints], trainer_id
        )

    def complete(self) -> None:
        """Flush pending sends and tell every pserver this trainer is done (idempotent)."""
        if self.completed or not self.endpoints:
            self.completed = True
            return
        if self.merger is not None:
            self.merger.flush_and_stop()
            self.merger = None
        if self.puller is not None:
            self.puller.stop()
            self.puller = None
        with self._lock:
            for state in self.geo.values():
                if state.steps:  # the local steps since the last push still count
                    self._geo_sync(state, pull=False)
            others = [c for c in self._all_connections if c is not self.connections]
        for conn in others:  # sockets of threads that ended without finish_thread
            conn.flush()
        self.connections.request("complete", [(ep, Kind.COMPLETE, "", None) for ep in self.endpoints], self.trainer_id)
        self.completed = True
        self._close_connections()

    def close(self) -> None:
        if self.merger is not None:
            self.merger.inbox.put(None)
        if self.puller is not None:
            with self.puller.cond:
                self.puller.stopping = True
                self.puller.cond.notify_all()
        self._close_connections()

    def _close_connections(self) -> None:
        with self._lock:
            for conn in self._all_connections:
                conn.close()
            self._all_connections.clear()
        self._local = threading.local()
