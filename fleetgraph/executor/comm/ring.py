"""A ring of ranks over ZeroMQ TCP: bandwidth-optimal all-reduce, pipelined broadcast and barrier.

When every rank runs on this host (and FLEETGRAPH_RING_TRANSPORT is not 'tcp'), the ring agrees at
start-up to move the bytes through shared memory instead (`shm.SharedMemory`): the collectives
below then run only to set that up. The rest of this docstring is the TCP transport.

Rank r binds a ROUTER socket (its inbox) on exactly `endpoints[r]` and connects a DEALER socket
(its outbox) to the next rank, so it receives from rank r-1 and sends to rank r+1; the sockets
carry answers the other way only while the ring forms (the loopback authentication of
`handshake.py`, and errors for a peer that did not authenticate). Every message is a `Kind.RING` wire message
whose `seq` is the ring's operation counter and whose name is `<op>:<step>:<chunk>:<piece>`; the
receiver checks both, the sender, the dtype and the size before it touches the payload, so ranks
running different collective sequences fail with a clear error instead of summing the wrong bytes.
The constructor returns once every rank is up and connected (`_handshake`), whatever order the
ranks started in.

All-reduce steps (n ranks; the flattened array split into n chunks as `np.array_split` does, every
chunk cut into the same number of pieces, of at most PIECE_BYTES, so that sending, receiving and
adding overlap):
  1. send the first WINDOW pieces of this rank's chunk r to rank r+1, zero-copy from the array;
  2. receive the messages in the order the previous rank sends them (`chunks.schedule`). A
     reduce-scatter message (step s < n-1, chunk r-1-s) is added into the array in place and the
     sum sent on: after step n-2 it is the sum over every rank, and its sending starts the
     all-gather. An all-gather message is copied into place and the received buffer itself is
     forwarded, unless the next rank is the one that summed it. Each step-0 message received lets
     the next piece of chunk r go out;
  3. wait until ZeroMQ has let go of the summed pieces sent from the array: the caller may
     overwrite the array once we return. Every other piece sent from the array has arrived by
     then, because the all-gather pieces this rank received could not exist otherwise.
ZeroMQ mallocs a buffer for each piece received, freed once it is added or copied: those pages stay
mapped from one all-reduce to the next because the executor package tunes glibc's thresholds at
import (`native.tune_allocator`); trimmed each time, they made a 16 MB all-reduce 30% slower on 2 cores.

bfloat16 is summed in float32 and rounded to bfloat16 once, at the end, on either transport: the
TCP ring all-reduces a float32 copy (the bytes a float32 gradient costs, never more) and the
shared-memory path adds each chunk in float32 (no more bytes at all). NCCL instead adds in bfloat16
at every hop, so its error grows with the number of ranks; with two ranks, one addition, the two
agree. Either way the result is the same on every rank: each rank's chunk sum reaches the others as
it is.

`allreduce_async` runs an all-reduce on the ring's one communication thread instead (the executor
overlaps backward with it): operations started there run one at a time in the order they were
started, and every operation called directly first waits for them, so each rank runs its ring's
collectives in the order its program issues them, whichever thread carries them, and the ring's
sockets and shared memory are used by one thread at a time.
"""

from __future__ import annotations

import contextlib
import errno
import time
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from ...ir import FleetgraphError
from ...ir.dtypes import BFLOAT16
from .. import trace
from .chunks import PIECE_BYTES, pieces, pieces_of, schedule, split
from .collective import RingError
from .config import CommTimeout, bind_address, ring_transport, rpc_timeout
from .handshake import AuthError
from .ring_io import Io
from .wire import DTYPES, Kind, WireError, decode, encode

