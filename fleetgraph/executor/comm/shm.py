"""Collectives between ranks that share a host, through shared memory.

Over TCP every byte of an all-reduce is copied by the kernel twice (into the sender's socket
buffer, out of the receiver's) and once more by ZeroMQ; on a host with few cores those copies are
most of the time. So when every rank of a ring runs on this host, the ranks exchange the bytes
through one segment per rank in /dev/shm, mapped by every rank, and wait for each other at a
`_Gate`: POSIX process-shared semaphores, one per rank, in the segments. POSIX makes sem_post and
sem_wait synchronize memory, so whatever a rank stored before it posted is what the rank waking
on that post loads, on any architecture, and a waiting rank sleeps in the kernel instead of
spinning. The TCP ring only sets this up.

Each segment has an input and an output half of SEGMENT_BYTES. All-reduce, for each piece of at
most SEGMENT_BYTES of the flattened array, split into n chunks as `np.array_split` does:
  1. rank r copies the piece's chunks other than chunk r into its input half;
  2. gate A: every rank's piece is in shared memory;
  3. rank r sums chunk r over the ranks, in rank order (its own from its array, the others from
     their input halves), into its output half, and copies the sum into its array;
  4. gate B: every chunk is summed;
  5. rank r copies chunk j from rank j's output half into its array, for every j != r.
Why this is safe whatever the sizes of consecutive pieces and operations: an input half is read
only between A and B (step 3; a broadcast likewise between its two gates) and written only
before A, after the B that ended every read of the previous piece; an output half is written
only between A and B, after every other rank reached A and so finished step 5 of the previous
piece.
Every rank computes its chunk's sum in the same order, so all ranks end with bit-identical results.

`attach` decides, with every rank, whether the ring can use shared memory: rank 0 draws a nonce,
every rank creates its segment under a name made of it, then opens its peers' and checks their
headers; only when every rank succeeded at both do they switch. Every rank unlinks every rank's
segment file once all have mapped them (or the set-up failed), so nothing is left in /dev/shm
however the processes end, unless every one of them dies during the set-up itself.
"""

from __future__ import annotations

import ctypes
import errno
import logging
import mmap
import os
import struct
import sys
import time

import numpy as np

from .config import CommTimeout, rpc_timeout
from .ring import RingError, _split

log = logging.getLogger("fleetgraph.comm")

# Bytes of one piece: each rank's segment holds one in each half. Measured with 2 ranks on 2 cores
# (medians of 15-20 all-reduces of 64 MB / 16 or 24 MB): 1 MiB pieces 12.9 / 2.9 ms, 2 MiB
# 9.2-11.8 / 2.6-5.0, 4 MiB 9.3-12.0 / 2.5-4.2, 8 MiB 24.2 / 4.4, 16 MiB 21.4 / 5.6: a piece must
# stay in the cache between its copy and its sum, and smaller ones wait at more gates. Of 2 and
# 4 MiB, alike within the noise, 2 MiB: 8 ranks then fit in the 64 MiB /dev/shm of a default
# Docker container.
SEGMENT_BYTES = 2 << 20
SHM_DIR = "/dev/shm"
# A segment: a header page, then the input and the output half.
_HEADER = struct.Struct("<16s8sqq")  # magic, nonce, rank, SEGMENT_BYTES
_MAGIC = b"fleetgraph-shm-2"
_SEM_OFFSET, _SEM_BYTES = 64, 64  # the rank's semaphore (sem_t is 32 bytes with glibc and musl)
_WHAT_BYTES = 48
_RECORD = struct.Struct(f"<qq{_WHAT_BYTES}s")  # where the rank is: gate count, operation, what it runs
_RECORDS_OFFSET = _SEM_OFFSET + _SEM_BYTES  # two records, for even and odd gate counts
_DATA_OFFSET = mmap.PAGESIZE
# Longest single sleep in sem_timedwait, whose deadline is on the wall clock: the timeout itself is
# measured on the monotonic clock between sleeps.
_WAIT_SLICE_S = 0.5


def available() -> bool:
    """Whether this process can use shared memory at all: Linux's /dev/shm and libc semaphores."""
    return sys.platform.startswith("linux") and os.path.isdir(SHM_DIR) and _semaphores() is not None


