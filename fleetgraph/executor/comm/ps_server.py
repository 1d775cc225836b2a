"""The pserver loop behind `listen_and_serv`: receive gradient blocks, run their optimize blocks,
answer parameter fetches, and return once every trainer has said it is done.

Sync mode: gradients wait until every live trainer has reached the send barrier; then the step is
prepared (with a norm clip, the clip block averages the gradients and sums their squares, which the
barrier's answer carries) and the barrier answered, and every optimize block runs once at a message
that commits the step (its header names the step: wire.py's FLAG_COMMIT), as a trainer's next
message to each pserver does once every pserver answered its barrier (with a norm clip, that message
brings the clip scale the trainer put together from their answers); any other message comes from a
trainer that some pserver did not answer, and discards the step: so the pservers of a job apply a
step all or none, whenever a trainer dies and whatever the trainers still alive send then (see
`ps_steps.Steps._settle`). A trainer's first fetch barrier (its startup program ends with one) waits until every
live trainer has its first parameters, in every mode, so that no trainer trains alone before the
others start; later fetch barriers are answered at once: the parameters change only when every
trainer reached the next send barrier, and each trainer's gradient is kept apart, so a trainer
running ahead cannot change what a slower one fetches.
A trainer that said it is done no longer counts at the barriers: its gradient copy is replaced by
the mean of the live trainers' copies, so the block's sum and 1/trainers scale average over the
trainers still training. Async, half-async and GEO: a received variable's optimize block runs on
arrival. In every mode the first pserver also answers `fleet.barrier_worker`: once every live trainer
waits at it. Every message is checked against the program before it is used; a bad one is answered
with an error and logged, and the server goes on serving.
"""

from __future__ import annotations

import logging
import math
import time

import numpy as np

from ...ir import FleetgraphError
from ...ops.sparse_table import SparseTable
from .config import CommTimeout, bind_address, max_message_bytes, rpc_timeout
from .handshake import Gate
from .ps_checks import Refused, check_value, is_batch
from .ps_steps import BARRIERS, SYNC, Steps
from .security import secure_server
from .wire import DTYPES, Kind, Message, WireError, decode, decode_batch, encode, pack_arrays

log = logging.getLogger("fleetgraph.comm")