INBOX_QUEUE = 64  # pieces
# How long close() lets queued messages drain to a live peer before dropping them.
LINGER_MS = 2000
RECONNECT_MS = 50
# How often the handshake sends its hellos again while nothing arrives.
HELLO_RESEND_S = 0.1
# Pieces of its own chunk a rank sends before it waits for its first message: enough to keep
# the connection busy while the first one is being added.
WINDOW = 2
_BIND_RETRY_S = 2.0
# allreduce_async of fewer bytes than this runs at once when nothing is queued: handing an
# operation to the thread and back costs about 80 us on 2 loaded cores, as much as a small
# all-reduce itself (about 250 us for 4 bytes to 400 kB over shared memory there).
ASYNC_MIN_BYTES = 1 << 20
_AUTH_KIND = bytes([Kind.AUTH])  # a header's kind byte for an authentication message


class Ring:
    """`nranks` processes in a ring; rank `rank` listens on `endpoints[rank]` ('ip:port').
    A `collective.Collective`; its shared-memory path is a `collective.Transport`."""

    def __init__(self, context, nranks: int, rank: int, endpoints: list[str], ring_id: int = 0) -> None:
        self.nranks, self.rank, self.ring_id = _checked(nranks, rank, endpoints, ring_id)
        self.endpoints = [_address(e) for e in endpoints]
        self.prev = self.endpoints[(rank - 1) % nranks]
        self.next = self.endpoints[(rank + 1) % nranks]
        self._seq = 0
        self._inbox = self._outbox = self._shared = self._broken = None
        self._gate = None  # the inbox's admission (security.secure_server)
        self._prev_role = f"rank:{(rank - 1) % nranks}"  # the one peer that sends here
        self._thread: ThreadPoolExecutor | None = None  # the communication thread, once one is asked for
        self._last: Future | None = None  # the operation started on it last
        if nranks == 1:
            return
        import zmq

        self._zmq = zmq
        try:
            from .security import secure_client, secure_server

            what = f"ring {ring_id}, rank {rank}"
            self._inbox = self._socket(context, zmq.ROUTER)
            domain = f"ring{ring_id}.{rank}"
            self._gate = secure_server(context, self._inbox, self.endpoints[rank], domain, [self._prev_role], what)
            self._bind(self._inbox, self.endpoints[rank])
            self._outbox = self._socket(context, zmq.DEALER)
            next_domain = f"ring{ring_id}.{(rank + 1) % nranks}"
            prover = secure_client(self._outbox, self.next, next_domain, f"rank:{rank}", what)
            self._outbox.connect(f"tcp://{self.next}")
            if prover is not None or self._gate.mode == "challenge":
                self._authenticate(prover)
            self._handshake()
            from . import shm

            # Every rank takes part, whatever it wants: one rank set to 'tcp' makes the ring TCP.
            self._shared = shm.attach(self, wanted=ring_transport() == "auto")
            # Number the operations users run from 1 whatever the set-up ran: each socket delivers
            # in order, so no message of the set-up can be taken for one of theirs.
            self._seq = 0
        except BaseException:
            self.close(linger_ms=0)  # a ring that never formed has nothing worth delivering
            raise

    @property
    def transport(self) -> str:
        """'shm' when the ranks move bytes through shared memory, 'tcp' when over the TCP ring
        (and 'local' for a ring of one rank)."""
        if self.nranks == 1:
            return "local"
        return "tcp" if self._shared is None else "shm"

    def _socket(self, context, kind):
        zmq = self._zmq
        sock = context.socket(kind)
        sock.setsockopt(zmq.LINGER, LINGER_MS)
        sock.setsockopt(zmq.SNDHWM, 0)  # never block or drop a send: a chunk's pieces queue up
        # a receiver holds a bounded queue of pieces no bigger than a piece from any one peer; the
        # rest wait at the sender (its queue above is unbounded), so nothing is lost
        sock.setsockopt(zmq.RCVHWM, INBOX_QUEUE)
        sock.setsockopt(zmq.MAXMSGSIZE, PIECE_BYTES + (1 << 20))
        sock.setsockopt(zmq.RECONNECT_IVL, RECONNECT_MS)
        sock.setsockopt(zmq.SNDTIMEO, int(rpc_timeout() * 1000))
        return sock

    def _bind(self, sock, endpoint: str) -> None:
        # A ring re-created on the same endpoint (startup run twice) finds the old socket still
        # closing in ZeroMQ's background thread for a moment.
        deadline = time.monotonic() + _BIND_RETRY_S
        while True:
            try:
                sock.bind(f"tcp://{bind_address(endpoint)}")
                return
            except self._zmq.ZMQError as e:
                if e.errno != errno.EADDRINUSE or time.monotonic() > deadline:
                    raise FleetgraphError(
                        f"ring {self.ring_id}, rank {self.rank}: cannot bind {endpoint}: {e}"
                    ) from None
                time.sleep(0.05)

    def _authenticate(self, prover) -> None:
        """Prove this rank to the next one (`prover`, the handshake of handshake.py) while the
        previous rank proves itself here: every rank does both at once, or the ring would wait on
        itself. Returns once both are done; anything else that arrives meanwhile is dropped (the
        hellos of `_handshake`, which are sent again)."""
        timeout = rpc_timeout()
        deadline = time.monotonic() + timeout
        if prover is not None:
            self._outbox.send_multipart(prover.hello())
        while (prover is not None and not prover.done) or (self._gate.mode == "challenge" and not self._gate.proved):
            left = deadline - time.monotonic()
            if left <= 0:
                waited = "the next rank's answer" if prover is not None and not prover.done else "the previous rank"
                raise CommTimeout(
                    f"ring {self.ring_id}, rank {self.rank}: authentication: nothing from {waited} after {timeout} s "
                    "(FLEETGRAPH_RPC_TIMEOUT)"
                )
            ready = dict(self._poll_both(left))
            if ready.get(self._outbox) and prover is not None:
                reply = self._answer_of(self._outbox.recv_multipart(), prover)
                if reply is not None:
                    self._outbox.send_multipart(reply)
            if ready.get(self._inbox):
                self._take(self._inbox.recv_multipart(copy=False))

    def _poll_both(self, timeout_s: float) -> list:
        poller = self._zmq.Poller()
        poller.register(self._inbox, self._zmq.POLLIN)
        poller.register(self._outbox, self._zmq.POLLIN)
        return poller.poll(timeout_s * 1000)

    def _answer_of(self, frames, prover):
        """The prover's next message after the next rank's answer `frames`."""
        try:
            msg = decode(frames)
        except WireError as e:
            raise AuthError(f"ring {self.ring_id}, rank {self.rank}: malformed answer from {self.next}: {e}") from None
        try:
            return prover.reply(msg)
        except AuthError:
            if prover.mismatch:
                self._outbox.send_multipart(prover.mismatch)
            raise

    def _take(self, frames):
        """The body of a message received on the inbox, or None when it is not the previous rank's:
        an authentication message (answered here), or one from a connection that did not prove
        the previous rank's role (answered with an error, logged at most once a minute)."""
        identity, body = frames[0], frames[1:]
        if not body:
            return None
        gate = self._gate
        if body[0].buffer[4:5] == _AUTH_KIND:  # the header's kind byte, read without copying the frame
            try:
                reply = gate.answer(body[0], decode(body))
            except WireError:
                reply = gate.refuse_unproved(body[0], "a malformed authentication message")
            if reply:
                self._inbox.send_multipart([identity, *reply])
            if gate.mismatched and not gate.proved:  # the previous rank will not go on: neither can this one
                raise AuthError(f"ring {self.ring_id}, rank {self.rank}: authentication failed: {gate.last_refusal}")
            if gate.mode == "open":
                raise AuthError(
                    f"ring {self.ring_id}, rank {self.rank}: authentication failed: {self.prev} has "
                    "FLEETGRAPH_JOB_SECRET and this rank has none; set the same secret in every role of the job"
                )
            return None
        if gate.mode == "challenge" and gate.role(body[0]) != self._prev_role:
            self._inbox.send_multipart([identity, *gate.refuse_unproved(body[0], "a ring message")])
            return None
        return body

    def _refused(self, frames) -> None:
        """Raise the error the next rank answered with (a ring's outbox receives nothing else)."""
        try:
            text = decode(frames).text
        except WireError as e:
            text = f"a malformed answer ({e})"
        while self._inbox.poll(1000):  # answer the previous rank's hello first, so that it hears why too
            self._take(self._inbox.recv_multipart(copy=False))
        raise AuthError(f"ring {self.ring_id}, rank {self.rank}: {self.next} refused this rank: {text}")

    def _handshake(self) -> None:
        """Return once every rank is up and this rank's messages reach the next one.

        The outbox queues what it sends until its connection is up, so a peer may start late.
        But a message can still be lost: the connection may first reach a socket that is closing
        on that port (a ring made again, a process exiting), which takes it and goes. So a rank
        sends hello s+1 once it received hello s or a later one (a lost hello is thus skipped),
        and sends its latest hello again each HELLO_RESEND_S that nothing arrives, until it has
        received hello n-1: the previous rank sends that only once this rank's hello has gone
        around the ring, so from then on what this rank sends arrives. Sequence 0 is the
        handshake's: receivers drop late copies."""
        n = self.nranks
        io = Io(self, 0, "hello", "c_comm_init", "", None)
        timeout = rpc_timeout()
        deadline = time.monotonic() + timeout
        level = sent = -1  # the latest hello received, and sent
        while True:
            if sent < min(level + 1, n - 1):
                sent = min(level + 1, n - 1)
                latest = encode(Kind.RING, f"hello:{sent}:0:0", sender=self.rank, seq=0)
                self._outbox.send_multipart(latest)
            if level == n - 1:
                return
            ready = dict(self._poll_both(HELLO_RESEND_S))
            if ready.get(self._outbox):  # only ever an error: the next rank refused this one
                self._refused(self._outbox.recv_multipart())
            if ready.get(self._inbox):
                body = self._take(self._inbox.recv_multipart(copy=False))
                if body is not None:
                    level = max(level, io.hello_level(body, n))
            elif time.monotonic() > deadline:
                raise CommTimeout(f"{io.where()}: nothing from {self.prev} after {timeout} s (FLEETGRAPH_RPC_TIMEOUT)")
            else:
                self._outbox.send_multipart(latest)

    # -- collectives ------------------------------------------------------------------------------

    def allreduce(self, array, name: str = "") -> np.ndarray:
        """The sum of `array` over all ranks: written into `array` when it is a writable C-contiguous
        NumPy array (and `array` returned), else into a new array."""
        self._wait_started()
        return self._allreduce_now(array, name)

    def allreduce_async(self, array, name: str = "") -> Future:
        """Start `allreduce(array, name)` on the ring's communication thread; the future's result
        is what allreduce returns. `array` must not be touched until the future is done."""
        idle = self._last is None or self._last.done()
        if self.nranks == 1 or self._broken is not None or (idle and _nbytes(array) < ASYNC_MIN_BYTES):
            # done (or failed) at once: nothing to overlap, or too little to pay for the thread's wake-up
            future: Future = Future()
            try:
                future.set_result(self._allreduce_now(array, name))
            except BaseException as e:
                future.set_exception(e)
            return future
        if self._thread is None:
            self._thread = ThreadPoolExecutor(1, thread_name_prefix=f"fleetgraph-ring{self.ring_id}-rank{self.rank}")
        self._last = self._thread.submit(self._allreduce_now, array, name)
        return self._last

    def _wait_started(self) -> None:
        """Wait for the operations started on the communication thread (their errors go to their
        own futures; a failed one leaves the ring broken, which the next operation reports)."""
        if self._last is not None:
            self._last.exception()  # bounded: every operation times out by itself (FLEETGRAPH_RPC_TIMEOUT)
            self._last = None

    def _allreduce_now(self, array, name: str) -> np.ndarray:
        result, flat = _target(array, "c_allreduce_sum", name)
        with self._operation("c_allreduce_sum", name, flat.nbytes) as where:
            if self._shared is not None:
                self._shared.allreduce(flat, self._next_seq(), "allreduce", where)
            elif self.nranks > 1 and flat.dtype == BFLOAT16:  # summed in float32, rounded once (docstring)
                wide = flat.astype(np.float32)
                self._allreduce(wide, "allreduce", "c_allreduce_sum", name)
                flat[...] = wide
            elif self.nranks > 1:
                self._allreduce(flat, "allreduce", "c_allreduce_sum", name)
        return result

    def broadcast(self, array, root: int = 0, name: str = "") -> np.ndarray:
        """Rank `root`'s `array` on every rank (written into `array` where it can be), pipelined
        piece by piece along the ring from the root."""
        if isinstance(root, bool) or not isinstance(root, int) or not 0 <= root < self.nranks:
            raise FleetgraphError(f"c_broadcast {name!r}: root; expected an int in [0, {self.nranks}), got {root!r}")
        self._wait_started()
        result, flat = _target(array, "c_broadcast", name, writable=self.rank != root)
        with self._operation("c_broadcast", name, flat.nbytes) as where:
            if self._shared is not None:
                self._shared.broadcast(flat, root, self._next_seq(), where)
            elif self.nranks > 1:
                self._broadcast(flat, root, name)
        return result

    def barrier(self) -> None:
        """Return once every rank of the ring has called barrier()."""
        self._wait_started()
        with self._operation("barrier", "") as where:
            if self._shared is not None:
                self._shared.barrier(self._next_seq(), where)
            elif self.nranks > 1:
                self._allreduce(np.zeros(1, np.int8), "barrier", "barrier", "")

    @contextlib.contextmanager
    def _operation(self, what: str, name: str, nbytes: int = 0):
        """Run one collective operation, the text naming it at hand (and a profiler's event). An
        operation that failed leaves the ranks out of step (and arrays half summed), so every later
        one fails at once, saying why, rather than with errors about mismatched messages."""
        where = self._where(what, name)
        if self._broken is not None:
            raise RingError(
                f"{where}: the ring is unusable after an earlier error: {self._broken}; hint: make the ring again "
                "(run the startup program) on every rank"
            )
        try:
            with trace.span(f"{what} {name}".strip(), what, bytes=nbytes, transport=self.transport):
                yield where
        except BaseException as e:
            first_line = (str(e).splitlines() or [""])[0]
            self._broken = f"{type(e).__name__}: {first_line}" if first_line else type(e).__name__
            raise

    def serves(self, nranks: int, rank: int, endpoints: list[str]) -> bool:
        """Whether this ring, unbroken, is the one `nranks`, `rank` and `endpoints` ask for."""
        members = (nranks, rank, [_address(e) for e in endpoints])
        return self._broken is None and (self.nranks, self.rank, self.endpoints) == members

    def close(self, linger_ms: int | None = None) -> None:
        """Close the sockets, letting queued messages drain to a live peer for at most LINGER_MS
        (and the timeout); none at all once the ring is broken: nobody will read them."""
        if self._thread is not None:  # an operation still on it ends (or times out) before the sockets go
            if self._shared is not None and self._last is not None and not self._last.done():
                self._shared.gate.close()  # wakes it at once where it waits in shared memory
            self._thread.shutdown(wait=True, cancel_futures=True)
            self._thread = self._last = None
        if linger_ms is None:
            linger_ms = 0 if self._broken is not None else min(LINGER_MS, int(rpc_timeout() * 1000))
        if self._shared is not None:
            self._shared.close()
            self._shared = None
        for sock in (self._outbox, self._inbox):
            if sock is not None and not sock.closed:
                sock.close(linger=linger_ms)

    def __repr__(self) -> str:
        return f"Ring(ring_id={self.ring_id}, rank={self.rank} of {self.nranks}, {self.endpoints[self.rank]})"

    # -- the protocols ----------------------------------------------------------------------------

    def _allreduce(self, flat: np.ndarray, op: str, what: str, name: str) -> None:
        n, r = self.nranks, self.rank
        steps = 2 * (n - 1)
        io = Io(self, self._next_seq(), op, what, name, flat.dtype)
        ranges = pieces(flat.size, n, flat.itemsize)
        count = len(ranges[0])
        window = min(WINDOW, count)
        for p in range(window):  # step 1
            a, b = ranges[r][p]
            io.send(0, r, p, flat[a:b])
        trackers = []
        for step, p in schedule(steps, count, window):  # step 2
            c = (r - step - 1) % n if step < n - 1 else (r - step + n - 1) % n
            a, b = ranges[c][p]
            got = io.recv(step, c, p, b - a)
            part = flat[a:b]
            if step < n - 1:  # reduce-scatter: add, and send the sum on
                np.add(part, got, out=part)
                if step < n - 2:
                    io.send(step + 1, c, p, part)
                else:  # the caller may overwrite `flat` once we return: wait for ZeroMQ to let go of it
                    trackers.append(io.send(step + 1, c, p, part, track=True))
            else:  # all-gather: keep, and forward the received buffer itself
                part[...] = got
                if step + 1 < steps:
                    io.send(step + 1, c, p, got)
            if step == 0 and p + window < count:
                a, b = ranges[r][p + window]
                io.send(0, r, p + window, flat[a:b])
        io.wait_sent(trackers)  # step 3

    def _broadcast(self, flat: np.ndarray, root: int, name: str) -> None:
        """The root sends its pieces to the next rank; every other rank keeps each piece it
        receives and forwards the received buffer, unless the next rank is the root."""
        n = self.nranks
        io = Io(self, self._next_seq(), "broadcast", "c_broadcast", name, flat.dtype)
        pieces = split(0, flat.size, pieces_of(flat.size, flat.itemsize))
        hop = (self.rank - root) % n
        if hop == 0:
            io.wait_sent([io.send(0, root, p, flat[a:b], track=True) for p, (a, b) in enumerate(pieces)])
            return
        for p, (a, b) in enumerate(pieces):
            got = io.recv(hop - 1, root, p, b - a)
            flat[a:b] = got
            if hop < n - 1:
                io.send(hop, root, p, got)

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def _where(self, what: str, name: str) -> str:
        name = f" {name!r}" if name else ""
        return f"{what}{name} on ring {self.ring_id}, rank {self.rank}"


