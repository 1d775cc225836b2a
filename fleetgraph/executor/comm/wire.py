"""The wire format: a small fixed header frame, then the raw array bytes as their own frame(s).

Header (little-endian): magic b"FGW1", kind u8, dtype u8, ndim u8, flags u8, sender i32, seq u64,
height i64 (rows of a SelectedRows table), name length u16, then the name (UTF-8) and ndim i64
dims. A dense array travels as one payload frame; a SelectedRows as a rows frame (int64) and a
values frame; a LoDTensor as a LoD frame (int64: the number of levels, each level's length, then
the offsets of every level) before its payload; an error as one UTF-8 text frame. No pickle: a
payload is only ever read as the dtype and shape its header declares, and `decode` checks the sizes
agree (and the LoD describes the rows) before touching it. A message that is no SelectedRows may
set FLAG_COMMIT: its height is then the sync step it commits before anything else (ps_server.py).
"""

from __future__ import annotations

import enum
import math
import struct
from dataclasses import dataclass

import numpy as np

from ...ir.dtypes import BFLOAT16
from ...ops.lod_tensor import LoDError, LoDTensor, check_lod
from ...ops.selected_rows import SelectedRows

MAGIC = b"FGW1"
_FIXED = struct.Struct("<4sBBBBiQqH")
FLAG_SPARSE, FLAG_LOD, FLAG_COMMIT = 1, 2, 4
MAX_NDIM = 16
MAX_ELEMENTS = 1 << 48  # more than any process could hold
MAX_LOD_LEVELS = 8


class Kind(enum.IntEnum):
    SEND = 1  # push a variable (a gradient block, a GEO delta)
    GET = 2  # ask for a variable
    VAR = 3  # a variable, answering GET
    ACK = 4
    ERROR = 5
    SEND_BARRIER = 6
    FETCH_BARRIER = 7
    COMPLETE = 8  # this trainer is done
    RING = 9  # a chunk of a collective operation
    WORKER_BARRIER = 10  # fleet.barrier_worker in parameter-server mode, answered by the first pserver
    PREFETCH = 11  # ask a pserver for rows of a table it holds: the value is the (local) row ids
    WORKER_EXCHANGE = 12  # trainers swap arrays through the first pserver (fleet.util, global shuffle)
    SEND_BATCH = 13  # several SEND messages in one, answered once: the value holds each one's frame count
    GET_BATCH = 14  # ask for several variables (names one per line), answered by a VAR of them packed
    STATE = 15  # ask for every persistable a pserver holds (a checkpoint): a VAR, names one per line, packed
    AUTH = 16  # a step of the loopback handshake (handshake.py): the step and its fields, one per line of the name


# A code is a dtype's index here: new dtypes go at the end. bfloat16 is ml_dtypes' (ir/dtypes.py).
DTYPES = ["", "float32", "float64", "float16", "int32", "int64", "uint8", "int8", "int16", "bool", "bfloat16"]
_DTYPE = [None, *(BFLOAT16 if name == "bfloat16" else np.dtype(name) for name in DTYPES[1:])]
_CODE = {dtype: code for code, dtype in enumerate(_DTYPE) if dtype is not None}  # native byte order only
_KIND = {int(kind): kind for kind in Kind}  # Kind(x) is an Enum lookup, slow at a message per array


class WireError(ValueError):
    """A message that does not follow the wire format; the receiver drops it."""


@dataclass
class Message:
    kind: Kind
    name: str = ""
    sender: int = -1
    seq: int = 0
    value: np.ndarray | SelectedRows | LoDTensor | None = None
    text: str = ""
    commit: int = 0  # sync: the step this message commits before anything else (FLAG_COMMIT), else 0

    def describe(self) -> str:
        what = ""
        if self.value is not None:
            array = self.value.value if self.is_sparse else self.value
            what = f" {self.value.dtype} {list(np.shape(getattr(array, 'data', array)))}"
        return f"{self.kind.name} {self.name!r}{what} from sender {self.sender} (seq {self.seq})"

    @property
    def is_sparse(self) -> bool:
        return isinstance(self.value, SelectedRows)


