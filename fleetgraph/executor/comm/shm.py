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
Every rank computes its chunk's sum in the same order, so all ranks end with bit-identical results;
bfloat16 chunks are added in float32 and rounded once (ring.py says why).

`attach` decides, with every rank, whether the ring can use shared memory:
  1. every rank creates its segment (O_EXCL, mode 0600) under a name with _TOKEN_BYTES of its own
     random bytes, drawing again if the name is taken, so no other user can guess one name from
     another and create it first;
  2. the ranks exchange the names over the ring's own connections (an all-gather; a job secret
     authenticates them), never through anything another user can see in /dev/shm;
  3. every rank opens its peers' segments without following links and trusts one only when it is
     a regular file of this effective uid, with no group or other permissions, of the expected
     size and with the expected header (`_untrusted`);
  4. only when every rank succeeded at all this do they switch (`_all`). A rank that finds a
     peer's file missing takes it to be on another host and falls back to TCP quietly; any other
     failure is a warning on "fleetgraph.comm" naming the rank and the check.
Every rank unlinks every segment file it knows of once all have mapped them (or the set-up
failed), so nothing is left in /dev/shm however the processes end, unless every one of them dies
during the set-up itself.
"""

from __future__ import annotations

import ctypes
import errno
import logging
import mmap
import os
import stat
import struct
import sys
import time

import numpy as np

from ...ir.dtypes import BFLOAT16
from .chunks import split
from .collective import RingError
from .config import CommTimeout, rpc_timeout

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
_HEADER = struct.Struct("<16s16sqq")  # magic, token (the random part of the name), rank, SEGMENT_BYTES
_HEADER_FIELDS = ("magic", "token", "rank", "SEGMENT_BYTES")
_MAGIC = b"fleetgraph-shm-3"
_TOKEN_BYTES = 16
# Random names a rank draws before it gives up on its segment: a name taken by chance is a 2^-128
# event, so a few draws are plenty, and names taken again and again say that something is wrong.
_CREATE_TRIES = 3
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
    rank of the ring must call it at the same point: it runs two all-reduces over the ring, so all
    ranks come to the same answer, even when only some of them want shared memory
    (FLEETGRAPH_RING_TRANSPORT=tcp) or can create their segment."""
    own = _Segment.create(ring) if wanted and available() else None  # step 1
    tokens: list[bytes | None] = [None] * ring.nranks
    tokens[ring.rank] = None if own is None else own.token
    segments = None
    try:
        tokens = _all_gather_tokens(ring, tokens[ring.rank])  # step 2
        if all(token is not None for token in tokens):
            segments = _map_peers(ring, own, tokens)  # step 3
        everyone_attached = _all(ring, segments is not None)  # step 4
    finally:  # every rank has mapped the files, or the set-up failed: unlink them all
        for r, token in enumerate(tokens):
            if token is not None:
                _unlink(_path(ring.ring_id, r, token))
    return SharedMemory(ring, segments) if everyone_attached else None


def _all_gather_tokens(ring, token: bytes | None) -> list[bytes | None]:
    """Every rank's token, None for a rank without a segment: each rank fills only its own row
    of an all-reduce, so the sum is every row as its rank wrote it."""
    rows = np.zeros((ring.nranks, 1 + _TOKEN_BYTES), np.uint8)
    if token is not None:
        rows[ring.rank, 0], rows[ring.rank, 1:] = 1, np.frombuffer(token, np.uint8)
    rows = ring.allreduce(rows, name="shared memory set-up")
    return [bytes(row[1:]) if row[0] == 1 else None for row in rows]


def _map_peers(ring, own: _Segment, tokens: list[bytes]) -> list[_Segment] | None:
    """Every rank's segment, mapped here, or None when one is on another host (quietly) or not
    to be trusted (with a warning naming it and why)."""
    segments = []
    for r, token in enumerate(tokens):
        if r == ring.rank:
            segments.append(own)
            continue
        path = _path(ring.ring_id, r, token)
        try:
            segment = _Segment.open(path, token, r)
        except _Refused as e:
            return _cannot(ring, f"rank {r}'s segment {path}: {e}")
        if segment is None:
            log.debug("ring %d, rank %d: no %s here: rank %d runs on another host", ring.ring_id, ring.rank, path, r)
            return None
        segments.append(segment)
    return segments


def _path(ring_id: int, rank: int, token: bytes) -> str:
    return os.path.join(SHM_DIR, f"fleetgraph-{ring_id}-{rank}-{token.hex()}")


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:  # gone already, or (sticky /dev/shm) not ours to remove
        pass


class _Refused(Exception):
    """A peer's segment file is not one this rank can trust; the message says which check failed."""


