"""The sends and checked receives of one operation on a TCP ring (`ring.Ring`)."""

from __future__ import annotations

import time
from typing import Any, Protocol

import numpy as np

from .collective import RingError
from .config import CommTimeout, rpc_timeout
from .wire import Kind, Message, WireError, decode, encode


class RingLink(Protocol):
    """What an operation's messages need of the ring that carries them (`ring.Ring` is one): the
    ring's position, its two sockets and the module they come from, its frame filter and its naming
    of a place in the program. Declared here so that this module needs nothing above it."""

    rank: int
    nranks: int
    next: str
    prev: str
    _zmq: Any
    _outbox: Any
    _inbox: Any

    def _take(self, frames: list) -> list | None: ...

    def _where(self, what: str, name: str) -> str: ...


class Io:
    """Sends and checked receives of one collective operation on a ring."""

    __slots__ = ("ring", "seq", "op", "what", "name", "dtype", "sender")

    def __init__(self, ring: RingLink, seq: int, op: str, what: str, name: str, dtype) -> None:
        self.ring, self.seq, self.op, self.what, self.name, self.dtype = ring, seq, op, what, name, dtype
        self.sender = (ring.rank - 1) % ring.nranks

    def send(self, step: int, chunk: int, piece: int, part: np.ndarray, track: bool = False):
        header, payload = encode(
            Kind.RING, f"{self.op}:{step}:{chunk}:{piece}", part, sender=self.ring.rank, seq=self.seq
        )
        outbox = self.ring._outbox
        try:
            outbox.send(header, self.ring._zmq.SNDMORE)
            return outbox.send(payload, copy=False, track=track)
        except self.ring._zmq.Again:
            raise CommTimeout(
                f"{self.where()}: cannot queue a message for {self.ring.next} after {rpc_timeout()} s "
                "(FLEETGRAPH_RPC_TIMEOUT)"
            ) from None

    def recv(self, step: int, chunk: int, piece: int, count: int) -> np.ndarray:
        """The checked payload of the next message, which must be (step, chunk, piece) of this
        operation and hold `count` values of this operation's dtype."""
        ring, zmq = self.ring, self.ring._zmq
        while True:
            try:
                frames = ring._inbox.recv_multipart(zmq.NOBLOCK, copy=False)
            except zmq.Again:
                timeout = rpc_timeout()
                if not ring._inbox.poll(timeout * 1000, zmq.POLLIN):
                    raise CommTimeout(
                        f"{self.where()}: nothing from {ring.prev} after {timeout} s (FLEETGRAPH_RPC_TIMEOUT)"
                    ) from None
                frames = ring._inbox.recv_multipart(copy=False)
            frames = ring._take(frames)
            if frames is None:
                continue
            message = self.decode(frames)
            if message.seq != 0 or message.kind != Kind.RING:
                break  # else a late copy of a handshake hello
        self.check(message, step, chunk, piece)
        value = message.value
        if not isinstance(value, np.ndarray) or value.dtype != self.dtype or value.size != count:
            raise RingError(
                f"{self.where()}: {describe(self.seq, message.name)} from {ring.prev}: expected {count} "
                f"{self.dtype} values, got {message.describe()}; hint: the ranks disagree on the array's shape "
                "or dtype"
            )
        return value.reshape(-1)

    def decode(self, frames) -> Message:
        try:
            return decode(frames)
        except WireError as e:
            raise RingError(f"{self.where()}: malformed message from {self.ring.prev}: {e}") from None

    def hello_level(self, frames, nranks: int) -> int:
        message = self.decode(frames)
        step = message.name.split(":")[1] if message.name.count(":") == 3 else ""
        if not step.isdigit() or int(step) >= nranks:
            step = "0"  # not a hello: check() names what came instead
        self.check(message, int(step), 0, 0)
        return int(step)

    def check(self, message: Message, step: int, chunk: int, piece: int) -> None:
        tag = f"{self.op}:{step}:{chunk}:{piece}"
        if message.kind != Kind.RING or message.seq != self.seq or message.name != tag or message.sender != self.sender:
            raise RingError(
                f"{self.where()}: from {self.ring.prev} expected {describe(self.seq, tag)} from rank {self.sender}, "
                f"got {message.kind.name} {describe(message.seq, message.name)} from rank {message.sender}; "
                "hint: every rank must run the same collective operations in the same order"
            )

    def wait_sent(self, trackers) -> None:
        timeout = rpc_timeout()
        deadline = time.monotonic() + timeout
        for tracker in trackers:
            if tracker is None or tracker.done:
                continue
            try:
                tracker.wait(max(0.0, deadline - time.monotonic()))
            except self.ring._zmq.NotDone:
                raise CommTimeout(
                    f"{self.where()}: {self.ring.next} did not take the data after {timeout} s (FLEETGRAPH_RPC_TIMEOUT)"
                ) from None

    def where(self) -> str:
        return self.ring._where(self.what, self.name)


def describe(seq: int, tag: str) -> str:
    parts = tag.split(":")
    if len(parts) != 4:
        return f"operation {seq} message {tag!r}"
    op, step, chunk, piece = parts
    return f"{op} #{seq} step {step} chunk {chunk} piece {piece}"
