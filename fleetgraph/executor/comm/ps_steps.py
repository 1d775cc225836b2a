"""A pserver's barriers and sync steps: who waits for whom, and when a step is prepared, committed or discarded.

`ps_server.PServer` runs these; the rules they follow are in ps_server.py's docstring.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from ...ops.selected_rows import SelectedRows, merge_dense
from .ps_checks import Refused, check_value
from .wire import Kind, Message, WireError, encode, pack_arrays, unpack_arrays

log = logging.getLogger("fleetgraph.comm")
SYNC = 0
EXPIRE_BARRIER = 0.8  # of the timeout: waiting trainers hear who is missing before their own timeout

BARRIERS = {
    Kind.SEND_BARRIER: "send barrier",
    Kind.FETCH_BARRIER: "first fetch barrier (every trainer's start)",
    Kind.WORKER_BARRIER: "worker barrier (fleet.barrier_worker)",
    Kind.WORKER_EXCHANGE: "worker exchange (fleet.util, a global shuffle)",
}


class Steps:
    """The barrier and sync-step handlers of `ps_server.PServer`, which holds their state (`waiting`,
    `wait_since`, `live`, `started`, `received`, `prepared`, `steps`, ...) and supplies `_reply`."""

    def _on_barrier(self, identity: bytes, msg: Message) -> None:
        later_fetch = msg.kind == Kind.FETCH_BARRIER and msg.sender in self.started
        if later_fetch or (self.mode != SYNC and msg.kind == Kind.SEND_BARRIER):  # nothing to wait for
            self._reply(identity, encode(Kind.ACK, seq=msg.seq))
            return
        if msg.kind == Kind.SEND_BARRIER:
            missing = sorted(set(self._sent_by(msg.sender)) - self.received)
            if missing:
                raise Refused(f"send barrier of trainer {msg.sender} before its gradients {missing} of this step")
        self._wait(msg.kind, msg.sender, (identity, msg.seq, None))

    def _wait(self, kind: Kind, sender: int, entry: tuple) -> None:
        self.wait_since.setdefault(kind, time.monotonic())
        self.waiting[kind][sender] = entry
        self._release_barriers()

    def _sent_by(self, trainer: int) -> list[str]:
        """The gradient (copies) a trainer sends here each sync step."""
        if self.fanin == 1:
            return list(self.block_of)
        return [f"{merged}.trainer_{trainer}" for merged in self.block_of]

    def _on_exchange(self, identity: bytes, msg: Message) -> None:
        """A trainer's arrays for each trainer id; answered, once every live trainer sent its own, with
        what each sender addressed to it (a worker barrier that carries data)."""
        try:
            parts = unpack_arrays(msg.value) if isinstance(msg.value, np.ndarray) else None
        except WireError as e:
            raise Refused(f"exchange: {e}") from None
        if parts is None or len(parts) != self.fanin:
            raise Refused(f"exchange: expected one packed payload for each of the {self.fanin} trainers")
        self._wait(Kind.WORKER_EXCHANGE, msg.sender, (identity, msg.seq, parts))

    def _on_complete(self, identity: bytes, msg: Message) -> None:
        self.live.discard(msg.sender)
        for waiting in self.waiting.values():
            waiting.pop(msg.sender, None)
        log.info("pserver %s: trainer %d is done; %d still training", self.endpoint, msg.sender, len(self.live))
        self._reply(identity, encode(Kind.ACK, seq=msg.seq))
        self._release_barriers()

    def _release_barriers(self) -> None:
        """Answer a barrier once every live trainer waits at it; the send barrier first optimizes."""
        for kind in BARRIERS:
            waiting = self.waiting[kind]
            arrived = set(waiting) | (self.started if kind == Kind.FETCH_BARRIER else set())
            if not waiting or not arrived >= self.live:
                continue
            if kind == Kind.FETCH_BARRIER:
                self.started |= set(waiting)
            squares = None
            if kind == Kind.SEND_BARRIER:
                squares = self._prepare()
                self.prepared = True  # applied when a message commits it, discarded at any other: _settle
            senders = sorted(waiting)
            for receiver, (identity, seq, _) in waiting.items():
                if kind == Kind.WORKER_EXCHANGE:
                    got = [np.asarray(senders, dtype=np.int64)] + [waiting[s][2][receiver] for s in senders]
                    self._reply(identity, encode(Kind.VAR, value=pack_arrays(got), seq=seq))
                elif squares is not None:
                    self._reply(identity, encode(Kind.VAR, self.clip_squares, squares, seq=seq))
                else:
                    self._reply(identity, encode(Kind.ACK, seq=seq))
            waiting.clear()
            self.wait_since.pop(kind, None)

    def _missing(self, kind: Kind) -> list[int]:
        arrived = set(self.waiting[kind]) | (self.started if kind == Kind.FETCH_BARRIER else set())
        return sorted(self.live - arrived)

    def _expire_barriers(self) -> None:
        """Trainers kept waiting at a barrier most of the timeout are answered with an error naming
        the trainers that did not come, before their own timeout tells them less."""
        now = time.monotonic()
        for kind, since in list(self.wait_since.items()):
            if not self.waiting[kind]:  # its waiters finished training meanwhile
                del self.wait_since[kind]
                continue
            if now - since < EXPIRE_BARRIER * self.timeout:
                continue
            why = (
                f"at the {BARRIERS[kind]} of {self.endpoint}, trainer(s) {self._missing(kind)} did not arrive "
                f"within {now - since:.1f} s (FLEETGRAPH_RPC_TIMEOUT={self.timeout:g}): they died or are stuck"
            )
            log.error("pserver %s: %s", self.endpoint, why)
            self.expired = (
                f"; trainers {sorted(self.waiting[kind])} waited at the {BARRIERS[kind]} "
                f"for trainer(s) {self._missing(kind)} (told so after {now - since:.1f} s)"
            )
            for identity, seq, _ in self.waiting[kind].values():
                self._reply(identity, encode(Kind.ERROR, seq=seq, text=why))
            self.waiting[kind].clear()
            del self.wait_since[kind]
            # the trainers told get a whole timeout to act on it (save a checkpoint, say they are done)
            self.last_message = now

    def _step_schedule(self, sync: bool = False) -> None:
        """The learning-rate schedule's block, once per optimization round: a sync step, or (async,
        half-async) each trainer's batch of gradients, which the pserver applies one by one."""
        if self.lr_block is not None and (sync or self.mode != SYNC):
            self.ctx.run_block(self.lr_block)

    def _prepare(self) -> np.ndarray | None:
        """Every live trainer's gradients of the step are in: a trainer that is done counts as the
        live trainers' mean; with a norm clip, the clip block averages the clipped gradients and
        returns their sums of squares (the send barrier's answer)."""
        if self.fanin > 1:
            for merged in self.block_of:
                copies = [f"{merged}.trainer_{t}" for t in range(self.fanin)]
                live = [self.env[c] for t, c in enumerate(copies) if t in self.live]
                for t, c in enumerate(copies):
                    if t not in self.live:
                        self.env[c] = _mean(live)
        if self.clip_block is None:
            return None
        self.ctx.run_block(self.clip_block)
        return np.asarray(self.env[self.clip_squares])

    def _settle(self, msg: Message, batch: list[Message] | None) -> None:
        """Sync: apply the prepared step at a message that commits it (`msg.commit`, the step's
        number), which a trainer sends only once every pserver answered its send barrier, and a
        pserver answers only with every live trainer's gradients in: so every pserver can apply it.
        Committing a step applied already (another trainer's commit came first) changes nothing.
        Any other message from a live trainer while a step is prepared comes from a trainer that
        some pserver did not answer (another trainer died between its barriers to two pservers, and
        this one now closes, saves a checkpoint or tries again): no trainer can commit the step on
        every pserver any more, so it is discarded, and every pserver stays on the step before."""
        if self.mode != SYNC:
            return
        if msg.commit > self.steps:
            if not (self.prepared and msg.commit == self.steps + 1):
                now = f"step {self.steps + 1} prepared" if self.prepared else self.discarded or "no step prepared"
                raise Refused(f"commit of step {msg.commit}: expected step {self.steps + 1} prepared, got {now}")
            self._commit(msg.sender, batch or [msg])
        elif self.prepared:
            self.prepared = False
            self.received.clear()
            self.discarded = f"step {self.steps + 1} discarded at {msg.describe()}, which did not commit it"
            log.warning("pserver %s: %s (its sender did not hear every pserver answer)", self.endpoint, self.discarded)

    def _commit(self, sender: int, messages: list[Message]) -> None:
        """Apply the prepared sync step; with a norm clip, the clip scale comes in the batch that
        commits it (every trainer puts it together alike from all the pservers' answers)."""
        if self.clip_scale is not None:
            name = self.clip_scale if self.fanin == 1 else f"{self.clip_scale}.trainer_{sender}"
            scale = [m for m in messages if m.kind == Kind.SEND and m.name == name]
            if not scale:
                raise Refused(f"committing step {self.steps + 1} waits for {name!r}; expected it in the same batch")
            check_value(self.vars[name], scale[0])
            self.env[self.clip_scale] = scale[0].value
        self.prepared = False
        self._optimize_sync()

    def _optimize_sync(self) -> None:
        self._step_schedule(sync=True)
        for block in self.block_of.values():
            self.ctx.run_block(block)
        self.received.clear()
        self.steps += 1


def _mean(values: list):
    total = merge_dense(np, values)
    if isinstance(total, SelectedRows):
        return SelectedRows(total.rows, total.value / len(values), total.height)
    return total / total.dtype.type(len(values))
