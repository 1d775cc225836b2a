"""The MultiSlot text format: per line, for each slot of `use_var` in order, a count then that many values.

`3 0.1 0.2 0.3 2 17 4 1 0` gives slot 1 three floats, slot 2 two ids, slot 3 one label. A variable with
lod_level 0 is a dense slot: every sample gives exactly prod(row_shape) values (row_shape: its shape
without a leading -1). A variable with lod_level >= 1 is a sparse slot: a sample gives one value or
more (Paddle refuses 0). Integer ids may span the unsigned 64-bit range; Paddle reinterprets such a
feasign as int64, and so do we.

`MultiSlotParser.parse` reads a chunk of many lines at once (see tokens.py): step 1 finds the tokens,
step 2 walks the slots in order over all lines together (the count at each line's position says
where the next slot starts), step 3 reads the values of each dtype in one gather, step 4 sets the
malformed lines apart and describes them by re-reading them one by one (`describe_line`), which is
also the reference the vectorized walk agrees with.
"""

from __future__ import annotations

import math
import sys
import threading
from dataclasses import dataclass

import numpy as np

from .columns import Columns
from .errors import BadLineError, DatasetError
from .tokens import FLOAT_RE, INT_RANGE, INT_RE, SPACES, Tokens

DTYPES = ("float32", "int64", "int32")
FORMAT_HINT = "expected <count> then that many values per slot"


@dataclass(frozen=True)
class Slot:
    """One variable of use_var as the parser sees it."""

    name: str
    dtype: str
    dense: bool
    row_shape: tuple[int, ...] = ()

    @property
    def width(self) -> int:
        """Values per sample of a dense slot."""
        return math.prod(self.row_shape)

    @property
    def is_int(self) -> bool:
        return self.dtype != "float32"


def slots_from_vars(use_var) -> tuple[Slot, ...]:
    """The slots of `use_var` (Variables with name, shape, dtype and lod_level), checked."""
    slots, seen = [], set()
    for var in use_var:
        try:
            name, shape, dtype, lod_level = var.name, list(var.shape), str(var.dtype), int(var.lod_level)
        except AttributeError:
            raise DatasetError(f"use_var: expected Variables (from paddle.static.data), got {var!r}") from None
        dtype = dtype.rsplit(".", 1)[-1].lower()
        if name in seen:
            raise DatasetError(f"use_var: variable {name!r} appears twice; expected each variable once")
        seen.add(name)
        if dtype not in DTYPES:
            raise DatasetError(
                f"use_var {name!r}: a MultiSlot file cannot carry dtype {dtype}; expected one of {', '.join(DTYPES)}"
            )
        if lod_level > 0:
            slots.append(Slot(name, dtype, dense=False))
            continue
        row = shape[1:] if shape and shape[0] in (-1, None) else shape
        if any(d is None or d < 0 for d in row):
            raise DatasetError(
                f"use_var {name!r}: a dense slot (lod_level 0) needs a fixed number of values per sample; "
                f"expected a shape like [-1, 13], got {shape}"
            )
        slots.append(Slot(name, dtype, dense=True, row_shape=tuple(int(d) for d in row)))
    return tuple(slots)


class BadLineLog:
    """Malformed lines skipped during one pass: the first `shown` go to stderr with file:line and
    reason, then only a count; `summary()` tells how many there were in all."""

    def __init__(self, shown: int = 10, stream=None) -> None:
        self.shown, self.count = shown, 0
        self._stream = stream
        self._lock = threading.Lock()

    def wants_reasons(self) -> bool:
        return self.count < self.shown

    def report(self, error: BadLineError) -> None:
        with self._lock:
            self.count += 1
            show = self.count <= self.shown
        if show:
            self._write(f"dataset: skipping a malformed line: {error}\n")

    def summary(self) -> None:
        if self.count > self.shown:
            self._write(f"dataset: skipped {self.count} malformed lines in all (the first {self.shown} shown)\n")

    def _write(self, text: str) -> None:
        (self._stream or sys.stderr).write(text)