def encode(
    kind: Kind, name: str = "", value=None, *, sender: int = -1, seq: int = 0, text: str = "", commit: int = 0
) -> list:
    """Frames for one message; array payloads are the arrays' own buffers (send with copy=False)."""
    name_bytes = name.encode("utf-8")
    flags, height, payload = 0, 0, []
    if isinstance(value, LoDTensor) and not value.levels:
        value = value.data
    if isinstance(value, LoDTensor):
        flags, levels = FLAG_LOD, value.levels
        payload = [np.concatenate([[len(levels)], [len(v) for v in levels], *levels]).astype(np.int64)]
        value = value.data
    if isinstance(value, SelectedRows):
        flags, height = FLAG_SPARSE, int(value.height)
        array = np.ascontiguousarray(value.value)
        payload = [np.ascontiguousarray(value.rows, dtype=np.int64), array]
    elif value is not None:
        array = np.ascontiguousarray(value)
        payload += [array]
    if value is not None:
        if not array.dtype.isnative:
            array = payload[-1] = array.astype(array.dtype.newbyteorder("="))
        dtype, shape = _CODE.get(array.dtype), array.shape
        if dtype is None:
            raise WireError(f"encode {name!r}: dtype {array.dtype.str} cannot be sent; expected one of {DTYPES[1:]}")
        if array.dtype == BFLOAT16:  # the buffer protocol has no bfloat16: hand ZeroMQ the same bytes as uint16
            payload[-1] = payload[-1].view(np.uint16)
    else:
        dtype, shape = 0, ()
    if kind == Kind.ERROR:
        payload = [text.encode("utf-8")]
    if commit:
        if flags & FLAG_SPARSE:
            raise WireError(f"encode {name!r}: a SelectedRows header holds its height; expected no COMMIT with it")
        flags, height = flags | FLAG_COMMIT, commit
    header = _FIXED.pack(MAGIC, int(kind), dtype, len(shape), flags, sender, seq, height, len(name_bytes))
    header += name_bytes + struct.pack(f"<{len(shape)}q", *shape)
    return [header] + payload


def decode(frames) -> Message:
    """A Message from received frames (zmq Frames or bytes), or WireError saying what is wrong."""
    if not frames:
        raise WireError("empty message")
    head = bytes(_buffer(frames[0]))
    if len(head) < _FIXED.size:
        raise WireError(f"header of {len(head)} bytes; expected at least {_FIXED.size}")
    magic, kind, dtype, ndim, flags, sender, seq, height, name_len = _FIXED.unpack_from(head)
    if magic != MAGIC:
        raise WireError(f"bad magic {magic!r}; expected {MAGIC!r}")
    if kind not in _KIND:
        raise WireError(f"unknown message kind {kind}")
    kind = _KIND[kind]
    if ndim > MAX_NDIM:
        raise WireError(f"{ndim} dimensions; expected at most {MAX_NDIM}")
    end = _FIXED.size + name_len + 8 * ndim
    if len(head) != end:
        raise WireError(f"header of {len(head)} bytes; its fields say {end}")
    try:
        name = head[_FIXED.size : _FIXED.size + name_len].decode("utf-8")
    except UnicodeDecodeError:
        raise WireError("variable name is not UTF-8") from None
    shape = struct.unpack_from(f"<{ndim}q", head, _FIXED.size + name_len)
    message = Message(kind, name, sender, seq, commit=height if flags & FLAG_COMMIT else 0)
    if kind == Kind.ERROR:
        message.text = bytes(_buffer(frames[1])).decode("utf-8", "replace") if len(frames) > 1 else ""
        return message
    if dtype == 0:
        if len(frames) != 1:
            raise WireError(f"{kind.name} {name!r}: {len(frames) - 1} payload frames; expected none")
        return message
    if dtype >= len(DTYPES) or any(d < 0 for d in shape):
        raise WireError(f"{kind.name} {name!r}: bad dtype code {dtype} or shape {list(shape)}")
    sparse, lod = bool(flags & FLAG_SPARSE), bool(flags & FLAG_LOD)
    if sparse and flags & FLAG_COMMIT:
        raise WireError(f"{kind.name} {name!r}: flags say both SelectedRows and COMMIT; expected at most one")
    if sparse and lod:
        raise WireError(f"{kind.name} {name!r}: flags say both SelectedRows and LoD; expected at most one")
    if (sparse or lod) and not shape:
        raise WireError(f"{kind.name} {name!r}: a {'SelectedRows' if sparse else 'LoD'} value of rank 0; expected rows")
    want_frames = 2 + sparse + lod
    if len(frames) != want_frames:
        raise WireError(f"{kind.name} {name!r}: {len(frames)} frames; expected {want_frames}")
    values = _array(frames[-1], _DTYPE[dtype], shape, name)
    if sparse:
        rows = _array(frames[1], _INT64, shape[:1], name + " rows")
        if height < 0 or (len(rows) and (rows.min() < 0 or rows.max() >= height)):
            raise WireError(f"SelectedRows {name!r}: row ids outside [0, {height})")
        message.value = SelectedRows(rows, values, int(height))
    elif lod:
        message.value = LoDTensor(values, _levels(frames[1], len(values), name))
    else:
        message.value = values
    return message


