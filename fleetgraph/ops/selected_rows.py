"""SelectedRows: a sparse gradient that holds only some rows of a [height, width] table."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._xp import copy


@dataclass
class SelectedRows:
    rows: np.ndarray  # int64 row ids, may repeat
    value: np.ndarray  # [len(rows), width]
    height: int

    @property
    def shape(self) -> tuple[int, int]:
        return (self.height,) + tuple(self.value.shape[1:])

    @property
    def dtype(self):
        return self.value.dtype

    def to_dense(self, xp):
        out = xp.zeros(self.shape, dtype=self.value.dtype)
        xp.add.at(out, self.rows, self.value)
        return out

    def merged(self, xp) -> SelectedRows:
        """Duplicate rows summed, rows sorted (a sort and one segmented sum: faster than ufunc.at)."""
        rows = np.asarray(self.rows)
        if len(rows) == 0:
            return SelectedRows(rows, self.value, self.height)
        order = np.argsort(rows, kind="stable")
        ordered = rows[order]
        starts = np.flatnonzero(np.concatenate([[True], ordered[1:] != ordered[:-1]]))
        if 2 * len(starts) <= len(rows):  # mostly repeats: one segmented sum over all rows
            value = xp.add.reduceat(self.value[xp.asarray(order)], xp.asarray(starts), axis=0)
        else:  # mostly single rows (a CTR batch): copied, and only the repeated ones summed
            value = self.value[xp.asarray(order[starts])]
            _sum_repeats(xp, value, self.value, order, starts)
        return SelectedRows(ordered[starts], value, self.height)


def _sum_repeats(xp, out, value, order, starts) -> None:
    """out[k] = the sum of the rows order[starts[k]:starts[k + 1]] of `value`, for each k whose segment
    holds more than one row (the same segmented sum as over all rows: bit for bit the same)."""
    lengths = np.diff(np.append(starts, len(order)))
    multi = np.flatnonzero(lengths > 1)
    if not multi.size:
        return
    lens = lengths[multi]
    firsts = np.cumsum(lens) - lens
    within = np.arange(int(lens.sum())) + np.repeat(starts[multi] - firsts, lens)
    out[xp.asarray(multi)] = xp.add.reduceat(value[xp.asarray(order[within])], xp.asarray(firsts), axis=0)


def merge_dense(xp, values):
    """Sum of dense arrays and SelectedRows: SelectedRows if all are sparse, else dense."""
    if all(isinstance(v, SelectedRows) for v in values):
        rows = np.concatenate([np.asarray(v.rows) for v in values])
        return SelectedRows(rows, xp.concatenate([v.value for v in values]), values[0].height)
    dense = [v for v in values if not isinstance(v, SelectedRows)]
    out = copy(xp, dense[0])
    for v in dense[1:]:
        out += v
    for v in values:
        if isinstance(v, SelectedRows):
            xp.add.at(out, v.rows, v.value)
    return out


def to_dense(xp, value):
    return value.to_dense(xp) if isinstance(value, SelectedRows) else value
