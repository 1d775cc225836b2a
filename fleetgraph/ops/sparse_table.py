"""SparseTable: a [height, width] table whose rows exist only once an id has touched them.

A CTR model's embedding has 10,000,001 rows, of which a run sees a few million at most; a table on
the pservers (or a GEO trainer's local copy) keeps just those, so its memory grows with the ids seen,
not with the height. A new row takes the value the table's initializer gives that row in a dense
init of the whole table (random inits are counter-based, ops/counter_rng.py), so a lazily grown
table and a dense one hold the same numbers wherever both have a row.

Ids map to row positions through `IdIndex`, an open-addressing hash table kept in NumPy arrays and
probed for a whole batch at a time: a slot holds a position only (an int32; its id is `ids[position]`),
and at most a quarter of the slots are used: at half, a batch of 1,300 ids took 16 rounds of probes
(long linear-probing runs), at a quarter 5, and its lookups 40% less time. Optimizer state shaped
like a table (Adam's moments) shares the table's index: its rows are created, in the same positions,
when the optimizer first reads them.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from ..ir.errors import FleetgraphError
from .counter_rng import CounterRNG, _mix, derive_key, draw_rows

_EMPTY = -1
MAX_ROWS = 2**31 - 2  # positions are int32 in the index's slots


class IdIndex:
    """int64 ids -> positions 0, 1, 2, ... in the order they were first seen."""

    def __init__(self, capacity: int = 1024) -> None:
        self.ids = self._id_array(capacity)  # position -> id
        self.size = 0
        self._rehash(capacity)

    @staticmethod
    def _id_array(capacity: int) -> np.ndarray:
        """Room for capacity // 4 ids, then -1 (no id): what an empty slot's position (-1) reads."""
        ids = np.empty(capacity // 4 + 1, dtype=np.int64)
        ids[-1] = _EMPTY
        return ids

    def __len__(self) -> int:
        return self.size

    @property
    def nbytes(self) -> int:
        return self.ids.nbytes + self._pos.nbytes

    def find(self, ids: np.ndarray) -> np.ndarray:
        """Positions of `ids`, -1 where an id is absent."""
        out = np.full(len(ids), _EMPTY, dtype=np.int64)
        pending, slot = np.arange(len(ids)), self._slot(ids)
        while pending.size:
            pos = self._pos[slot]
            hit = self.ids[pos] == ids[pending]  # an empty slot reads -1, never an id
            out[pending[hit]] = pos[hit]
            probe = (pos != _EMPTY) & ~hit  # an occupied slot of another id: look at the next one
            pending, slot = pending[probe], (slot[probe] + 1) & self._mask
        return out

    def add(self, new_ids: np.ndarray) -> np.ndarray:
        """Give distinct absent ids the next positions; returns them."""
        if self.size + len(new_ids) > MAX_ROWS:
            raise FleetgraphError(f"sparse table: more than {MAX_ROWS} rows in one table (one pserver's block)")
        if self.size + len(new_ids) > len(self.ids) - 1:
            self._grow(self.size + len(new_ids))
        positions = np.arange(self.size, self.size + len(new_ids))
        self.ids[positions] = new_ids
        self.size += len(new_ids)
        self._place(new_ids, positions)
        return positions

    def _place(self, ids: np.ndarray, positions: np.ndarray) -> None:
        pending, slot = positions, self._slot(ids)
        while pending.size:
            free = self._pos[slot] == _EMPTY
            # of several ids reaching one free slot in this round, one takes it: whichever the
            # assignment left there (read back, so no order of NumPy's writes is assumed)
            self._pos[slot[free]] = pending[free]
            rest = self._pos[slot] != pending
            pending, slot = pending[rest], (slot[rest] + 1) & self._mask

    def _slot(self, ids: np.ndarray) -> np.ndarray:
        return (_mix(ids.astype(np.uint64)) & np.uint64(self._mask)).astype(np.int64)

    def _grow(self, needed: int) -> None:
        capacity = len(self._pos)
        while capacity < 4 * needed:
            capacity *= 2
        ids = self._id_array(capacity)
        ids[: self.size] = self.ids[: self.size]
        self.ids = ids
        self._rehash(capacity)
        self._place(self.ids[: self.size], np.arange(self.size))

    def _rehash(self, capacity: int) -> None:
        self._mask = capacity - 1
        self._pos = np.full(capacity, _EMPTY, dtype=np.int32)


@dataclass(frozen=True)
class RowInit:
    """What a new row starts as: an init op's draw for that row (`op_type`, its attrs, the key of the
    whole variable), or a constant."""

    op_type: str  # "fill_constant", "uniform_random", "gaussian_random" or "truncated_gaussian_random"
    attrs: tuple = ()  # sorted (name, value) pairs of the op's attrs
    seed: int = 0
    key_name: str = ""

    def rows(self, global_rows: np.ndarray, width: int, dtype) -> np.ndarray:
        if self.op_type == "fill_constant":
            return np.full((len(global_rows), width), dict(self.attrs).get("value", 0.0), dtype=dtype)
        rng = CounterRNG(derive_key(self.seed, self.key_name))
        return draw_rows(self.op_type, dict(self.attrs), rng, global_rows, width, dtype)


class SparseTable:
    """Rows `offset + id` of a [height, width] variable, created on first touch (see the module)."""

    def __init__(self, height: int, width: int, dtype, init: RowInit, offset: int = 0) -> None:
        self.height, self.width, self.offset = int(height), int(width), int(offset)
        self.dtype = np.dtype(dtype)
        self.init = init
        self.index = IdIndex()
        self._storage = np.empty((0, self.width), dtype=self.dtype)
        self._rows = 0
        self._lock = threading.Lock()  # training threads (train_from_dataset) grow a table together

    @property
    def values(self) -> np.ndarray:
        """The rows that exist, by position (a view: optimizers update it in place)."""
        return self._storage[: self._rows]

    @property
    def shape(self) -> tuple[int, int]:
        return (self.height, self.width)

    def __len__(self) -> int:
        """Rows that exist."""
        return self._rows

    @property
    def nbytes(self) -> int:
        return self._storage.nbytes + self.index.nbytes

    def positions(self, ids) -> np.ndarray:
        """Row positions of `ids` (any int array), creating the rows that do not exist yet."""
        ids = np.asarray(ids, dtype=np.int64).reshape(-1)
        if ids.size and (int(ids.min()) < 0 or int(ids.max()) >= self.height):
            bad = int(ids.min()) if int(ids.min()) < 0 else int(ids.max())
            raise FleetgraphError(f"sparse table: id {bad} is outside the table; expected ids in [0, {self.height})")
        with self._lock:
            positions = self.index.find(ids)
            absent = positions == _EMPTY
            if absent.any():
                missing = ids[absent]
                new = np.unique(missing)
                positions[absent] = self.index.add(new)[np.searchsorted(new, missing)]
            self._sync()
        return positions

    def lookup(self, ids) -> np.ndarray:
        positions = self.positions(ids)
        return self.values[positions]

    def write(self, positions: np.ndarray, rows: np.ndarray) -> None:
        """Set rows in place, kept apart from a growth that copies the storage (a write into the old
        copy would be lost)."""
        with self._lock:
            self._storage[positions] = rows

    def follow(self, other: SparseTable) -> None:
        """Hold a row wherever `other` does, at the same position (an optimizer's state shaped like its
        table): the two share one index, and rows `other` created since are created here."""
        with self._lock:
            if self.index is not other.index:
                if len(self.index):
                    raise FleetgraphError("sparse table: only an empty table can follow another table's rows")
                self.index = other.index
            self._sync()

    def _sync(self) -> None:
        """Create the rows the index has and the values do not (new ids, or a shared index grown)."""
        have, want = self._rows, len(self.index)
        if have == want:
            return
        if want > len(self._storage):
            grown = np.empty((max(want, 2 * len(self._storage), 1024), self.width), dtype=self.dtype)
            grown[:have] = self._storage[:have]
            self._storage = grown
        ids = self.index.ids[have:want]
        self._storage[have:want] = self.init.rows(ids + self.offset, self.width, self.dtype)
        self._rows = want

    def items(self) -> tuple[np.ndarray, np.ndarray]:
        """(ids, rows) of every row that exists, in creation order."""
        n = len(self)
        return self.index.ids[:n].copy(), self.values[:n].copy()

    def to_dense(self) -> np.ndarray:
        """The whole table, untouched rows at their initial values (tests and small tables only)."""
        out = self.init.rows(np.arange(self.offset, self.offset + self.height), self.width, self.dtype)
        ids, rows = self.items()
        out[ids] = rows
        return out

    def __repr__(self) -> str:
        return f"SparseTable({self.height} x {self.width} {self.dtype}, {len(self)} rows)"


class RowFunction:
    """An elementwise function of a table (`scale` or `sign` of it: weight decay), evaluated only at
    the rows a sparse gradient names when `sum` adds it to that gradient. A table the pservers hold
    is thus decayed at the rows a batch touches, not at every row (which the table does not have)."""

    def __init__(self, table: SparseTable, fn) -> None:
        self.table, self.fn = table, fn

    @classmethod
    def of(cls, value, fn) -> RowFunction:
        if isinstance(value, RowFunction):
            return cls(value.table, lambda rows, inner=value.fn: fn(inner(rows)))
        return cls(value, fn)

    def at(self, ids: np.ndarray) -> np.ndarray:
        return self.fn(self.table.lookup(ids))