def attach(ring, wanted: bool = True) -> SharedMemory | None:
    """A SharedMemory for `ring` when all its ranks share this host and want it, else None. Every
    rank of the ring must call it at the same point: it runs a broadcast and two all-reduces over
    the ring, so all ranks come to the same answer, even when only some of them want shared memory
    (FLEETGRAPH_RING_TRANSPORT=tcp) or can create their segment."""
    nonce = np.frombuffer(os.urandom(8), np.uint8).copy() if ring.rank == 0 else np.zeros(8, np.uint8)
    nonce = bytes(ring.broadcast(nonce, root=0, name="shared memory set-up"))
    prefix = f"fleetgraph-{nonce.hex()}-{ring.ring_id}"
    own = _Segment.create(prefix, nonce, ring.rank, ring) if wanted and available() else None
    segments: list[_Segment | None] = []
    try:
        if _all(ring, own is not None):
            segments = [own if r == ring.rank else _Segment.open(prefix, nonce, r) for r in range(ring.nranks)]
        everyone_attached = _all(ring, len(segments) == ring.nranks and all(segments))
    finally:  # every rank has mapped the files, or the set-up failed: unlink them all
        for r in range(ring.nranks):
            _unlink(_path(prefix, r))
    return SharedMemory(ring, segments) if everyone_attached else None


def _path(prefix: str, rank: int) -> str:
    return os.path.join(SHM_DIR, f"{prefix}-{rank}")


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _file_bytes() -> int:
    """A segment file's size (a function, not a constant, so that tests can set SEGMENT_BYTES)."""
    return _DATA_OFFSET + 2 * SEGMENT_BYTES


def _all(ring, flag: bool) -> bool:
    agreed = ring.allreduce(np.array([int(flag)], np.int32), name="shared memory set-up")
    return int(agreed[0]) == ring.nranks


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


class _Semaphores:
    """libc's POSIX semaphore calls, on semaphores given by address."""

    def __init__(self) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        self.init, self.post, self.trywait, self.timedwait = (
            libc.sem_init,
            libc.sem_post,
            libc.sem_trywait,
            libc.sem_timedwait,
        )
        self.init.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint]
        self.post.argtypes = self.trywait.argtypes = [ctypes.c_void_p]
        self.timedwait.argtypes = [ctypes.c_void_p, ctypes.POINTER(_Timespec)]


_libc_semaphores: list[_Semaphores | None] = []


def _semaphores() -> _Semaphores | None:
    """The semaphore calls, or None where this libc has none."""
    if not _libc_semaphores:
        try:
            _libc_semaphores.append(_Semaphores())
        except (OSError, AttributeError):
            _libc_semaphores.append(None)
    return _libc_semaphores[0]


