"""LoDTensor: a batch of variable-length sequences, as one array of rows plus offsets.

`data` stacks the rows of every sequence; `levels` holds one int64 offset array per LoD level
(Paddle's offset-based LoD): level k's offsets index entries of level k + 1, the last level's index
rows of `data`. lengths [[2, 3]] over 5 rows are the offsets [[0, 2, 5]]. A LoDTensor with no levels
is a plain tensor that a sequence op refuses. The methods named as Paddle's (`lod()`,
`set_recursive_sequence_lengths`, `shape()`, `np.array(t)`) let scripts use it as they use Paddle's.
"""

from __future__ import annotations

import numpy as np

from ..ir.errors import FleetgraphError


class LoDError(FleetgraphError, ValueError):
    """A LoD that does not describe its data."""


class LoDTensor:
    __slots__ = ("data", "levels")

    def __init__(self, data=None, lod=()) -> None:
        if data is not None and not isinstance(data, np.ndarray) and not hasattr(data, "__array_namespace__"):
            data = np.asarray(data)  # lists, scalars; an array of another array module (a GPU's) stays there
        self.data = data if not isinstance(data, np.ndarray) else np.asarray(data)
        self.levels: tuple[np.ndarray, ...] = tuple(np.asarray(level, dtype=np.int64) for level in lod)

    # -- Paddle's surface ------------------------------------------------------------------------
    def set(self, array, place=None) -> None:
        """A copy of `array` as the rows (in the array module of `place`, a GPU's when given); the LoD
        stays, as Paddle's set() leaves it."""
        self.data = placed(array, place)

    def _set_dims(self, dims) -> None:
        """Paddle's resize before an `_alloc_*`: the new shape, holding zeros until then."""
        self.data = np.zeros([int(d) for d in dims], dtype=self.data.dtype if self.data is not None else np.float32)

    def _alloc_float(self, place=None) -> None:
        self.data = placed(np.zeros(self._get_dims(), np.float32), place)

    def _alloc_int(self, place=None) -> None:
        self.data = placed(np.zeros(self._get_dims(), np.int32), place)

    def _get_dims(self) -> list[int]:
        if self.data is None:
            raise LoDError("LoDTensor: it holds no data yet; expected set() or _set_dims() first")
        return list(self.data.shape)

    def lod(self) -> list[list[int]]:
        return [level.tolist() for level in self.levels]

    def set_lod(self, lod) -> None:
        levels = tuple(np.asarray(level, dtype=np.int64) for level in lod)
        check_lod(levels, _rows(self.data), "set_lod")
        self.levels = levels

    def recursive_sequence_lengths(self) -> list[list[int]]:
        return [np.diff(level).tolist() for level in self.levels]

    def set_recursive_sequence_lengths(self, lengths) -> None:
        self.set_lod(offsets_from_lengths(lengths))

    def has_valid_recursive_sequence_lengths(self) -> bool:
        try:
            check_lod(self.levels, _rows(self.data), "")
        except LoDError:
            return False
        return True

    def shape(self) -> list[int]:
        return self._get_dims()

    def _dtype(self):
        return self.data.dtype

    @property
    def dtype(self):
        return self.data.dtype

    def __array__(self, dtype=None, copy=None):
        return self.data if dtype is None else self.data.astype(dtype)

    def __len__(self) -> int:
        return self.data.shape[0]

    def __getitem__(self, index) -> LoDTensor:
        """A slice of the rows as a tensor without LoD, as Paddle's Tensor slicing gives."""
        return LoDTensor(np.array(self.data[index]))

    def __repr__(self) -> str:
        return f"LoDTensor(lod={self.lod()}, data={self.data!r})"

    # -- for kernels -----------------------------------------------------------------------------
    @property
    def offsets(self) -> np.ndarray:
        """The last level's offsets: sequence i is rows offsets[i]:offsets[i + 1] of `data`."""
        return self.levels[-1]

    def with_data(self, data) -> LoDTensor:
        """Other rows under the same LoD (an op that maps rows to rows keeps the sequences)."""
        out = LoDTensor.__new__(LoDTensor)
        out.data, out.levels = data, self.levels
        return out


class LoDTensorArray(list):
    """`fluid.LoDTensorArray`: the value of a tensor-array variable, a list of LoDTensors."""

    def append(self, tensor) -> None:
        if not isinstance(tensor, LoDTensor):
            raise TypeError(f"LoDTensorArray.append: expected a LoDTensor, got {type(tensor).__name__}")
        super().append(tensor)