class PServer(Steps):
    """The serve loop and the message handlers; the barriers and sync steps are `ps_steps.Steps`,
    the checks of a message's value ps_checks.py."""

    def __init__(
        self,
        context,
        *,
        ctx,
        endpoint: str,
        fanin: int,
        mode: int,
        optimize_blocks: list[int],
        grad_to_block_id: list[str],
        lr_decay_block_id: int = -1,
        clip_block_id: int = -1,
        clip_vars: list[str] = (),
    ) -> None:
        self.context, self.ctx, self.endpoint = context, ctx, endpoint
        self.fanin, self.mode = int(fanin), int(mode)
        self.block_of = {}
        for entry in grad_to_block_id:
            name, _, idx = entry.rpartition(":")
            self.block_of[name] = int(idx)
        self.lr_block = lr_decay_block_id if lr_decay_block_id >= 0 else None
        self.clip_block = clip_block_id if clip_block_id >= 0 else None
        self.clip_squares, self.clip_scale = clip_vars if self.clip_block is not None else (None, None)
        self.vars = ctx.program.global_block().vars
        self.env = ctx.env
        self.live = set(range(self.fanin))
        self.started: set[int] = set()  # trainers past their first fetch barrier
        self.last_message = time.monotonic()
        self.waiting: dict[Kind, dict[int, tuple]] = {kind: {} for kind in BARRIERS}  # sender -> (identity, seq, value)
        self.timeout = rpc_timeout()
        self.steps = 0
        self.received: set[str] = set()  # sync: the gradient copies received for the coming step
        self.gate = Gate("open")  # which connection proved which trainer (with a job secret)
        self.prepared = False  # sync: every live trainer's barrier is in, the step not yet applied
        self.discarded = ""  # sync: the last prepared step that nothing committed, and what came instead
        self.wait_since: dict[Kind, float] = {}  # when the first trainer came to wait at a barrier
        self.expired = ""  # who waited for whom at the last barrier that timed out

    # -- the loop --------------------------------------------------------------------------------
    def serve(self) -> int:
        import zmq

        sock = self.context.socket(zmq.ROUTER)
        sock.setsockopt(zmq.LINGER, 1000)
        # What one peer can make the server hold: frames no bigger than the program's largest
        # variable (a bigger one disconnects the peer before it is read), a bounded queue of its
        # messages, and of answers it does not read (dropped past the mark)
        sock.setsockopt(zmq.MAXMSGSIZE, max_message_bytes(self._largest_var_bytes()))
        sock.setsockopt(zmq.SNDHWM, PEER_QUEUE)
        sock.setsockopt(zmq.RCVHWM, PEER_QUEUE)
        self.sock = sock
        try:
            trainers = [f"trainer:{t}" for t in range(self.fanin)]
            self.gate = secure_server(self.context, sock, self.endpoint, "pserver", trainers, "listen_and_serv")
            try:
                sock.bind(f"tcp://{bind_address(self.endpoint)}")
            except zmq.ZMQError as e:
                raise BindError(f"listen_and_serv {self.endpoint}: cannot listen there: {e.strerror}") from None
            log.info("pserver %s: serving %d trainers", self.endpoint, self.fanin)
            while self.live:
                if sock.poll(200, zmq.POLLIN):
                    self._handle(sock.recv_multipart(copy=False))
                self._expire_barriers()
                self._check_silence()
        finally:
            sock.close()
        self._write_back()
        log.info("pserver %s: every trainer is done after %d steps", self.endpoint, self.steps)
        return self.steps

    def _largest_var_bytes(self) -> int:
        sizes = [0]
        for var in self.vars.values():
            if var.shape and all(d >= 0 for d in var.shape) and var.dtype in DTYPES:
                sizes.append(math.prod(var.shape) * np.dtype(var.dtype).itemsize)
        return max(sizes)

    def _handle(self, frames) -> None:
        identity, body = frames[0].bytes, frames[1:]
        proved = self.gate.role(body[0])
        try:
            msg = decode(body[:2]) if is_batch(body) else decode(body)
            batch = decode_batch(msg, body[2:]) if msg.kind == Kind.SEND_BATCH else None
        except WireError as e:
            if self.gate.secure and proved is None:  # not logged one by one: anyone can send these
                self._reply(identity, self.gate.refuse_unproved(body[0], f"a malformed message ({e})"))
                return
            log.error("pserver %s: dropped a malformed message: %s", self.endpoint, e)
            self._reply(identity, encode(Kind.ERROR, text=f"malformed message: {e}"))
            return
        if msg.kind == Kind.AUTH:
            reply = self.gate.answer(body[0], msg)
            if reply:
                self._reply(identity, reply)
            return
        if self.gate.secure and proved != f"trainer:{msg.sender}":
            if proved is None:
                self._reply(identity, self.gate.refuse_unproved(body[0], msg.describe()))
            else:
                self._refuse(identity, msg, f"sender {msg.sender} on a connection that authenticated as {proved}")
            return
        if msg.sender not in self.live:
            self._refuse(identity, msg, f"sender {msg.sender} is not a training trainer (live: {sorted(self.live)})")
            return
        self.last_message = time.monotonic()
        try:
            self._settle(msg, batch)
        except Refused as e:
            self._refuse(identity, msg, str(e))
            return
        if batch is not None:
            try:
                self._on_batch(identity, msg, batch)
            except Refused as e:
                self._refuse(identity, msg, str(e))
            return
        handler = {
            Kind.SEND: self._on_send,
            Kind.GET: self._on_get,
            Kind.GET_BATCH: self._on_get_batch,
            Kind.SEND_BARRIER: self._on_barrier,
            Kind.FETCH_BARRIER: self._on_barrier,
            Kind.WORKER_BARRIER: self._on_barrier,
            Kind.WORKER_EXCHANGE: self._on_exchange,
            Kind.COMPLETE: self._on_complete,
            Kind.PREFETCH: self._on_prefetch,
            Kind.STATE: self._on_state,
        }.get(msg.kind)
        if handler is None:
            self._refuse(identity, msg, f"a pserver does not take {msg.kind.name} messages")
            return
        try:
            handler(identity, msg)
        except Refused as e:
            self._refuse(identity, msg, str(e))
        except Exception as e:  # no message may stop the server: the sender gets the error, the log the trace
            log.exception("pserver %s: %s failed", self.endpoint, msg.describe())
            self._refuse(identity, msg, f"{type(e).__name__}: {e}")

    # -- messages --------------------------------------------------------------------------------
    def _on_send(self, identity: bytes, msg: Message) -> None:
        self._step_schedule()
        self._receive(msg)
        self._reply(identity, encode(Kind.ACK, msg.name, seq=msg.seq))

    def _on_batch(self, identity: bytes, batch: Message, messages: list[Message]) -> None:
        """A trainer's sends to this pserver in one message: each is received as a SEND would be;
        one answer, an error naming every send refused. A SEND_BARRIER may end the batch: once the
        sends are in, the batch waits at the barrier and its answer is the barrier's."""
        self._step_schedule()
        refused = []
        barrier = messages[-1] if messages and messages[-1].kind == Kind.SEND_BARRIER else None
        for msg in messages[:-1] if barrier else messages:
            try:
                if msg.kind != Kind.SEND or msg.sender != batch.sender:
                    raise Refused(
                        f"a SEND_BATCH holds SENDs of its sender, then maybe its barrier; got {msg.describe()}"
                    )
                self._receive(msg)
            except Refused as e:
                log.error("pserver %s: refused %s: %s", self.endpoint, msg.describe(), e)
                refused.append(f"{msg.name!r}: {e}")
        if refused:
            self._reply(identity, encode(Kind.ERROR, seq=batch.seq, text="; ".join(refused)))
        elif barrier is not None:
            if barrier.sender != batch.sender:
                raise Refused(
                    f"a SEND_BATCH holds SENDs of its sender, then maybe its barrier; got {barrier.describe()}"
                )
            self._on_barrier(identity, Message(Kind.SEND_BARRIER, sender=batch.sender, seq=batch.seq))
        else:
            self._reply(identity, encode(Kind.ACK, seq=batch.seq))

    def _receive(self, msg: Message) -> None:
        var = self.vars.get(msg.name)
        if var is None or var.persistable:
            raise Refused(f"{msg.name!r} is not a variable this pserver receives")
        if self.mode == SYNC and self.fanin > 1 and not msg.name.endswith(f".trainer_{msg.sender}"):
            raise Refused(f"trainer {msg.sender} may only send its own copies ('*.trainer_{msg.sender}')")
        check_value(var, msg)
        self.env[msg.name] = msg.value
        self.received.add(msg.name)
        if self.mode != SYNC:
            self.ctx.run_block(self._block_for(msg.name))
            self.steps += 1

    def _on_get(self, identity: bytes, msg: Message) -> None:
        value = self._held(msg.name)
        if isinstance(value, SparseTable):
            raise Refused(f"{msg.name!r} is a sparse table; a trainer asks for its rows (PREFETCH), not all of it")
        self._reply(identity, encode(Kind.VAR, msg.name, value, seq=msg.seq))

    def _on_get_batch(self, identity: bytes, msg: Message) -> None:
        values = []
        for name in msg.name.split("\n"):
            value = self._held(name)
            if isinstance(value, SparseTable):
                raise Refused(f"{name!r} is a sparse table; a trainer asks for its rows (PREFETCH), not all of it")
            values.append(value)
        self._reply(identity, encode(Kind.VAR, value=pack_arrays(values), seq=msg.seq))

    def _on_prefetch(self, identity: bytes, msg: Message) -> None:
        """Rows of a table this pserver holds, by the block's own row ids; a sparse table creates the
        rows no id touched before."""
        table = self._held(msg.name)
        ids = msg.value
        if not isinstance(ids, np.ndarray) or ids.dtype != np.int64 or ids.ndim != 1:
            raise Refused(f"prefetch {msg.name!r}: expected a 1-D int64 array of row ids, got {msg.describe()}")
        height = table.shape[0]
        if ids.size and (int(ids.min()) < 0 or int(ids.max()) >= height):
            raise Refused(
                f"prefetch {msg.name!r}: row ids from {int(ids.min())} to {int(ids.max())}; expected [0, {height})"
            )
        rows = table.lookup(ids) if isinstance(table, SparseTable) else table[ids]
        self._reply(identity, encode(Kind.VAR, msg.name, rows, seq=msg.seq))

    def _on_state(self, identity: bytes, msg: Message) -> None:
        """Every persistable this pserver holds, at a step boundary (a prepared sync step was committed
        or discarded on this message's arrival): a table as its rows' global ids (`name@IDS`) and
        rows (`name@ROWS`); `@STEPS@` the steps it applied."""
        names, values = ["@STEPS@"], [np.array([self.steps], dtype=np.int64)]
        for name, var in sorted(self.vars.items()):
            value = self.env.get(name) if var.persistable else None
            if isinstance(value, SparseTable):
                ids, rows = value.items()
                names += [f"{name}@IDS", f"{name}@ROWS"]
                values += [ids + value.offset, rows]
            elif isinstance(value, np.ndarray):
                names.append(name)
                values.append(value)
        self._reply(identity, encode(Kind.VAR, "\n".join(names), pack_arrays(values), seq=msg.seq))

    def _held(self, name: str):
        var = self.vars.get(name)
        if var is None or not var.persistable or self.env.get(name) is None:
            raise Refused(f"{name!r} is not a parameter this pserver holds")
        return self.env[name]

    # -- helpers ---------------------------------------------------------------------------------
    def _block_for(self, name: str) -> int:
        if name not in self.block_of:
            raise Refused(f"no optimize block takes {name!r}")
        return self.block_of[name]

    def _reply(self, identity: bytes, frames: list) -> None:
        self.sock.send_multipart([identity, *frames], copy=False)

    def _refuse(self, identity: bytes, msg: Message, why: str) -> None:
        log.error("pserver %s: refused %s: %s", self.endpoint, msg.describe(), why)
        self._reply(identity, encode(Kind.ERROR, msg.name, seq=msg.seq, text=why))

    def _check_silence(self) -> None:
        """Nothing at all from any trainer for the timeout (or since the trainers waiting at a
        barrier were told it expired): a trainer died (the others may be blocked waiting for it) or
        never started."""
        waited = time.monotonic() - self.last_message
        if waited <= self.timeout:
            return
        detail = self.expired
        for kind, name in BARRIERS.items():
            if self.waiting[kind]:
                detail = (
                    f"; trainers {sorted(self.waiting[kind])} wait at the {name} for trainer(s) {self._missing(kind)}"
                )
        if self.gate.last_refusal:
            detail += f"; the last connection refused: {self.gate.last_refusal}"
        raise CommTimeout(
            f"listen_and_serv {self.endpoint}: no message from trainers {sorted(self.live)} for "
            f"{waited:.1f} s{detail} (FLEETGRAPH_RPC_TIMEOUT={self.timeout:g}); stopped after {self.steps} "
            "optimization steps"
            + (", the next one prepared but not applied" if self.prepared else "")
            + (f" ({self.discarded})" if self.discarded else "")
        )

    def _write_back(self) -> None:
        """Parameters live on in the scope after serving (for saving them)."""
        for name, var in self.vars.items():
            if var.persistable and self.env.get(name) is not None:
                self.ctx.scope.vars[name] = self.env[name]


PEER_QUEUE = 128  # messages queued per peer each way; a trainer has at most 64 (MAX_IN_FLIGHT) unanswered


class BindError(FleetgraphError):
    """A pserver cannot listen at its endpoint (the port is taken, the address is not this host's)."""