def _target(array, what: str, name: str, writable: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(result, its flat view): the array itself when it can be used in place (written, unless
    `writable` is false), else a contiguous copy."""
    if isinstance(array, np.ndarray) and array.flags.c_contiguous and (array.flags.writeable or not writable):
        result = array
    else:
        result = np.array(array, order="C")
    if result.dtype.name not in DTYPES[1:]:
        label = f"{what} {name!r}" if name else what
        raise FleetgraphError(f"{label}: dtype {result.dtype.name} cannot be sent; expected one of {DTYPES[1:]}")
    return result, result.reshape(-1)


def _nbytes(array) -> int:
    return int(getattr(array, "nbytes", 0))


def _address(endpoint: str) -> str:
    endpoint = str(endpoint)
    return endpoint[len("tcp://") :] if endpoint.startswith("tcp://") else endpoint


def _checked(nranks, rank, endpoints, ring_id) -> tuple[int, int, int]:
    if isinstance(nranks, bool) or not isinstance(nranks, int) or nranks < 1:
        raise FleetgraphError(f"Ring: nranks; expected an int >= 1, got {nranks!r}")
    if isinstance(rank, bool) or not isinstance(rank, int) or not 0 <= rank < nranks:
        raise FleetgraphError(f"Ring: rank; expected an int in [0, {nranks}), got {rank!r}")
    if len(endpoints) != nranks:
        raise FleetgraphError(f"Ring: endpoints; expected one 'ip:port' per rank ({nranks}), got {list(endpoints)}")
    if isinstance(ring_id, bool) or not isinstance(ring_id, int) or ring_id < 0:
        raise FleetgraphError(f"Ring: ring_id; expected an int >= 0, got {ring_id!r}")
    return nranks, rank, ring_id
