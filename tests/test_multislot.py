"""The MultiSlot parser: dense and sparse slots, dtypes, exact ids, malformed lines under both policies."""

from __future__ import annotations

import io
import random
import re

import numpy as np
import pytest

from fleetgraph.data.errors import BadLineError, DatasetError
from fleetgraph.data.multislot import BadLineLog, MultiSlotParser, Slot, describe_line, slots_from_vars
from fleetgraph.data.tokens import PAD
from fleetgraph.ir import Program, program_guard
from fleetgraph.static import data

DENSE2 = Slot("d", "float32", dense=True, row_shape=(2,))
IDS = Slot("ids", "int64", dense=False)
LABEL = Slot("label", "int64", dense=True, row_shape=(1,))
SLOTS = (DENSE2, IDS, LABEL)


def parse(text: str, slots=SLOTS, log=None, first_line=1):
    return MultiSlotParser(slots, log).parse(bytearray(b" " * PAD + text.encode()), "part-3", first_line)


def sparse_rows(cols, k):
    off, values = cols.offsets[k], cols.data[k]
    return [values[off[i] : off[i + 1]].tolist() for i in range(cols.n)]


def test_dense_and_sparse_slots_read_as_the_line_says():
    cols = parse("2 0.5 1.5 2 11 12 1 0\n2 2.5 3.5 1 13 1 1\n2 4.5 5.5 3 14 15 16 1 0\n")
    assert cols.n == 3
    np.testing.assert_array_equal(cols.data[0], np.array([[0.5, 1.5], [2.5, 3.5], [4.5, 5.5]], np.float32))
    assert cols.data[0].dtype == np.float32
    assert sparse_rows(cols, 1) == [[11, 12], [13], [14, 15, 16]]
    assert cols.offsets[1].tolist() == [0, 2, 3, 6] and cols.data[1].dtype == np.int64
    np.testing.assert_array_equal(cols.data[2], np.array([[0], [1], [0]]))


def test_feed_gives_arrays_for_dense_slots_and_lod_tensors_for_sparse_ones():
    feed = parse("2 0.5 1.5 2 11 12 1 0\n2 2.5 3.5 1 13 1 1\n").feed(["d", "ids", "label"])
    assert list(feed) == ["d", "ids", "label"]
    assert feed["d"].shape == (2, 2) and feed["label"].shape == (2, 1)
    assert feed["ids"].data.shape == (3, 1) and feed["ids"].lod() == [[0, 2, 3]]


def test_shape_with_and_without_a_leading_minus_one_reads_the_same_row():
    with program_guard(Program(), Program()):
        a = data("a", shape=[-1, 3], dtype="float32")
        b = data("b", shape=[3], dtype="float32")
        c = data("c", shape=[-1, 2, 2], dtype="int64")
        s = data("s", shape=[-1, 1], dtype="float32", lod_level=1)
    slots = slots_from_vars([a, b, c, s])
    assert [x.row_shape for x in slots[:3]] == [(3,), (3,), (2, 2)]
    assert not slots[3].dense and slots[3].dtype == "float32"
    cols = parse("3 1 2 3 3 4 5 6 4 1 2 3 4 2 0.25 -1e-3\n", slots)
    assert cols.data[2].shape == (1, 2, 2) and cols.data[2].tolist() == [[[1, 2], [3, 4]]]
    np.testing.assert_array_equal(cols.data[3], np.array([0.25, -1e-3], np.float32))


def test_slots_refuse_what_a_multislot_file_cannot_carry():
    with program_guard(Program(), Program()):
        f64 = data("f64", shape=[-1, 1], dtype="float64")
        hole = data("hole", shape=[-1, -1], dtype="float32")
        x = data("x", shape=[-1, 1], dtype="int64")
    with pytest.raises(DatasetError, match="dtype float64"):
        slots_from_vars([f64])
    with pytest.raises(DatasetError, match="fixed number of values"):
        slots_from_vars([hole])
    with pytest.raises(DatasetError, match="appears twice"):
        slots_from_vars([x, x])
    with pytest.raises(DatasetError, match="expected Variables"):
        slots_from_vars(["x"])


