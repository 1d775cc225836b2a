"""Kernels of the parameter-server ops that run without a network: the row splits."""

from __future__ import annotations

import numpy as np

from fleetgraph.ir import get_op_def
from fleetgraph.ops import SelectedRows


def test_split_selected_rows_renumbers_rows_per_block():
    grad = SelectedRows(np.array([0, 4, 2, 5, 4]), np.arange(10.0).reshape(5, 2), height=6)
    kernel = get_op_def("split_selected_rows").kernel
    first, second = kernel(np, grad, height_sections=[3, 3])
    assert first.rows.tolist() == [0, 2] and first.height == 3
    np.testing.assert_array_equal(first.value, [[0, 1], [4, 5]])
    assert second.rows.tolist() == [1, 2, 1] and second.height == 3
    np.testing.assert_array_equal(second.value, [[2, 3], [6, 7], [8, 9]])


def test_split_byref_returns_views_without_copying():
    x = np.arange(12.0).reshape(6, 2)
    parts = get_op_def("split_byref").kernel(np, x, sections=[4, 2], num=0, axis=0)
    assert [p.shape for p in parts] == [(4, 2), (2, 2)]
    assert all(np.shares_memory(p, x) for p in parts)