class _Segment:
    """One rank's mapped segment: a header page (identity, semaphore, records), then an input and
    an output half of SEGMENT_BYTES.

    The mapping is never closed explicitly: it goes when the last reference to the segment does.
    The semaphore's address is handed to libc, so a thread still waiting on it (the ring closed
    under it) must keep the memory mapped; `_semaphore`, a ctypes view of the mapping held as
    long as the segment lives, guarantees that."""

    def __init__(self, mapping: mmap.mmap) -> None:
        self.mapping = mapping
        self._semaphore = ctypes.c_char.from_buffer(mapping, _SEM_OFFSET)
        self.semaphore = ctypes.addressof(self._semaphore)

    @classmethod
    def create(cls, prefix: str, nonce: bytes, rank: int, ring) -> _Segment | None:
        """This rank's segment, or None (saying why in a warning) where it cannot be made."""
        path = _path(prefix, rank)
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        except OSError as e:
            return _cannot(ring, f"cannot create {path}: {e}")
        try:
            os.posix_fallocate(fd, 0, _file_bytes())  # no SIGBUS later on a full /dev/shm
            mapping = mmap.mmap(fd, _file_bytes())
        except OSError as e:
            _unlink(path)
            return _cannot(ring, f"cannot reserve {_file_bytes() >> 20} MiB in {SHM_DIR}: {e}")
        finally:
            os.close(fd)
        segment = cls(mapping)
        if _semaphores().init(segment.semaphore, 1, 0) != 0:  # shared between processes, count 0
            _unlink(path)
            return _cannot(ring, f"sem_init: {os.strerror(ctypes.get_errno())}")
        mapping[: _HEADER.size] = _HEADER.pack(_MAGIC, nonce, rank, SEGMENT_BYTES)
        return segment

    @classmethod
    def open(cls, prefix: str, nonce: bytes, rank: int) -> _Segment | None:
        """Rank `rank`'s segment, or None where it is not on this host (or not what it should be)."""
        path = _path(prefix, rank)
        try:
            fd = os.open(path, os.O_RDWR)
        except OSError:
            return None
        try:
            if os.fstat(fd).st_size != _file_bytes():
                return None
            mapping = mmap.mmap(fd, _file_bytes())
        except OSError:
            return None
        finally:
            os.close(fd)
        if _HEADER.unpack_from(mapping) != (_MAGIC, nonce, rank, SEGMENT_BYTES):
            mapping.close()
            return None
        return cls(mapping)

    def halves(self, dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
        """The input and the output half as flat arrays of `dtype`."""
        count = SEGMENT_BYTES // dtype.itemsize
        return tuple(np.frombuffer(self.mapping, dtype, count, _DATA_OFFSET + half * SEGMENT_BYTES) for half in (0, 1))

    def record(self, gate: int) -> tuple[int, int, str]:
        """(gate, operation, what) the rank wrote when it reached gate `gate` (or a gate two apart)."""
        count, seq, what = _RECORD.unpack_from(self.mapping, _RECORDS_OFFSET + (gate % 2) * _RECORD.size)
        return count, seq, what.rstrip(b"\0").decode("utf-8", "replace")

    def write_record(self, gate: int, seq: int, what: str) -> None:
        _RECORD.pack_into(self.mapping, _RECORDS_OFFSET + (gate % 2) * _RECORD.size, gate, seq, what.encode())


def _cannot(ring, why: str) -> None:
    log.warning("ring %d, rank %d: %s; the ring moves its bytes over TCP", ring.ring_id, ring.rank, why)
    return None


class _Gate:
    """Where the ranks wait for each other: a rank reaching gate g records (g, operation, what it
    runs), posts every peer's semaphore once and takes n-1 posts from its own.

    Counting posts is enough, though a peer may already post for gate g+1 while another has not
    yet posted for g: the first rank to pass gate g has taken (n-1)g posts in all while no one had
    posted for g+1, so it took every peer's post for g itself. A later rank may take a g+1 post in
    place of a slow peer's post for g, but posts cannot be told apart and a wait synchronizes with
    every post made before it: the g+1 post was made after its maker passed g, itself after the
    slow peer's post to it. So a rank past gate g knows every rank reached g and sees what each
    stored before, and no rank can be past g+1 yet: each peer's record for g (records alternate
    between two slots) is there to check.

    `close` (the ring closed while another thread waits here) wakes the waiter, which then fails."""

    def __init__(self, ring, segments: list[_Segment]) -> None:
        self.ring, self.segments = ring, segments
        self.peers = [r for r in range(ring.nranks) if r != ring.rank]
        self.count = 0
        self.closed = False
        self._sem = _semaphores()
        self._own = segments[ring.rank]

    def arrive(self, seq: int, what: str, where: str) -> None:
        """Reach the next gate in operation `seq` doing `what`, and return once every rank has."""
        what = what.encode()[:_WHAT_BYTES].decode("utf-8", "ignore")
        self.count += 1
        self._own.write_record(self.count, seq, what)
        for r in self.peers:
            if self._sem.post(self.segments[r].semaphore) != 0:
                raise OSError(ctypes.get_errno(), f"{where}: sem_post: {os.strerror(ctypes.get_errno())}")
        timeout = rpc_timeout()
        deadline = time.monotonic() + timeout
        for _ in self.peers:
            self._take(deadline, timeout, seq, what, where)
        if self.closed:
            raise RingError(f"{where}: the ring was closed while this rank waited for the others")
        for r in self.peers:
            if self.segments[r].record(self.count) != (self.count, seq, what):
                _, their_seq, theirs = self.segments[r].record(self.count)
                raise RingError(
                    f"{where}: rank {r} ran {theirs!r} (operation {their_seq}) where this rank ran {what!r} "
                    f"(operation {seq}); hint: every rank must run the same collective operations on arrays "
                    "of the same shape and dtype, in the same order"
                )

    def _take(self, deadline: float, timeout: float, seq: int, what: str, where: str) -> None:
        sem, own = self._sem, self._own.semaphore
        if sem.trywait(own) == 0:
            return
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                late = [r for r in self.peers if self.segments[r].record(self.count)[0] != self.count]
                who = f"rank(s) {late} ({', '.join(self.ring.endpoints[r] for r in late)})" if late else "a rank"
                told = "" if late else " (every rank recorded reaching it, but a signal never came: one died?)"
                raise CommTimeout(
                    f"{where}: {who} did not reach {what!r} of operation {seq}{told} after {timeout} s "
                    "(FLEETGRAPH_RPC_TIMEOUT)"
                )
            wake = time.time() + min(left, _WAIT_SLICE_S)
            if sem.timedwait(own, _Timespec(int(wake), int(wake % 1 * 1e9))) == 0:
                return
            if ctypes.get_errno() not in (errno.ETIMEDOUT, errno.EINTR):
                raise OSError(ctypes.get_errno(), f"{where}: sem_timedwait: {os.strerror(ctypes.get_errno())}")

    def close(self) -> None:
        """Fail an operation another thread may be waiting in, at once rather than at its timeout."""
        self.closed = True
        for _ in self.peers:
            self._sem.post(self._own.semaphore)


class SharedMemory:
    """The all-reduce, broadcast and barrier of a ring whose ranks all share this host."""

    def __init__(self, ring, segments: list[_Segment]) -> None:
        self.ring, self.segments = ring, segments
        self.gate = _Gate(ring, segments)
        self._halves: dict[str, tuple[list[np.ndarray], list[np.ndarray]]] = {}

    def every_rank_halves(self, dtype: np.dtype) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Every rank's input half, and every rank's output half, as flat arrays of `dtype`."""
        if dtype.name not in self._halves:
            pairs = [segment.halves(dtype) for segment in self.segments]
            self._halves[dtype.name] = ([i for i, _ in pairs], [o for _, o in pairs])
        return self._halves[dtype.name]

    def allreduce(self, flat: np.ndarray, seq: int, op: str, where: str) -> None:
        n, r = self.ring.nranks, self.ring.rank
        inputs, outputs = self.every_rank_halves(flat.dtype)
        step = SEGMENT_BYTES // flat.itemsize
        tag = f"{op}:{flat.size}x{flat.dtype.name}"
        for start in range(0, flat.size, step):
            piece = flat[start : start + step]
            chunks = [slice(a, b) for a, b in _split(0, piece.size, n)]
            for j in range(n):  # 1
                if j != r:
                    inputs[r][chunks[j]] = piece[chunks[j]]
            self.gate.arrive(seq, tag, where)  # 2
            own = chunks[r]  # 3
            parts = [piece[own] if j == r else inputs[j][own] for j in range(n)]
            total = outputs[r][own]
            np.add(parts[0], parts[1], out=total)
            for part in parts[2:]:
                np.add(total, part, out=total)
            piece[own] = total
            self.gate.arrive(seq, tag, where)  # 4
            for j in range(n):  # 5
                if j != r:
                    piece[chunks[j]] = outputs[j][chunks[j]]

    def broadcast(self, flat: np.ndarray, root: int, seq: int, where: str) -> None:
        """The root copies each piece into its segment; once it has, the others copy it out, and
        once they have, the root goes on to the next piece."""
        source, step = self.every_rank_halves(flat.dtype)[0][root], SEGMENT_BYTES // flat.itemsize
        tag = f"broadcast:{root}:{flat.size}x{flat.dtype.name}"
        for start in range(0, flat.size, step):
            piece = flat[start : start + step]
            if self.ring.rank == root:
                source[: piece.size] = piece
            self.gate.arrive(seq, tag, where)
            if self.ring.rank != root:
                piece[...] = source[: piece.size]
            self.gate.arrive(seq, tag, where)

    def barrier(self, seq: int, where: str) -> None:
        self.gate.arrive(seq, "barrier", where)

    def close(self) -> None:
        """Let go of the segments: they are unmapped once no thread uses them any more."""
        self.gate.close()
        self._halves.clear()
        self.segments = []