@pytest.mark.parametrize(
    "token, expected",
    [
        ("9007199254740993", 9007199254740993),  # 2**53 + 1: a float64 would round it
        ("9223372036854775807", 2**63 - 1),
        ("9223372036854775808", -(2**63)),  # unsigned feasigns are reinterpreted as int64
        ("18446744073709551615", -1),
        ("12345678901234567890", 12345678901234567890 - 2**64),
        ("-5", -5),
        ("+7", 7),
        ("000000000000000000042", 42),
        ("0", 0),
    ],
)
def test_int64_ids_are_exact_over_the_whole_unsigned_range(token, expected):
    cols = parse(f"2 0 0 1 {token} 1 1\n")
    assert cols.data[1].tolist() == [expected]


def test_int32_slots_keep_their_width():
    slots = (Slot("i", "int32", dense=False),)
    assert parse("3 7 -2 4294967295\n", slots).data[0].tolist() == [7, -2, -1]
    assert parse("1 7\n", slots).data[0].dtype == np.int32
    with pytest.raises(BadLineError, match="int32 id"):
        parse("1 4294967296\n", slots)


def test_float_spellings_read_as_python_reads_them():
    tokens = ["0.5", "-0.125", "+2", ".5", "5.", "1e-3", "-2.5E+2", "0.12345678901234567890", "3", "nan", "inf"]
    slots = (Slot("f", "float32", dense=False),)
    got = parse(f"{len(tokens)} {' '.join(tokens)}\n", slots).data[0]
    np.testing.assert_array_equal(got, np.array([float(t) for t in tokens], np.float32))


def _random_line(rng: random.Random, slots) -> str:
    parts = []
    for slot in slots:
        n = slot.width if slot.dense else rng.randint(1, 4)
        if slot.is_int:
            values = [
                str(rng.choice([rng.randint(0, 99), rng.randint(0, 2**64 - 1), -rng.randint(0, 2**63)]))
                for _ in range(n)
            ]
        else:
            values = [
                rng.choice([f"{rng.uniform(-1e3, 1e3):.6f}", str(rng.randint(-9, 9)), f"{rng.random():.17g}"])
                for _ in range(n)
            ]
        parts.append(f"{n} {' '.join(values)}")
    return " ".join(parts)


def _python_reading(line: str, slots) -> list[list]:
    """The oracle: each slot's values read one by one with Python's int (as uint64) and float (to float32)."""
    words, pos, out = line.split(), 0, []
    for slot in slots:
        n = int(words[pos])
        raw = words[pos + 1 : pos + 1 + n]
        pos += 1 + n
        out.append([int(w) % 2**64 if slot.is_int else float(np.float32(float(w))) for w in raw])
    return out


def _rows(cols, k, slot) -> list[list]:
    rows = cols.data[k].reshape(cols.n, -1).tolist() if slot.dense else sparse_rows(cols, k)
    return [[v % 2**64 if slot.is_int else v for v in row] for row in rows]


def test_random_lines_read_as_the_python_oracle_reads_them():
    rng = random.Random(7)
    slots = (Slot("f", "float32", dense=False), DENSE2, IDS, Slot("i2", "int64", dense=True, row_shape=(3,)))
    lines = [_random_line(rng, slots) for _ in range(300)]
    cols = parse("\n".join(lines) + "\n", slots)
    assert cols.n == len(lines)
    want = [_python_reading(line, slots) for line in lines]
    for k, slot in enumerate(slots):
        assert _rows(cols, k, slot) == [w[k] for w in want], slot.name


