"""The wire decoder: every message either decodes to what was sent or is refused with WireError,
whatever the bytes (property-based with hypothesis; bench/fuzz.py runs the same against live
processes for longer)."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fleetgraph.executor.comm.wire import (
    _FIXED,
    MAGIC,
    Kind,
    WireError,
    decode,
    decode_batch,
    encode,
    encode_batch,
    pack_arrays,
    unpack_arrays,
)
from fleetgraph.ir.dtypes import BFLOAT16
from fleetgraph.ops.lod_tensor import LoDTensor
from fleetgraph.ops.selected_rows import SelectedRows

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _header(kind=Kind.SEND, dtype=1, shape=(), flags=0, name=b"w@GRAD", height=0):
    head = _FIXED.pack(MAGIC, int(kind), dtype, len(shape), flags, 0, 1, height, len(name))
    return head + name + struct.pack(f"<{len(shape)}q", *shape)


def test_huge_dimensions_are_refused_not_wrapped_to_an_empty_payload():
    # 2^32 x 2^32 elements wrapped to 0 in int64 arithmetic: an empty payload passed the size check
    with pytest.raises(WireError, match=r"shape \[4294967296, 4294967296\] has more than 2\^48 elements"):
        decode([_header(shape=(2**32, 2**32)), b""])
    with pytest.raises(WireError, match="more than 2"):
        unpack_arrays(np.asarray([1, 1, 2, 2**32, 2**32], dtype=np.int64).view(np.uint8))
    with pytest.raises(WireError, match="runs past"):  # within the bound, but not there
        unpack_arrays(np.asarray([1, 1, 2, 2**20, 2**20], dtype=np.int64).view(np.uint8))


def test_a_zero_sized_shape_with_huge_dimensions_is_refused():
    # 2^32 x 2^62 x 0 elements: 0 bytes, but NumPy cannot reshape to it (a ValueError crashed the
    # pserver; found by bench/fuzz.py)
    with pytest.raises(WireError, match="more than 2"):
        decode([_header(shape=(2**32, 2**62, 0)), b""])
    with pytest.raises(WireError, match="more than 2"):
        unpack_arrays(np.asarray([1, 1, 3, 2**32, 2**62, 0], dtype=np.int64).view(np.uint8))


def test_a_sparse_or_lod_value_of_rank_zero_is_refused():
    # a SelectedRows header with no dimensions crashed the pserver with "len() of unsized object"
    with pytest.raises(WireError, match="SelectedRows value of rank 0"):
        decode([_header(flags=1, height=5), np.zeros(1, np.int64).tobytes(), np.zeros(1, np.float32).tobytes()])
    with pytest.raises(WireError, match="LoD value of rank 0"):
        decode([_header(flags=2), np.asarray([1, 2, 0, 1], np.int64).tobytes(), b"\0\0\0\0"])


@pytest.mark.parametrize(
    "value",
    [
        np.arange(12, dtype="float32").reshape(3, 4),
        np.zeros((0, 5), "int64"),
        SelectedRows(np.asarray([0, 3]), np.ones((2, 4), "float32"), 10),
        LoDTensor(np.arange(5, dtype="float64").reshape(5, 1), (np.asarray([0, 2, 5]),)),
        None,
    ],
    ids=["dense", "empty", "selected_rows", "lod", "none"],
)
def test_what_is_encoded_decodes_to_the_same_value(value):
    msg = decode([bytes(f) for f in encode(Kind.SEND, "v", value, sender=3, seq=9)])
    assert (msg.kind, msg.name, msg.sender, msg.seq) == (Kind.SEND, "v", 3, 9)
    if isinstance(value, SelectedRows):
        np.testing.assert_array_equal(msg.value.rows, value.rows)
        np.testing.assert_array_equal(msg.value.value, value.value)
        assert msg.value.height == value.height
    elif isinstance(value, LoDTensor):
        np.testing.assert_array_equal(msg.value.data, value.data)
        np.testing.assert_array_equal(msg.value.levels[0], value.levels[0])
    elif value is None:
        assert msg.value is None
    else:
        np.testing.assert_array_equal(msg.value, value)


@FUZZ
@given(st.lists(st.binary(max_size=200), min_size=0, max_size=4))
def test_any_bytes_decode_or_raise_wire_error(frames):
    try:
        decode(frames)
    except WireError:
        pass


_VALID = [
    [bytes(f) for f in encode(Kind.SEND, "fc_0.w_0@GRAD", np.ones((3, 2), "float32"), sender=0, seq=1)],
    [bytes(f) for f in encode(Kind.SEND, "t", SelectedRows(np.asarray([1]), np.ones((1, 2), "float32"), 4))],
    [bytes(f) for f in encode(Kind.SEND, "l", LoDTensor(np.ones((3, 1), "int64"), (np.asarray([0, 1, 3]),)))],
]


@FUZZ
@given(
    st.sampled_from(range(len(_VALID))),
    st.lists(st.tuples(st.integers(0, 3), st.integers(0, 400), st.integers(0, 255)), min_size=1, max_size=6),
)
def test_valid_messages_with_bytes_changed_decode_or_raise_wire_error(which, edits):
    frames = [bytearray(f) for f in _VALID[which]]
    for frame_index, pos, byte in edits:
        frame = frames[frame_index % len(frames)]
        if frame:
            frame[pos % len(frame)] = byte
    try:
        decode([bytes(f) for f in frames])
    except WireError:
        pass


@FUZZ
@given(st.binary(max_size=300))
def test_any_packed_payload_unpacks_or_raises_wire_error(raw):
    try:
        unpack_arrays(np.frombuffer(raw, dtype=np.uint8))
    except WireError:
        pass


@FUZZ
@given(st.lists(st.integers(-3, 5), max_size=4), st.integers(0, 5))
def test_any_batch_frame_counts_decode_or_raise_wire_error(counts, extra):
    inner = [bytes(f) for f in encode(Kind.SEND, "x", np.ones(2, "float32"), sender=0, seq=1)]
    head = encode(Kind.SEND_BATCH, value=np.asarray(counts, dtype=np.int64), sender=0, seq=1)
    batch = decode([bytes(f) for f in head])
    try:
        decode_batch(batch, inner * extra)
    except WireError:
        pass


def test_a_batch_round_trips():
    messages = [encode(Kind.SEND, f"g{i}", np.full(3, i, "float32"), sender=1, seq=i) for i in range(3)]
    frames = [bytes(f) for f in encode_batch(messages, sender=1, seq=7)]
    decoded = decode_batch(decode(frames[:2]), frames[2:])
    assert [m.name for m in decoded] == ["g0", "g1", "g2"]
    assert [float(m.value[0]) for m in decoded] == [0.0, 1.0, 2.0]
    assert [a.tolist() for a in unpack_arrays(pack_arrays([np.arange(3), np.ones((2, 2), "float32")]))] == [
        [0, 1, 2],
        [[1.0, 1.0], [1.0, 1.0]],
    ]


def test_arrays_of_the_other_byte_order_arrive_as_their_values():
    """A big-endian array (read from a file, say) used to travel as its raw bytes under a native dtype."""
    swapped = np.arange(6, dtype=">f4").reshape(2, 3)
    got = decode([bytes(f) for f in encode(Kind.SEND, "w", swapped, sender=0, seq=1)]).value
    assert got.dtype == np.float32 and got.tolist() == swapped.tolist()
    (unpacked,) = unpack_arrays(pack_arrays([np.array([1, 2], dtype=">i8")]))
    assert unpacked.dtype == np.int64 and unpacked.tolist() == [1, 2]
    with pytest.raises(WireError, match="cannot be sent"):
        encode(Kind.SEND, "w", np.zeros(2, dtype=np.complex64), sender=0, seq=1)


def test_bfloat16_arrays_travel_bit_for_bit_alone_sparse_and_packed():
    values = np.array([[1.0, -2.5e-3, 3.0e38], [np.inf, -0.0, 7.0]], np.float32).astype(BFLOAT16)
    frames = [bytes(memoryview(f)) for f in encode(Kind.SEND, "w", values)]
    got = decode(frames).value
    assert got.dtype == BFLOAT16 and got.view(np.uint16).tolist() == values.view(np.uint16).tolist()
    sparse = decode([bytes(memoryview(f)) for f in encode(Kind.SEND, "t", SelectedRows([0, 4], values, 5))]).value
    assert sparse.value.dtype == BFLOAT16 and sparse.rows.tolist() == [0, 4]
    np.testing.assert_array_equal(sparse.value.astype(np.float32), values.astype(np.float32))
    packed, ints = unpack_arrays(pack_arrays([values, np.arange(3)]))
    assert packed.dtype == BFLOAT16 and packed.view(np.uint16).tolist() == values.view(np.uint16).tolist()
    assert ints.tolist() == [0, 1, 2]