def _levels(frame, rows: int, name: str) -> tuple[np.ndarray, ...]:
    """The LoD frame: [number of levels, each level's length, the offsets of every level]."""
    buf = _buffer(frame)
    if buf.nbytes % 8 or buf.nbytes < 8:
        raise WireError(f"LoD of {name!r}: {buf.nbytes} bytes; expected a whole number of int64 (at least one)")
    flat = np.frombuffer(buf, dtype=np.int64)
    count = int(flat[0])
    if not 0 < count <= MAX_LOD_LEVELS or len(flat) < 1 + count:
        raise WireError(f"LoD of {name!r}: {count} levels; expected 1 to {MAX_LOD_LEVELS}")
    lengths = flat[1 : 1 + count]
    if (lengths < 1).any() or int(lengths.sum()) != len(flat) - 1 - count:
        raise WireError(f"LoD of {name!r}: level lengths {lengths.tolist()} do not add up to the frame")
    bounds = np.cumsum([1 + count, *lengths.tolist()])
    levels = tuple(flat[bounds[i] : bounds[i + 1]] for i in range(count))
    try:
        check_lod(levels, rows, f"LoD of {name!r}")
    except LoDError as e:
        raise WireError(str(e)) from None
    return levels


def _buffer(frame):
    return frame.buffer if hasattr(frame, "buffer") else memoryview(frame)


_INT64 = np.dtype(np.int64)


def _array(frame, dtype: np.dtype, shape, what: str) -> np.ndarray:
    buf = _buffer(frame)
    if math.prod(d for d in shape if d) > MAX_ELEMENTS:  # NumPy refuses such a shape even with a 0 in it
        raise WireError(f"{what!r}: shape {list(shape)} has more than 2^48 elements")
    expected = math.prod(shape) * dtype.itemsize  # Python ints: huge dims cannot wrap to 0
    if buf.nbytes != expected:
        raise WireError(f"{what!r}: payload of {buf.nbytes} bytes; {dtype} {list(shape)} needs {expected}")
    return np.frombuffer(buf, dtype=dtype).reshape(shape)


# -- several arrays as one payload ------------------------------------------------------------------

_PACK_HEAD = 8  # bytes per header field (int64)


