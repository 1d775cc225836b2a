"""DataFeeder: turns a minibatch (a list of sample tuples) into the executor's feed dict."""

from __future__ import annotations

import numpy as np

from ..ir import FleetgraphError, ShapeError, default_main_program
from ..ir.program import Variable
from ..ops.lod_tensor import LoDTensor, from_sequences


class DataFeeder:
    def __init__(self, feed_list, place=None, program=None) -> None:
        program = program or default_main_program()
        self.feed_vars: list[Variable] = [
            v if isinstance(v, Variable) else program.global_block().var(v) for v in feed_list
        ]
        self.place = place

    def feed(self, minibatch) -> dict[str, np.ndarray | LoDTensor]:
        """One value per variable: its samples stacked, shaped like the variable, in its dtype; for a
        variable with lod_level > 0 each sample's field is a sequence and the value a LoDTensor."""
        columns = list(zip(*minibatch))
        if len(columns) != len(self.feed_vars):
            raise FleetgraphError(
                f"DataFeeder: each sample has {len(columns)} fields, expected "
                f"{len(self.feed_vars)} ({', '.join(v.name for v in self.feed_vars)})"
            )
        return {v.name: self._column(v, col) for v, col in zip(self.feed_vars, columns)}

    @staticmethod
    def _column(var: Variable, column) -> np.ndarray | LoDTensor:
        if var.lod_level > 0:
            # Paddle's DataFeeder: `[id1, id2]` per sample for a [-1, 1] variable, one id per row
            return from_sequences(column, var.lod_level, var.dtype, var.shape[1:], f"DataFeeder: {var.name!r}")
        array = np.asarray(column, dtype=var.dtype)
        sample_shape = [len(column)] + [d for d in var.shape[1:]]
        try:
            return array.reshape(sample_shape)
        except ValueError:
            raise ShapeError(
                f"DataFeeder: {var.name!r} expected samples of shape {list(var.shape[1:])}, got {list(array.shape[1:])}"
            ) from None

    def feed_parallel(self, iterable, num_places=None):
        return [self.feed(mb) for mb in iterable]