def test_random_corruptions_are_refused_exactly_where_the_line_by_line_reading_refuses():
    rng = random.Random(11)
    lines = [_random_line(rng, SLOTS) for _ in range(400)]
    for i in range(0, 400, 3):
        words = lines[i].split()
        words[rng.randrange(len(words))] = rng.choice(["x", "0", "1.5", "-", "", "99", "1e400", "3 3", "1-2"])
        lines[i] = " ".join(words)
    stream = io.StringIO()
    log = BadLineLog(shown=1000, stream=stream)
    cols = parse("\n".join(lines) + "\n", SLOTS, log=log)
    refused = {i for i, line in enumerate(lines) if describe_line(line.encode(), SLOTS) is not None}
    assert 0 < len(refused) and log.count == len(refused) and cols.n == len(lines) - len(refused)
    assert {int(n) - 1 for n in re.findall(r"part-3:(\d+):", stream.getvalue())} == refused


MALFORMED = [
    ("2 0.5 1.5 2 11 abc 1 0", "slot 'ids' value 2: expected an integer id, got 'abc'"),
    ("2 0.5 x 1 11 1 0", "slot 'd' value 2: expected a number, got 'x'"),
    ("2 0.5 1.5 0 1 0", "slot 'ids': the number of ids can not be zero, you need padding it in data generator"),
    ("2 0.5 1.5 5 11 12 1 0", "slot 'ids' declares 5 values but the line ends after 4"),
    ("2 0.5 1.5 9 11 12", "slot 'ids' declares 9 values but the line ends after 2"),
    ("3 0.5 1.5 2.5 1 11 1 0", "slot 'd' is dense with 2 values per sample (shape [2]); expected the count 2, got 3"),
    ("2 0.5 1.5 1 11 1 0 7 7", "2 token(s) left over after the last slot 'label'"),
    ("2 0.5 1.5 1 11", "the line ends before slot 'label' (slot 3 of 3)"),
    ("", "the line is empty"),
    ("two 0.5 1.5 1 11 1 0", "slot 'd': expected a count of values, got 'two'"),
    ("2 0.5 1.5 1 18446744073709551616 1 0", "slot 'ids' value 1: expected an int64 id in"),
    ("2 0.5 1.5 1 -9223372036854775809 1 0", "slot 'ids' value 1: expected an int64 id in"),
]


@pytest.mark.parametrize("line, reason", MALFORMED)
def test_a_malformed_line_raises_with_its_file_and_line_number(line, reason):
    text = "2 0.5 1.5 1 11 1 0\n" * 16 + line + "\n2 0.5 1.5 1 11 1 0\n"
    with pytest.raises(BadLineError) as info:
        parse(text)
    assert str(info.value).startswith(f"part-3:17: {reason}")
    assert info.value.line == 17 and info.value.source == "part-3"


@pytest.mark.parametrize("line, reason", MALFORMED)
def test_a_malformed_line_is_skipped_with_a_warning_naming_it(line, reason):
    stream = io.StringIO()
    log = BadLineLog(stream=stream)
    cols = parse("2 0.5 1.5 1 11 1 0\n" + line + "\n2 2.5 3.5 1 12 1 1\n", log=log, first_line=40)
    assert cols.n == 2 and sparse_rows(cols, 1) == [[11], [12]]
    assert log.count == 1
    assert f"part-3:41: {reason}" in stream.getvalue()


def test_skipping_shows_the_first_ten_lines_then_a_count():
    stream = io.StringIO()
    log = BadLineLog(stream=stream)
    parse("2 0.5 1.5 0 1 0\n" * 25 + "2 0.5 1.5 1 11 1 0\n", log=log)
    log.summary()
    out = stream.getvalue().splitlines()
    assert len(out) == 11 and "part-3:10:" in out[9]
    assert out[-1] == "dataset: skipped 25 malformed lines in all (the first 10 shown)"


def test_tabs_carriage_returns_and_runs_of_spaces_separate_tokens():
    cols = parse("2\t0.5  1.5 1 11 1 0\r\n  2 1 2 1 12 1 1  \r\n")
    assert sparse_rows(cols, 1) == [[11], [12]] and cols.data[0].tolist() == [[0.5, 1.5], [1.0, 2.0]]