def pack_arrays(arrays: list[np.ndarray]) -> np.ndarray:
    """Arrays as one uint8 array: an int64 header (count, then dtype code, ndim and dims of each),
    then each array's bytes padded to 8. The receiver reads them with `unpack_arrays`, no pickle."""
    arrays = [np.ascontiguousarray(a if a.dtype.isnative else a.astype(a.dtype.newbyteorder("="))) for a in arrays]
    header = [len(arrays)]
    for a in arrays:
        if a.dtype not in _CODE or a.ndim > MAX_NDIM:
            raise WireError(f"pack: a {a.dtype.str} array of rank {a.ndim} cannot be sent")
        header += [_CODE[a.dtype], a.ndim, *a.shape]
    parts = [np.asarray(header, dtype=np.int64).view(np.uint8)]
    for a in arrays:
        raw = a.reshape(-1).view(np.uint8)
        parts += [raw, np.zeros(-len(raw) % _PACK_HEAD, dtype=np.uint8)]
    return np.concatenate(parts)


def unpack_arrays(buf: np.ndarray) -> list[np.ndarray]:
    """The arrays of `pack_arrays`, every size checked before a byte is read."""
    buf = np.ascontiguousarray(buf).view(np.uint8).reshape(-1)
    fields = buf[: len(buf) - len(buf) % _PACK_HEAD].view(np.int64)
    pos, out = 1, []
    if not len(fields) or not 0 <= fields[0] <= len(fields):
        raise WireError("packed arrays: bad count")
    shapes = []
    for _ in range(int(fields[0])):
        if pos + 2 > len(fields):
            raise WireError("packed arrays: header cut short")
        code, ndim = int(fields[pos]), int(fields[pos + 1])
        if not 0 < code < len(DTYPES) or not 0 <= ndim <= MAX_NDIM or pos + 2 + ndim > len(fields):
            raise WireError(f"packed arrays: bad dtype code {code} or rank {ndim}")
        shape = tuple(int(d) for d in fields[pos + 2 : pos + 2 + ndim])
        if any(d < 0 for d in shape):
            raise WireError(f"packed arrays: negative dimension in {list(shape)}")
        shapes.append((_DTYPE[code], shape))
        pos += 2 + ndim
    offset = pos * _PACK_HEAD
    for dtype, shape in shapes:
        if math.prod(d for d in shape if d) > MAX_ELEMENTS:
            raise WireError(f"packed arrays: shape {list(shape)} has more than 2^48 elements")
        size = math.prod(shape) * dtype.itemsize
        if offset + size > len(buf):
            raise WireError(f"packed arrays: a {dtype} {list(shape)} runs past the payload's {len(buf)} bytes")
        out.append(buf[offset : offset + size].view(dtype).reshape(shape))
        offset += size + (-size % _PACK_HEAD)
    return out


# -- several SEND messages as one -------------------------------------------------------------------


def encode_batch(messages: list[list], *, sender: int, seq: int, commit: int = 0) -> list:
    """Frames of one SEND_BATCH: its header, the frame count of each message, then their frames."""
    counts = np.asarray([len(m) for m in messages], dtype=np.int64)
    head = encode(Kind.SEND_BATCH, value=counts, sender=sender, seq=seq, commit=commit)
    return head + [f for m in messages for f in m]


def decode_batch(batch: Message, frames) -> list[Message]:
    """The messages of a SEND_BATCH (`batch` decoded from its first two frames, `frames` the rest)."""
    counts = batch.value
    if not isinstance(counts, np.ndarray) or counts.dtype != np.int64 or counts.ndim != 1:
        raise WireError("SEND_BATCH: expected an int64 array of frame counts")
    if (counts < 1).any() or int(counts.sum()) != len(frames):
        raise WireError(f"SEND_BATCH: frame counts {counts.tolist()} do not add up to its {len(frames)} frames")
    bounds = np.cumsum([0, *counts.tolist()])
    return [decode(frames[bounds[i] : bounds[i + 1]]) for i in range(len(counts))]
