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

import logging
import queue
import threading

import numpy as np

from ...ir import FleetgraphError
from ...ops.selected_rows import SelectedRows, merge_dense
from ...ops.sparse_table import SparseTable
from .config import CommTimeout, rpc_timeout
from .wire import Kind, WireError, decode, encode, encode_batch, pack_arrays, unpack_arrays

log = logging.getLogger("fleetgraph.comm")


class Traffic:
    """Bytes and messages this process sent to and received from the pservers (frames' payloads and
    headers, as they leave and arrive)."""

    def __init__(self) -> None:
        self.sent = self.received = self.messages = 0
        self._lock = threading.Lock()

    def count(self, sent: int = 0, received: int = 0) -> None:
        with self._lock:
            self.sent += sent
            self.received += received
            self.messages += 1

    def snapshot(self) -> tuple[int, int, int]:
        with self._lock:
            return self.sent, self.received, self.messages


class _Commits:
    """Sync: the send barriers of this trainer that every pserver answered, counted per pserver, and
    the step each pserver is still to be told to commit: the next message to it, from whichever of
    the trainer's threads, commits that step."""

    def __init__(self) -> None:
        self.passed: dict[str, int] = {}
        self.due: dict[str, int] = {}
        self._lock = threading.Lock()

    def passed_barrier(self, endpoints: list[str]) -> None:
        with self._lock:
            for ep in endpoints:
                self.passed[ep] = self.due[ep] = self.passed.get(ep, 0) + 1

    def take(self, endpoint: str) -> int:
        """The step owed to `endpoint`, now no longer owed (0: none)."""
        if not self.due:  # nothing owed (every message but the first after a barrier): no lock
            return 0
        with self._lock:
            return self.due.pop(endpoint, 0)


MAX_IN_FLIGHT = 64  # unanswered requests to one pserver before a trainer waits for answers
BATCH_SENDS = 64  # queued sends to one pserver that leave without waiting for the next request


