"""A trainer's sockets to the pservers: requests answered in order, sends batched, steps committed, bytes counted."""

from __future__ import annotations

import threading

import numpy as np

from ...ir import FleetgraphError
from .. import trace
from .config import CommTimeout, rpc_timeout
from .wire import Kind, WireError, decode, encode, encode_batch, unpack_arrays


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


class Commits:
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


class Connections:
    """DEALER sockets to pservers, used by one thread. A socket's answers come back in the order
    of its requests, so a request posted without waiting (`post`) is checked just before the next
    answer awaited on the same socket. Posted sends wait in `queued` and leave together, one
    SEND_BATCH per pserver answered once, before the next request that waits for its answer (or
    once BATCH_SENDS are queued): a step's gradients cost a pserver one message, not one each. The
    next message to a pserver commits the step owed to it (`commits`), if any."""

    def __init__(self, context, traffic: Traffic | None = None, commits: Commits | None = None) -> None:
        self.context = context
        self.traffic = traffic or Traffic()
        self.commits = commits
        self.sockets: dict[str, object] = {}
        self.unanswered: dict[str, list[tuple[str, str, int]]] = {}
        self.queued: dict[str, list[tuple[str, object]]] = {}  # endpoint -> (name, value) of posted sends
        self.what: dict[str, str] = {}
        self.sender = -1
        self.seq = 0
        self.hinted: list[Prefetch] = []  # sync: the next batch's rows, asked for with the parameters
        self.prefetched: list[tuple[Prefetch, np.ndarray]] = []  # ...and the answers, until the next request

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
        nbytes = sum(len(f) if isinstance(f, bytes) else f.nbytes for f in frames)
        with trace.span(f"send to {endpoint}", "send", bytes=nbytes, vars=len(queue_)):
            self.socket(endpoint).send_multipart(frames, copy=False)
        self.traffic.count(sent=nbytes)
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
        nbytes = sum(len(f) if isinstance(f, bytes) else f.nbytes for f in frames)
        with trace.span(
            f"{kind.name.lower()} {name} to {endpoint}" if name else f"{kind.name.lower()} to {endpoint}",
            "send",
            bytes=nbytes,
        ):
            self.socket(endpoint).send_multipart(frames, copy=False)
        self.traffic.count(sent=nbytes)
        return self.seq

    def _answer(self, endpoint: str, what: str, name: str, seq: int):
        import zmq

        sock, timeout = self.socket(endpoint), rpc_timeout()
        what = f"{what} {name!r}" if name else what  # a barrier names no variable
        with trace.span(f"{what} from {endpoint}", "wait") as args:
            if not sock.poll(timeout * 1000, zmq.POLLIN):
                raise CommTimeout(f"{what} from {endpoint}: no answer after {timeout} s (FLEETGRAPH_RPC_TIMEOUT)")
            frames = sock.recv_multipart(copy=False)
            args["bytes"] = sum(f.buffer.nbytes for f in frames)
        self.traffic.count(received=args["bytes"])
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


def get_all(connections: Connections, names: list[str], epmap: list[str], sender: int) -> list[np.ndarray]:
    """The variables `names` from the pservers `epmap`: one GET_BATCH to each pserver, all at once."""
    by_endpoint, items = get_batches(names, epmap)
    return got(names, by_endpoint, connections.request("recv", items, sender))


def get_batches(names: list[str], epmap: list[str]) -> tuple[dict[str, list[int]], list]:
    by_endpoint: dict[str, list[int]] = {}
    for i, ep in enumerate(epmap):
        by_endpoint.setdefault(ep, []).append(i)
    items = [(ep, Kind.GET_BATCH, "\n".join(names[i] for i in idx), None) for ep, idx in by_endpoint.items()]
    return by_endpoint, items


def got(names: list[str], by_endpoint: dict[str, list[int]], answers: list) -> list[np.ndarray]:
    values: list = [None] * len(names)
    for (ep, idx), answer in zip(by_endpoint.items(), answers):
        got = unpack_arrays(answer.value) if isinstance(answer.value, np.ndarray) else []
        if len(got) != len(idx):
            raise FleetgraphError(f"recv from {ep}: {len(got)} values for {len(idx)} variables; expected one each")
        for i, value in zip(idx, got):
            values[i] = value
    return values


class Prefetch:
    """Rows `ids` (sorted, distinct, global) of a table cut into blocks `names` of `sections` rows on
    `epmap`: a PREFETCH to each pserver holding some, and the rows put back together."""

    def __init__(self, names, epmap, sections, ids: np.ndarray, width: int, dtype) -> None:
        self.names, self.epmap, self.sections = list(names), list(epmap), list(sections)
        self.ids, self.width, self.dtype = ids, width, dtype
        bounds = np.cumsum([0, *sections])
        cuts = np.searchsorted(ids, bounds)
        self.parts = [(i, cuts[i], cuts[i + 1]) for i in range(len(names)) if cuts[i + 1] > cuts[i]]
        self.bounds = bounds

    def same(self, other: Prefetch) -> bool:
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