def placed(array, place=None):
    """A copy of `array` in the array module of `place` (NumPy without one, or for the CPU)."""
    value = np.array(array)
    module = getattr(place, "array_module", None)
    return value if module is None else module().asarray(value)


def one_row_each(offsets: np.ndarray, rows) -> bool:
    """Every sequence holds exactly one row (offsets 0, 1, ..., n)."""
    return len(offsets) == len(rows) + 1 and (len(rows) == 0 or bool((offsets[1:] - offsets[:-1] == 1).all()))


def _rows(data) -> int:
    return 0 if data is None or len(data.shape) == 0 else data.shape[0]


def offsets_from_lengths(lengths) -> list[np.ndarray]:
    """Paddle's recursive sequence lengths [[2, 3]] -> offsets [[0, 2, 5]]."""
    out = []
    for level in lengths:
        level = np.asarray(level, dtype=np.int64).reshape(-1)
        if level.size and level.min() < 0:
            raise LoDError(f"sequence lengths {level.tolist()}: expected lengths >= 0")
        out.append(np.concatenate([np.zeros(1, np.int64), np.cumsum(level)]))
    return out


def check_lod(levels, rows: int, where: str) -> None:
    """Each level starts at 0 and never decreases; each ends where the next level (or the data) ends."""
    prefix = f"{where}: " if where else ""
    for k, level in enumerate(levels):
        if level.ndim != 1 or level.size == 0 or level[0] != 0 or (np.diff(level) < 0).any():
            raise LoDError(
                f"{prefix}LoD level {k} {level.tolist()}: expected offsets starting at 0 and never decreasing"
            )
        end = rows if k == len(levels) - 1 else len(levels[k + 1]) - 1
        what = "the data has" if k == len(levels) - 1 else f"level {k + 1} has"
        if level[-1] != end:
            raise LoDError(f"{prefix}LoD level {k} ends at {int(level[-1])}, but {what} {end} rows")


def create_lod_tensor(data, recursive_seq_lens, place=None) -> LoDTensor:
    """`fluid.create_lod_tensor`: from a LoDTensor, an array, or a list of sequences (each a list of
    values, stored one per row as Paddle does), with the given sequence lengths."""
    if isinstance(data, LoDTensor):
        data = data.data
    if isinstance(data, list):
        lengths = [len(seq) for seq in data]
        if [lengths] != [list(level) for level in recursive_seq_lens]:
            raise LoDError(
                f"create_lod_tensor: the sequences have lengths {lengths} but recursive_seq_lens is "
                f"{[list(level) for level in recursive_seq_lens]}"
            )
        flat = [value for seq in data for value in seq]
        data = np.array(flat).reshape(-1, 1) if flat else np.zeros((0, 1), dtype=np.int64)
    tensor = LoDTensor(np.asarray(data), offsets_from_lengths(recursive_seq_lens))
    check_lod(tensor.levels, len(tensor.data), "create_lod_tensor")
    return tensor


def create_random_int_lodtensor(recursive_seq_lens, base_shape, place=None, low=0, high=1) -> LoDTensor:
    """`fluid.create_random_int_lodtensor`: int64 values in [low, high] under the given lengths."""
    rows = int(sum(recursive_seq_lens[-1]))
    data = np.random.randint(low, high + 1, size=[rows, *base_shape]).astype(np.int64)
    return create_lod_tensor(data, recursive_seq_lens, place)


def from_sequences(samples, lod_level: int, dtype: str, row_shape, where: str) -> LoDTensor:
    """Nested lists (one entry per sample, `lod_level` levels of nesting) -> a LoDTensor whose rows
    have `row_shape`, as Paddle's DataFeeder builds them."""
    lengths = [[] for _ in range(lod_level)]
    rows: list = []

    def walk(item, depth):
        if depth == lod_level:
            rows.append(item)
            return
        if np.ndim(item) == 0:
            raise LoDError(f"{where}: expected {lod_level} level(s) of sequences, got the value {item!r}")
        lengths[depth].append(len(item))
        for sub in item:
            walk(sub, depth + 1)

    for sample in samples:
        walk(sample, 0)
    try:
        data = np.asarray(rows, dtype=dtype).reshape([-1, *row_shape]) if rows else np.zeros([0, *row_shape], dtype)
    except ValueError as e:
        raise LoDError(f"{where}: sequence items do not have the shape {list(row_shape)} ({e})") from None
    return LoDTensor(data, offsets_from_lengths(lengths))


def strip(value):
    """The rows of a LoDTensor, or the value itself."""
    return value.data if isinstance(value, LoDTensor) else value