def _untrusted(st: os.stat_result) -> str | None:
    """Why a segment file, as fstat describes it, may have been made or changed by another user
    than this one, or is not a segment, or None."""
    if not stat.S_ISREG(st.st_mode):
        return f"file type; expected a regular file, got {stat.filemode(st.st_mode)}"
    if st.st_uid != os.geteuid():
        return f"owner; expected uid {os.geteuid()} (this process's effective uid), got uid {st.st_uid}"
    if st.st_mode & 0o077:
        return f"mode; expected no group or other permissions (0600), got {stat.S_IMODE(st.st_mode):04o}"
    if st.st_size != _file_bytes():
        return f"size; expected {_file_bytes()} bytes, got {st.st_size}"
    return None


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

    def __init__(self, mapping: mmap.mmap, token: bytes) -> None:
        self.mapping, self.token = mapping, token
        self._semaphore = ctypes.c_char.from_buffer(mapping, _SEM_OFFSET)
        self.semaphore = ctypes.addressof(self._semaphore)

    @classmethod
    def create(cls, ring) -> _Segment | None:
        """This rank's segment under a fresh random name, or None (saying why in a warning) where
        it cannot be made."""
        for _ in range(_CREATE_TRIES):
            token = os.urandom(_TOKEN_BYTES)
            path = _path(ring.ring_id, ring.rank, token)
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)  # EXCL: never through a link
                break
            except FileExistsError:
                continue
            except OSError as e:
                return _cannot(ring, f"cannot create {path}: {e}")
        else:
            return _cannot(
                ring,
                f"cannot create a segment in {SHM_DIR}: {_CREATE_TRIES} random names in a row were taken (the last "
                f"{path}); hint: another process creates files there under names it should not know",
            )
        try:
            os.posix_fallocate(fd, 0, _file_bytes())  # no SIGBUS later on a full /dev/shm
            mapping = mmap.mmap(fd, _file_bytes())
        except OSError as e:
            _unlink(path)
            return _cannot(ring, f"cannot reserve {_file_bytes() >> 20} MiB in {SHM_DIR}: {e}")
        finally:
            os.close(fd)
        segment = cls(mapping, token)
        if _semaphores().init(segment.semaphore, 1, 0) != 0:  # shared between processes, count 0
            _unlink(path)
            return _cannot(ring, f"sem_init: {os.strerror(ctypes.get_errno())}")
        mapping[: _HEADER.size] = _HEADER.pack(_MAGIC, token, ring.rank, SEGMENT_BYTES)
        return segment

    @classmethod
    def open(cls, path: str, token: bytes, rank: int) -> _Segment | None:
        """Rank `rank`'s segment at `path`, or None where there is no such file (the rank is on
        another host); raises _Refused where the file is there but not to be trusted."""
        try:
            fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW)
        except FileNotFoundError:
            return None
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise _Refused("file type; expected a regular file, got a symbolic link") from None
            raise _Refused(f"cannot open it: {e.strerror}") from None
        try:
            why = _untrusted(os.fstat(fd))
            if why is not None:
                raise _Refused(why)
            mapping = mmap.mmap(fd, _file_bytes())
        except OSError as e:
            raise _Refused(f"cannot map it: {e.strerror}") from None
        finally:
            os.close(fd)
        header = _HEADER.unpack_from(mapping)
        for field, expected, got in zip(_HEADER_FIELDS, (_MAGIC, token, rank, SEGMENT_BYTES), header):
            if got != expected:
                mapping.close()
                shown = (expected.hex(), got.hex()) if field == "token" else (repr(expected), repr(got))
                raise _Refused(f"header {field}; expected {shown[0]}, got {shown[1]}")
        return cls(mapping, token)

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


def _sum(parts: list[np.ndarray], total: np.ndarray) -> None:
    """`total` = the sum of `parts` in their order; bfloat16 ones added in float32 and rounded once."""
    if total.dtype == BFLOAT16:
        wide = parts[0].astype(np.float32)
        for part in parts[1:]:
            np.add(wide, part, out=wide)
        total[...] = wide
        return
    np.add(parts[0], parts[1], out=total)
    for part in parts[2:]:
        np.add(total, part, out=total)


class SharedMemory:
    """The all-reduce, broadcast and barrier of a ring whose ranks all share this host: a
    `collective.Transport`."""

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
            chunks = [slice(a, b) for a, b in split(0, piece.size, n)]
            for j in range(n):  # 1
                if j != r:
                    inputs[r][chunks[j]] = piece[chunks[j]]
            self.gate.arrive(seq, tag, where)  # 2
            own = chunks[r]  # 3
            parts = [piece[own] if j == r else inputs[j][own] for j in range(n)]
            total = outputs[r][own]
            _sum(parts, total)
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