class MultiSlotParser:
    """Chunks of MultiSlot lines -> Columns; a malformed line raises BadLineError or, with a log
    (on_bad_line="skip"), is reported there and left out."""

    def __init__(self, slots: tuple[Slot, ...], log: BadLineLog | None = None) -> None:
        if not slots:
            raise DatasetError("dataset: use_var is empty; expected the variables each line fills, in order")
        self.slots, self.log = slots, log

    def empty(self) -> Columns:
        """No samples, with each slot's dtype and row shape."""
        data = [np.zeros((0, *s.row_shape), s.dtype) if s.dense else np.zeros(0, s.dtype) for s in self.slots]
        offsets = [None if s.dense else np.zeros(1, np.int64) for s in self.slots]
        return Columns(0, data, offsets)

    def parse(self, buf: bytearray, source: str, first_line: int) -> Columns:
        """`buf`: PAD spaces, then whole lines, each ending in a newline; line numbers start at first_line."""
        tokens = Tokens(buf)  # step 1
        good, first, count = self._walk(tokens)
        while True:
            values, bad_tokens = self._values(tokens, good, first, count)
            if bad_tokens.size == 0:
                break
            good[tokens.line_of(bad_tokens)] = False  # rare: redo without those lines
        self._set_apart(tokens, np.flatnonzero(~good), source, first_line)
        return self._columns(good, count, values)

    def _walk(self, tokens: Tokens) -> tuple[np.ndarray, list[np.ndarray], list[np.ndarray]]:
        """Step 2: for each slot, every line's first value token and count; lines that break the
        format drop out (their position moves to the never-valid token at the end)."""
        invalid = tokens.count
        end = tokens.line_end
        good = end > tokens.line_start
        pos = np.where(good, tokens.line_start, invalid)
        firsts, counts = [], []
        for slot in self.slots:
            count = tokens.small[pos].astype(np.int64)
            ok = tokens.small_ok[pos] & (count == slot.width if slot.dense else count > 0)
            after = pos + 1 + count
            ok &= after <= end
            good &= ok
            firsts.append(pos + 1)
            counts.append(count)
            pos = np.where(ok, after, invalid)
        good &= pos == end
        return good, firsts, counts

    def _values(self, tokens: Tokens, good, first, count) -> tuple[list[np.ndarray], np.ndarray]:
        """Step 3: the value tokens of the good lines, read in one gather per dtype."""
        index = []
        for slot, f, c in zip(self.slots, first, count):
            f = f[good]
            if slot.dense:
                index.append((f[:, None] + np.arange(slot.width)).reshape(-1))
            else:
                c = c[good]
                offsets = np.cumsum(c) - c
                index.append(np.repeat(f - offsets, c) + np.arange(int(c.sum())))
        values: list = [None] * len(self.slots)
        bad = []
        for dtype in DTYPES:
            which = [k for k, slot in enumerate(self.slots) if slot.dtype == dtype]
            if not which:
                continue
            joined = np.concatenate([index[k] for k in which])
            got, ok = tokens.floats(joined) if dtype == "float32" else tokens.ints(joined, dtype)
            bad.append(joined[~ok])
            parts = np.split(got, np.cumsum([len(index[k]) for k in which])[:-1])
            for k, part in zip(which, parts):
                values[k] = part
        return values, np.concatenate(bad)

    def _columns(self, good, count, values) -> Columns:
        data, offsets = [], []
        n = int(good.sum())
        for slot, c, v in zip(self.slots, count, values):
            if slot.dense:
                data.append(v.reshape((n, *slot.row_shape)))
                offsets.append(None)
            else:
                data.append(v)
                offsets.append(np.concatenate([[0], np.cumsum(c[good])]))
        return Columns(n, data, offsets)

    def _set_apart(self, tokens: Tokens, bad_lines: np.ndarray, source: str, first_line: int) -> None:
        """Step 4: raise for the first malformed line, or report each to the log."""
        for line in bad_lines:
            if self.log is not None and not self.log.wants_reasons():
                self.log.report(BadLineError(source, first_line + int(line), "malformed"))
                continue
            reason = describe_line(tokens.line_text(int(line)), self.slots)
            if reason is None:  # the two readings of the format disagree: a bug here, not in the data
                raise RuntimeError(
                    f"multislot: internal error: {source}:{first_line + int(line)} refused, yet reads well"
                )
            error = BadLineError(source, first_line + int(line), reason)
            if self.log is None:
                raise error
            self.log.report(error)


def describe_line(line: bytes, slots: tuple[Slot, ...]) -> str | None:
    """Why one line is not in the MultiSlot format for `slots`, or None when it is."""
    words = [w.decode("utf-8", "replace") for w in SPACES.split(line) if w]
    if not words:
        return f"the line is empty; {FORMAT_HINT}"
    pos = 0
    for k, slot in enumerate(slots):
        where = f"slot {slot.name!r}"
        if pos == len(words):
            return f"the line ends before {where} (slot {k + 1} of {len(slots)}); {FORMAT_HINT}"
        token = words[pos]
        if not INT_RE.match(token.encode()) or token[0] in "+-":
            return f"{where}: expected a count of values, got {token!r}; {FORMAT_HINT}"
        count = int(token)
        have = len(words) - pos - 1
        if len(token) > 8 and count <= have:
            return f"{where}: expected a count of at most 8 digits, got {token!r}; {FORMAT_HINT}"
        if slot.dense and count != slot.width:
            return (
                f"{where} is dense with {slot.width} values per sample (shape {list(slot.row_shape)}); "
                f"expected the count {slot.width}, got {count}"
            )
        if count == 0:
            return (
                f"{where}: the number of ids can not be zero, you need padding it in data generator; "
                "expected a count >= 1, got 0"
            )
        if count > have:
            return f"{where} declares {count} values but the line ends after {have}; {FORMAT_HINT}"
        for i, value in enumerate(words[pos + 1 : pos + 1 + count]):
            problem = _bad_value(value, slot)
            if problem:
                return f"{where} value {i + 1}: {problem}"
        pos += 1 + count
    if pos != len(words):
        return (
            f"{len(words) - pos} token(s) left over after the last slot {slots[-1].name!r}; "
            f"expected <count> then that many values for each of the {len(slots)} slots"
        )
    return None


def _bad_value(token: str, slot: Slot) -> str | None:
    if not slot.is_int:
        return None if FLOAT_RE.match(token.encode()) else f"expected a number, got {token!r}"
    if not INT_RE.match(token.encode()):
        return f"expected an integer id, got {token!r}"
    low, high = INT_RANGE[slot.dtype]
    if not low <= int(token) <= high:
        return f"expected an {slot.dtype} id in [{low}, {high}] (unsigned ids are reinterpreted), got {token}"
    return None
