"""Samples stored slot by slot, cut into batches and shuffled with whole-array NumPy operations.

A dense slot is one array [n, *row_shape]; a sparse slot is its values [total] and the offsets
[n + 1] where each sample's values start (sample i: values[offsets[i]:offsets[i + 1]]). A batch is a
slice (views, no copy); a shuffle gathers every slot by one permutation.
"""

from __future__ import annotations

import numpy as np

from ..ops.lod_tensor import LoDTensor
from .errors import DatasetError


class Columns:
    __slots__ = ("n", "data", "offsets")

    def __init__(self, n: int, data: list[np.ndarray], offsets: list[np.ndarray | None]) -> None:
        self.n, self.data, self.offsets = n, data, offsets

    def __len__(self) -> int:
        return self.n

    def slice(self, start: int, stop: int) -> Columns:
        data, offsets = [], []
        for values, off in zip(self.data, self.offsets):
            if off is None:
                data.append(values[start:stop])
                offsets.append(None)
            else:
                part = off[start : stop + 1]
                data.append(values[part[0] : part[-1]])
                offsets.append(part - part[0])
        return Columns(stop - start, data, offsets)

    def take(self, index: np.ndarray) -> Columns:
        """The samples at `index`, in that order."""
        data, offsets = [], []
        for values, off in zip(self.data, self.offsets):
            if off is None:
                data.append(values[index])
                offsets.append(None)
                continue
            lengths = (off[1:] - off[:-1])[index]
            new = np.concatenate([[0], np.cumsum(lengths)])
            # each taken sample's values: its old start, then consecutive positions
            source = np.repeat(off[index] - new[:-1], lengths) + np.arange(new[-1])
            data.append(values[source])
            offsets.append(new)
        return Columns(len(index), data, offsets)

    @staticmethod
    def concat(parts: list[Columns]) -> Columns:
        if len(parts) == 1:
            return parts[0]
        data, offsets = [], []
        for k, off in enumerate(parts[0].offsets):
            data.append(np.concatenate([p.data[k] for p in parts]))
            if off is None:
                offsets.append(None)
            else:
                lengths = np.concatenate([np.diff(p.offsets[k]) for p in parts])
                offsets.append(np.concatenate([[0], np.cumsum(lengths)]))
        return Columns(sum(p.n for p in parts), data, offsets)

    def feed(self, names: list[str]) -> dict:
        """{name: ndarray [n, *row_shape] for a dense slot, LoDTensor [total, 1] for a sparse one}."""
        out = {}
        for name, values, off in zip(names, self.data, self.offsets):
            out[name] = values if off is None else LoDTensor(values.reshape(-1, 1), (off,))
        return out

    def freeze(self) -> Columns:
        """The same samples, read-only: batches served again each epoch cannot be changed by a consumer."""
        for array in (*self.data, *(o for o in self.offsets if o is not None)):
            array.flags.writeable = False
        return self

    # -- exchange between trainers: a list of plain arrays, no pickle ---------------------------
    def to_arrays(self) -> list[np.ndarray]:
        """Per slot: the dense array, or the lengths [n] (int64) then the values."""
        out = []
        for values, off in zip(self.data, self.offsets):
            out.extend([values] if off is None else [np.diff(off), values])
        return out

    @staticmethod
    def from_arrays(arrays: list[np.ndarray], like: Columns, where: str) -> Columns:
        """Columns shaped like `like` from `to_arrays()` output, every size checked first."""
        want = sum(1 if off is None else 2 for off in like.offsets)
        if len(arrays) != want:
            raise DatasetError(f"{where}: expected {want} arrays, got {len(arrays)}")
        arrays = [np.asarray(a) for a in arrays]
        n = len(arrays[0])
        data, offsets, i = [], [], 0
        for values, off in zip(like.data, like.offsets):
            if off is None:
                got = arrays[i]
                if got.shape[1:] != values.shape[1:] or got.dtype != values.dtype or len(got) != n:
                    raise DatasetError(
                        f"{where}: expected a {values.dtype} array [{n}, {', '.join(map(str, values.shape[1:]))}],"
                        f" got {got.dtype} {list(got.shape)}"
                    )
                data.append(got)
                offsets.append(None)
                i += 1
                continue
            lengths, got = arrays[i].astype(np.int64, copy=False), arrays[i + 1]
            if lengths.shape != (n,) or (lengths < 1).any() or got.dtype != values.dtype or len(got) != lengths.sum():
                raise DatasetError(f"{where}: sparse slot sizes do not match ({n} samples, {len(got)} values)")
            data.append(got)
            offsets.append(np.concatenate([[0], np.cumsum(lengths)]))
            i += 2
        return Columns(n, data, offsets)


class BatchCutter:
    """Columns in, batches of `batch_size` out; samples left over wait for the next Columns."""

    def __init__(self, batch_size: int) -> None:
        self.batch_size = batch_size
        self._pending: Columns | None = None

    def add(self, cols: Columns):
        """Yield every full batch the samples so far make."""
        start = 0
        if self._pending is not None:
            need = self.batch_size - self._pending.n
            if cols.n < need:
                self._pending = Columns.concat([self._pending, cols])
                return
            yield Columns.concat([self._pending, cols.slice(0, need)])
            self._pending, start = None, need
        while cols.n - start >= self.batch_size:
            yield cols.slice(start, start + self.batch_size)
            start += self.batch_size
        if start < cols.n:
            self._pending = cols.slice(start, cols.n)

    def rest(self) -> Columns | None:
        """The last, smaller batch (None when nothing is left)."""
        rest, self._pending = self._pending, None
        return rest