class _Connections:
    """DEALER sockets to pservers, used by one thread. A socket's answers come back in the order
    of its requests, so a request posted without waiting (`post`) is checked just before the next
    answer awaited on the same socket. Posted sends wait in `queued` and leave together, one
    SEND_BATCH per pserver answered once, before the next request that waits for its answer (or
    once BATCH_SENDS are queued): a step's gradients cost a pserver one message, not one each. The
    next message to a pserver commits the step owed to it (`commits`), if any."""

    def __init__(self, context, traffic: Traffic | None = None, commits: _Commits | None = None) -> None:
        self.context = context
        self.traffic = traffic or Traffic()
        self.commits = commits
        self.sockets: dict[str, object] = {}
        self.unanswered: dict[str, list[tuple[str, str, int]]] = {}
        self.queued: dict[str, list[tuple[str, object]]] = {}  # endpoint -> (name, value) of posted sends
        self.what: dict[str, str] = {}
        self.sender = -1
        self.seq = 0
        self.hinted: list[_Prefetch] = []  # sync: the next batch's rows, asked for with the parameters
        self.prefetched: list[tuple[_Prefetch, np.ndarray]] = []  # ...and the answers, until the next request

    def socket(self, endpoint: str):
        import zmq

        if endpoint not in self.sockets:
            from .security import connect

            sock = self.context.socket(zmq.DEALER)
            sock.setsockopt(zmq.LINGER, 0)
            sock.setsockopt(zmq.SNDHWM, 0)
            sock.setsockopt(zmq.RCVHWM, 0)
            try:
                connect(sock, endpoint, "pserver", f"trainer:{self.sender}", f"trainer {self.sender}")
            except BaseException:
                sock.close(linger=0)
                raise
            self.sockets[endpoint] = sock
        return self.sockets[endpoint]

    def post(self, what: str, items: list[tuple[str, str, object]], sender: int) -> None:
        """Queue sends (endpoint, name, value); their answers are checked later, before the next
        awaited answer."""
        self.sender = sender
        self.prefetched = []
        for endpoint, name, value in items:
            queue_ = self.queued.setdefault(endpoint, [])
            queue_.append((name, value))
            self.what[endpoint] = what
            if len(queue_) >= BATCH_SENDS:
                self._send_queued(endpoint)

    def send_queued(self) -> None:
        for endpoint in list(self.queued):
            self._send_queued(endpoint)

    def _send_queued(self, endpoint: str, barrier: bool = False) -> int | None:
        """The queued sends to `endpoint` as one SEND_BATCH. At most MAX_IN_FLIGHT messages to one
        pserver wait for their answers: a trainer faster than its pserver waits for it (as Paddle's
        bounded send queue makes it) instead of running ahead. With `barrier`, a SEND_BARRIER ends
        the batch, which is then answered as the barrier is: its seq is returned for the caller to
        await (a sync step's gradients and barrier cost a pserver one message)."""
        queue_ = self.queued.pop(endpoint, [])
        if not queue_:
            return None
        waiting = self.unanswered.setdefault(endpoint, [])
        if len(waiting) >= MAX_IN_FLIGHT:
            for earlier in waiting[: MAX_IN_FLIGHT // 2]:
                self._answer(endpoint, *earlier)
            del waiting[: MAX_IN_FLIGHT // 2]
        self.seq += 1
        messages = [encode(Kind.SEND, name, value, sender=self.sender, seq=self.seq) for name, value in queue_]
        if barrier:
            messages.append(encode(Kind.SEND_BARRIER, sender=self.sender, seq=self.seq))
        frames = encode_batch(messages, sender=self.sender, seq=self.seq, commit=self._commit_for(endpoint))
        self.socket(endpoint).send_multipart(frames, copy=False)
        self.traffic.count(sent=sum(len(f) if isinstance(f, bytes) else f.nbytes for f in frames))
        if barrier:
            return self.seq
        names = ", ".join(name for name, _ in queue_)
        waiting.append((self.what.get(endpoint, "send"), names, self.seq))
        return None

    def request(self, what: str, items: list[tuple[str, Kind, str, object]], sender: int) -> list:
        """Send (endpoint, kind, name, value) requests, then wait for each answer in turn. A send
        barrier to a pserver with sends queued leaves in their batch."""
        self.prefetched = []
        self.sender = sender
        folded = {ep: self._send_queued(ep, barrier=True) for ep, kind, _, _ in items if kind == Kind.SEND_BARRIER}
        self.send_queued()
        pending = [
            (endpoint, name, folded.get(endpoint) or self._send(endpoint, kind, name, value, sender))
            for endpoint, kind, name, value in items
        ]
        answers = []
        try:
            for endpoint, name, seq in pending:
                for earlier in self.unanswered.pop(endpoint, []):
                    self._answer(endpoint, *earlier)
                answers.append(self._answer(endpoint, what, name, seq))
        except BaseException:
            # answers left unread would come before those of the next requests: new sockets for those
            for endpoint, _, _ in pending[len(answers) :]:
                self._drop(endpoint)
            raise
        return answers

    def _drop(self, endpoint: str) -> None:
        sock = self.sockets.pop(endpoint, None)
        if sock is not None:
            sock.close(linger=0)
        self.unanswered.pop(endpoint, None)

    def _commit_for(self, endpoint: str) -> int:
        """The step the next message to `endpoint` commits (0: none)."""
        return self.commits.take(endpoint) if self.commits is not None else 0

    def flush(self) -> None:
        """Send what is queued; check the answers of every request posted without waiting."""
        self.send_queued()
        for endpoint in list(self.unanswered):
            for earlier in self.unanswered.pop(endpoint):
                self._answer(endpoint, *earlier)

    def _send(self, endpoint: str, kind: Kind, name: str, value, sender: int) -> int:
        self.sender = sender
        self.seq += 1
        frames = encode(kind, name, value, sender=sender, seq=self.seq, commit=self._commit_for(endpoint))
        self.socket(endpoint).send_multipart(frames, copy=False)
        self.traffic.count(sent=sum(len(f) if isinstance(f, bytes) else f.nbytes for f in frames))
        return self.seq

    def _answer(self, endpoint: str, what: str, name: str, seq: int):
        import zmq

        sock, timeout = self.socket(endpoint), rpc_timeout()
        what = f"{what} {name!r}" if name else what  # a barrier names no variable
        if not sock.poll(timeout * 1000, zmq.POLLIN):
            raise CommTimeout(f"{what} from {endpoint}: no answer after {timeout} s (FLEETGRAPH_RPC_TIMEOUT)")
        frames = sock.recv_multipart(copy=False)
        self.traffic.count(received=sum(f.buffer.nbytes for f in frames))
        try:
            answer = decode(frames)
        except WireError as e:
            raise FleetgraphError(f"{what} from {endpoint}: malformed answer ({e})") from None
        if answer.kind == Kind.ERROR:
            raise FleetgraphError(f"{what} at {endpoint} was refused: {answer.text}")
        if answer.seq != seq:
            raise FleetgraphError(f"{what} from {endpoint}: answer to request {answer.seq}, expected {seq}")
        return answer

    def close(self) -> None:
        for sock in self.sockets.values():
            sock.close(linger=0)
        self.sockets.clear()
        self.unanswered.clear()
        self.queued.clear()


class _Merger(threading.Thread):
    """Half-async sending: pending values of one variable are added up and sent as one."""

    def __init__(self, context, sender: int, traffic: Traffic) -> None:
        super().__init__(name="fleetgraph-half-async-sender", daemon=True)
        self.connections = _Connections(context, traffic)
        self.sender = sender
        self.inbox: queue.Queue = queue.Queue()
        self.error: BaseException | None = None

    def push(self, endpoint: str, name: str, value) -> None:
        if self.error is not None:
            raise FleetgraphError(f"half-async sender failed: {self.error}") from self.error
        self.inbox.put((endpoint, name, value))

    def run(self) -> None:
        try:
            while True:
                batch = [self.inbox.get()]
                while not self.inbox.empty():
                    batch.append(self.inbox.get_nowait())
                stop = any(item is None for item in batch)
                merged: dict[tuple[str, str], list] = {}
                for item in batch:
                    if item is not None:
                        merged.setdefault(item[:2], []).append(item[2])
                items = [(ep, Kind.SEND, name, _add_up(values)) for (ep, name), values in merged.items()]
                if items:
                    self.connections.request("send", items, self.sender)
                if stop:
                    return
        except BaseException as e:  # reported to the trainer on its next push or at flush
            self.error = e
            log.error("half-async sender: %s", e)
        finally:
            self.connections.close()

    def flush_and_stop(self) -> None:
        self.inbox.put(None)
        self.join(rpc_timeout())
        if self.error is not None:
            raise FleetgraphError(f"half-async sender failed: {self.error}") from self.error


class _Puller(threading.Thread):
    """Async receiving, shared by a trainer's threads: a step reads values from a pull that started
    after that thread's last send (so it sees its own updates as a step of its own would), and every
    thread waiting then is served by the same pull: one stream of parameter fetches per trainer,
    however many threads train. The values are read-only arrays, replaced whole."""

    def __init__(self, context, sender: int, traffic: Traffic) -> None:
        super().__init__(name="fleetgraph-async-receiver", daemon=True)
        self.connections = _Connections(context, traffic)
        self.sender = sender
        self.wanted: dict[str, str] = {}  # variable -> pserver
        self.latest: dict[str, np.ndarray] = {}
        self.started = self.done = 0  # pulls begun and finished
        self.asked = 0  # the pull some thread waits for
        self.cond = threading.Condition()
        self.stopping = False
        self.error: BaseException | None = None
        self._local = threading.local()

    def sent(self) -> None:
        """This thread sent: its next read waits for a pull that starts after now."""
        with self.cond:
            self._local.after = self.started + 1

    def values(self, names: list[str], epmap: list[str]) -> list[np.ndarray]:
        with self.cond:
            self.wanted.update(zip(names, epmap))
            need = getattr(self._local, "after", 1) if all(n in self.latest for n in names) else self.started + 1
            if self.done < need:
                self.asked = max(self.asked, need)
                self.cond.notify_all()
                deadline = rpc_timeout()
                if not self.cond.wait_for(lambda: self.done >= need or self.error is not None, deadline):
                    raise CommTimeout(
                        f"recv {names[0]!r}: no parameters pulled after {deadline} s (FLEETGRAPH_RPC_TIMEOUT)"
                    )
            if self.error is not None:
                raise FleetgraphError(f"async receiver failed: {self.error}") from self.error
            return [self.latest[n] for n in names]

    def run(self) -> None:
        try:
            while True:
                with self.cond:
                    self.cond.wait_for(lambda: self.stopping or self.asked > self.done)
                    if self.stopping:
                        return
                    self.started += 1
                    pull, wanted = self.started, list(self.wanted.items())
                names, epmap = [n for n, _ in wanted], [ep for _, ep in wanted]
                values = get_all(self.connections, names, epmap, self.sender)
                with self.cond:
                    self.latest.update(zip(names, values))
                    self.done = pull
                    self.cond.notify_all()
        except BaseException as e:  # reported to every waiting and later recv
            with self.cond:
                self.error = e
                self.cond.notify_all()
            log.error("async receiver: %s", e)
        finally:
            self.connections.close()

    def stop(self) -> None:
        with self.cond:
            self.stopping = True
            self.cond.notify_all()
        self.join(rpc_timeout())


def get_all(connections: _Connections, names: list[str], epmap: list[str], sender: int) -> list[np.ndarray]:
    """The variables `names` from the pservers `epmap`: one GET_BATCH to each pserver, all at once."""
    by_endpoint, items = _get_batches(names, epmap)
    return _got(names, by_endpoint, connections.request("recv", items, sender))


def _get_batches(names: list[str], epmap: list[str]) -> tuple[dict[str, list[int]], list]:
    by_endpoint: dict[str, list[int]] = {}
    for i, ep in enumerate(epmap):
        by_endpoint.setdefault(ep, []).append(i)
    items = [(ep, Kind.GET_BATCH, "\n".join(names[i] for i in idx), None) for ep, idx in by_endpoint.items()]
    return by_endpoint, items


def _got(names: list[str], by_endpoint: dict[str, list[int]], answers: list) -> list[np.ndarray]:
    values: list = [None] * len(names)
    for (ep, idx), answer in zip(by_endpoint.items(), answers):
        got = unpack_arrays(answer.value) if isinstance(answer.value, np.ndarray) else []
        if len(got) != len(idx):
            raise FleetgraphError(f"recv from {ep}: {len(got)} values for {len(idx)} variables; expected one each")
        for i, value in zip(idx, got):
            values[i] = value
    return values


class _Prefetch:
    """Rows `ids` (sorted, distinct, global) of a table cut into blocks `names` of `sections` rows on
    `epmap`: a PREFETCH to each pserver holding some, and the rows put back together."""

    def __init__(self, names, epmap, sections, ids: np.ndarray, width: int, dtype) -> None:
        self.names, self.epmap, self.sections = list(names), list(epmap), list(sections)
        self.ids, self.width, self.dtype = ids, width, dtype
        bounds = np.cumsum([0, *sections])
        cuts = np.searchsorted(ids, bounds)
        self.parts = [(i, cuts[i], cuts[i + 1]) for i in range(len(names)) if cuts[i + 1] > cuts[i]]
        self.bounds = bounds

    def same(self, other: _Prefetch) -> bool:
        return (self.names, self.epmap, self.sections) == (other.names, other.epmap, other.sections) and (
            np.array_equal(self.ids, other.ids)
        )

    def requests(self) -> list:
        return [
            (self.epmap[i], Kind.PREFETCH, self.names[i], self.ids[lo:hi] - self.bounds[i]) for i, lo, hi in self.parts
        ]

    def rows(self, answers: list) -> np.ndarray:
        out = np.empty((len(self.ids), self.width), dtype=self.dtype)
        for (i, lo, hi), answer in zip(self.parts, answers):
            rows = answer.value
            if not isinstance(rows, np.ndarray) or rows.shape != (hi - lo, self.width):
                raise FleetgraphError(
                    f"prefetch {self.names[i]!r} from {self.epmap[i]}: expected rows [{hi - lo}, {self.width}], got "
                    f"{list(np.shape(rows))}"
                )
            out[lo:hi] = rows
        return out


def _add_up(values):
    return _compact(values[0] if len(values) == 1 else merge_dense(np, values))


def _compact(value):
    """What goes on the wire: a sparse gradient with each row once (a batch looks an id up as often
    as it occurs; its row travels once, the sum of its gradients), anything else as it is."""
    return value.merged(np) if isinstance(value, SelectedRows) else value


class _GeoParam:
    """A GEO parameter: its array (updated in place by the local optimizer) and the last values
    the pservers gave for each of its blocks."""

    def __init__(self, array: np.ndarray, blocks: list[tuple[str, str, slice]], epmap: list[str]) -> None:
        self.array, self.blocks, self.epmap, self.steps = array, blocks, epmap, 0


class _GeoTable:
    """A GEO trainer's copy of a table on the pservers (a SparseTable), the rows' values when last
    pulled (the base of their deltas; a row never pulled has its initial value; its rows sit where
    the table's do, under the table's index), and the ids touched since the last push."""

    def __init__(self, table: SparseTable, names: list[str], epmap: list[str], sections: list[int]) -> None:
        self.table, self.names, self.epmap, self.sections = table, names, epmap, sections
        self.base = SparseTable(table.height, table.width, table.dtype, table.init, table.offset)
        self.base.follow(table)
        self.touched: list[np.ndarray] = []
        self.steps = 0


class PSClient:
    def __init__(self, context) -> None:
        self.context = context
        self.traffic = Traffic()
        self._local = threading.local()
        self._all_connections: list[_Connections] = []
        self._lock = threading.RLock()  # the connection list, GEO state (re-entered by GEO pulls)
        self.endpoints: list[str] = []  # every pserver this trainer has talked to
        self.trainer_id = -1
        self.received: dict[str, np.ndarray] = {}  # last value pulled per variable (GEO's base)
        self.geo: dict[str, _GeoParam | _GeoTable] = {}
        self.merger: _Merger | None = None
        self.puller: _Puller | None = None
        self.commits = _Commits()
        self.started = False  # past the first fetch barrier
        self.completed = False

    @property
    def connections(self) -> _Connections:
        """This thread's sockets."""
        conn = getattr(self._local, "connections", None)
        if conn is None:
            conn = self._local.connections = _Connections(self.context, self.traffic, self.commits)
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
        items = [(ep, n, _compact(v)) for n, v, ep in zip(names, values, epmap)]
        self.connections.post("send", items, trainer_id)
        if self.puller is not None:  # async: this thread's next read waits for a fresh pull
            self.puller.sent()

    def send_merged(self, names: list[str], values: list, epmap: list[str], trainer_id: int) -> None:
        """Half-async: queue the values; a background thread adds up and sends what is pending."""
        self._note(epmap, trainer_id)
        with self._lock:
            if self.merger is None:
                self.merger = _Merger(self.context, trainer_id, self.traffic)
                self.merger.start()
        for name, value, ep in zip(names, values, epmap):
            self.merger.push(ep, name, np.array(value) if isinstance(value, np.ndarray) else value)

    def recv(self, names: list[str], epmap: list[str], trainer_id: int, keep_base: bool = False) -> list[np.ndarray]:
        """The values, writable (a GEO trainer updates them in place); `keep_base` also keeps a copy
        as the base of the GEO deltas."""
        self._note(epmap, trainer_id)
        conn = self.connections
        hinted, conn.hinted = conn.hinted, []
        by_endpoint, items = _get_batches(names, epmap)
        asked = [h.requests() for h in hinted]
        answers = conn.request("recv", items + [r for rs in asked for r in rs], trainer_id)
        values = [np.array(v) for v in _got(names, by_endpoint, answers[: len(items)])]
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
                self.puller = _Puller(self.context, trainer_id, self.traffic)
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
        conn, wanted = self.connections, _Prefetch(names, epmap, sections, ids, width, dtype)
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
        self.connections.hinted.append(_Prefetch(names, epmap, sections, ids, width, dtype))

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

    def geo_step(
        self,
        name: str,
        param: np.ndarray,
        epmap: list[str],
        sections: list[int],
        delta_names: list[str],
        k_steps: int,
        trainer_id: int,
    ) -> None:
        """Count a local step; every k_steps push each block's change since the last pull and pull
        the pservers' merged blocks back into the parameter."""
        self._note(epmap, trainer_id)
        with self._lock:
            state = self.geo.get(name)
            if state is None:
                state = self.geo[name] = self._geo_param(name, param, epmap, sections, delta_names)
            state.array = param
            state.steps += 1
            if state.steps % k_steps == 0:
                self._geo_sync(state, pull=True)

    def _geo_param(self, name, param, epmap, sections, delta_names) -> _GeoParam:
        bounds = np.cumsum([0] + list(sections))
        blocks = [(d, d[: -len(".delta")], slice(bounds[i], bounds[i + 1])) for i, d in enumerate(delta_names)]
        for _, block, _ in blocks:
            if block not in self.received:
                raise FleetgraphError(
                    f"GEO send {name!r}: block {block!r} was never received from the pservers; "
                    "run the trainer's startup program first"
                )
        return _GeoParam(param, blocks, list(epmap))

    def geo_table_step(
        self,
        name: str,
        table: SparseTable,
        touched: SelectedRows,
        epmap: list[str],
        sections: list[int],
        delta_names: list[str],
        k_steps: int,
        trainer_id: int,
    ) -> None:
        """GEO for a table on the pservers: note the rows this step touched; every k_steps push the
        change of the rows touched since the last push (as sparse rows) and pull those rows back."""
        self._note(epmap, trainer_id)
        with self._lock:
            state = self.geo.get(name)
            if state is None:
                state = self.geo[name] = _GeoTable(table, delta_names, list(epmap), list(sections))
            state.touched.append(np.asarray(touched.rows))
            state.steps += 1
            if state.steps % k_steps == 0:
                self._geo_sync(state, pull=True)

    def _geo_sync(self, state: _GeoParam | _GeoTable, pull: bool) -> None:
        if isinstance(state, _GeoTable):
            self._geo_sync_table(state, pull)
            return
        deltas = [state.array[rows] - self.received[block] for _, block, rows in state.blocks]
        self.connections.request(
            "send",
            [(ep, Kind.SEND, d, delta) for (d, _, _), delta, ep in zip(state.blocks, deltas, state.epmap)],
            self.trainer_id,
        )
        if pull:
            fresh = self.recv([block for _, block, _ in state.blocks], state.epmap, self.trainer_id, keep_base=True)
            for (_, _, rows), value in zip(state.blocks, fresh):
                state.array[rows] = value
        state.steps = 0

    def _geo_sync_table(self, state: _GeoTable, pull: bool) -> None:
        ids = np.unique(np.concatenate(state.touched))
        state.touched, state.steps = [], 0
        positions = state.table.positions(ids)
        state.base.follow(state.table)  # rows the table created since
        delta = state.table.values[positions] - state.base.values[positions]
        bounds = np.cumsum([0, *state.sections])
        cuts = np.searchsorted(ids, bounds)
        items = [
            (ep, Kind.SEND, name, SelectedRows(ids[lo:hi] - bounds[i], delta[lo:hi], state.sections[i]))
            for i, (name, ep, lo, hi) in enumerate(zip(state.names, state.epmap, cuts[:-1], cuts[1:]))
            if hi > lo
        ]
        self.connections.request("send", items, self.trainer_id)
        if pull:
            blocks = [d[: -len(".delta")] for d in state.names]
            fresh = self.prefetch(
                blocks, state.epmap, state.sections, ids, self.trainer_id, delta.shape[1], delta.dtype
            )
            state.table.write(positions, fresh)
            state.base.write(positions, fresh)

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
