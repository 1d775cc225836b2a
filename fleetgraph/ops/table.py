"""Ops of embedding tables that live on the pservers: fake_init, lookup_sparse_table_init and
distributed_lookup_table.

A table looked up sparsely (`embedding(is_sparse=True)`, `is_distributed=True`,
`paddle.static.nn.sparse_embedding`) is kept only by the pservers in parameter-server training. A
trainer's startup gives it a `fake_init` placeholder (its shape, no memory), its forward pass gets the
rows of the batch's ids with `distributed_lookup_table`, and each pserver creates its shard with
`lookup_sparse_table_init`: a SparseTable whose rows appear when ids first touch them.
"""

from __future__ import annotations

import numpy as np

from ..ir import InferContext, register_op
from ..ir.dtypes import convert_dtype
from .lod_tensor import LoDTensor
from .sparse_table import RowInit, SparseTable

# -- fake_init --------------------------------------------------------------------------------------


def _fake_init(xp, *, shape, dtype):
    """A read-only array of `shape` that takes no memory: a trainer never reads a remote table's
    values, only its shape (the sparse gradient's height)."""
    return np.broadcast_to(np.zeros((), dtype=dtype), tuple(shape))


def _shape_from_attrs(ctx: InferContext) -> None:
    ctx.set_output("Out", ctx.attr("shape"), convert_dtype(ctx.attr("dtype")))


register_op(
    "fake_init",
    outputs=("Out",),
    attrs={"shape": [1], "dtype": "float32"},
    infer_shape=_shape_from_attrs,
    kernel=_fake_init,
)

# -- lookup_sparse_table_init -----------------------------------------------------------------------

INIT_ATTRS = ("value", "min", "max", "mean", "std")


def _table_init(xp, *, shape, dtype, offset, init_type, seed, rng_key, value, min, max, mean, std):
    """Rows [offset, offset + shape[0]) of a table, each created on first touch as the table's init op
    (`init_type` with its attrs, the whole variable's key) gives that row."""
    attrs = {"value": value, "min": min, "max": max, "mean": mean, "std": std}
    init = RowInit(init_type, tuple(sorted(attrs.items())), seed, rng_key)
    return SparseTable(shape[0], shape[1], dtype, init, offset)


def _table_init_infer(ctx: InferContext) -> None:
    if len(ctx.attr("shape")) != 2:
        raise ctx.error(f"shape {ctx.attr('shape')}: expected [rows, width]")
    if ctx.attr("init_type") not in ("fill_constant", "uniform_random", "gaussian_random", "truncated_gaussian_random"):
        raise ctx.error(
            f"init_type {ctx.attr('init_type')!r}: expected fill_constant, uniform_random, gaussian_random "
            "or truncated_gaussian_random"
        )
    ctx.set_output("Out", ctx.attr("shape"), convert_dtype(ctx.attr("dtype")), type="selected_rows")


register_op(
    "lookup_sparse_table_init",
    outputs=("Out",),
    attrs={
        "shape": [1, 1],
        "dtype": "float32",
        "offset": 0,
        "init_type": "fill_constant",
        "seed": 0,
        "rng_key": "",
        "value": 0.0,
        "min": -1.0,
        "max": 1.0,
        "mean": 0.0,
        "std": 1.0,
    },
    infer_shape=_table_init_infer,
    kernel=_table_init,
)

# -- distributed_lookup_table ------------------------------------------------------------------------


def _distributed_lookup(
    xp, ids_list, w, *, table_names, height_sections, endpoints, padding_idx, trainer_id, lookup_table_version, ctx
):
    """One prefetch of every distinct id of every input from the pservers holding the table's rows,
    then each output as its lookup op would give it (LoD kept)."""
    v2 = lookup_table_version == "lookup_table_v2"
    arrays, flat = _id_arrays(ids_list)
    unique, inverse = np.unique(np.concatenate(flat), return_inverse=True)
    height, width = int(sum(height_sections)), w.shape[1]
    if unique.size and (unique[0] < 0 or unique[-1] >= height):
        _refuse_ids_outside(flat, height)
    rows = ctx.comm.ps_client().prefetch(table_names, endpoints, height_sections, unique, trainer_id, width, w.dtype)
    outs, start = [], 0
    for ids, a, f in zip(ids_list, arrays, flat):
        out = rows[inverse[start : start + f.size]]
        start += f.size
        if padding_idx != -1:
            out[f == padding_idx] = 0
        out = out.reshape(tuple(a.shape if v2 else a.shape[:-1]) + (width,))
        outs.append(ids.with_data(out) if isinstance(ids, LoDTensor) else out)
    return outs


def _id_arrays(ids_list) -> tuple[list, list[np.ndarray]]:
    arrays = [ids.data if isinstance(ids, LoDTensor) else ids for ids in ids_list]
    return arrays, [np.asarray(a).reshape(-1).astype(np.int64) for a in arrays]


def distinct_ids(ids_list, height: int) -> np.ndarray | None:
    """The sorted distinct ids a distributed_lookup_table over `ids_list` prefetches; None when one
    is outside the table (the lookup itself says which)."""
    unique = np.unique(np.concatenate(_id_arrays(ids_list)[1]))
    return None if unique.size and (unique[0] < 0 or unique[-1] >= height) else unique


def _refuse_ids_outside(flat: list[np.ndarray], height: int) -> None:
    for i, ids in enumerate(flat):
        outside = np.flatnonzero((ids < 0) | (ids >= height))
        if outside.size:
            at = int(outside[0])
            raise IndexError(
                f"id {int(ids[at])} of Ids[{i}] (element {at}) is outside the table of {height} rows; "
                f"expected ids in [0, {height})"
            )


def _distributed_lookup_infer(ctx: InferContext) -> None:
    w = ctx.input_var("W")
    v2 = ctx.attr("lookup_table_version") == "lookup_table_v2"
    for i, ids in enumerate(ctx.input_vars("Ids")):
        lead = ids.shape if v2 else ids.shape[:-1]
        ctx.set_output("Outputs", tuple(lead) + (w.shape[1],), w.dtype, i=i, lod_level=ids.lod_level)


register_op(
    "distributed_lookup_table",
    inputs=("Ids*", "W"),
    outputs=("Outputs*",),
    attrs={
        "table_names": [],
        "height_sections": [],
        "endpoints": [],
        "padding_idx": -1,
        "trainer_id": 0,
        "lookup_table_version": "lookup_table",
    },
    infer_shape=_distributed_lookup_infer,
    kernel=_distributed_lookup,
    side_effect=True,
    needs_context=True,
    takes_lod=True,
)
