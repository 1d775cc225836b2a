"""Paddle 2.0's gathering and scattering functions (gather, gather_nd, scatter, scatter_, scatter_nd,
scatter_nd_add, shard_index) and its sorted unique, which tensor/manipulation.py lists as Paddle's
python/paddle/tensor/manipulation.py does."""

from __future__ import annotations

import contextlib

from ..dygraph.dispatch import bind
from ..dygraph.mode import eager_guard
from ..dygraph.tensor import Tensor
from ..ir.dtypes import convert_dtype
from ..ir.program import Variable
from ..layers import indexing, tensor_shape
from ..layers import manipulation as fluid_manipulation
from ..layers import tensor as fluid_tensor


def gather(x, index, axis=None, name=None):
    """x's slices at the 1-D index along axis (0 when None); a repeated index adds its gradients."""
    if isinstance(axis, Variable):
        raise NotImplementedError("gather: axis given as a tensor is not supported; pass an int")
    return fluid_manipulation.gather(x, index, overwrite=False, axis=0 if axis is None else int(axis))


def gather_nd(x, index, name=None):
    """x at each index tuple of index's last axis."""
    return tensor_shape.gather_nd(x, index, name)


def scatter(x, index, updates, overwrite=True, name=None):
    """x with its rows at index replaced by updates (summed where an index repeats, without overwrite)."""
    return fluid_manipulation.scatter(x, index, updates, name, overwrite)


def in_place(where: str, x, build):
    """build(x) written back into an eager x, which becomes the result on the tape too (its old
    self, copied, is what the op read), as Paddle 2.0's dygraph in-place ops; a static x: build(x)."""
    if not isinstance(x, Tensor):
        return build(x)
    if x._node is None and not x.stop_gradient:
        raise ValueError(
            f"{where}: x {x.name!r} is a leaf that takes gradients; expected a computed or stop_gradient x"
        )
    before = Tensor.__new__(Tensor)
    before.__dict__.update(x.__dict__)
    out = build(before)
    name = x.__dict__.get("_name")
    x.__dict__.clear()
    x.__dict__.update(out.__dict__)
    if name is not None:
        x._name = name
    return x


def scatter_(x, index, updates, overwrite=True, name=None):
    """scatter, in place on an eager x (out of place on a static one, as Paddle's)."""
    return in_place("scatter_", x, lambda x: scatter(x, index, updates, overwrite, name))


def scatter_nd_add(x, index, updates, name=None):
    """x with each updates slice added at the position its index row names (repeats add up)."""
    return indexing.scatter_nd_add(x, index, updates, name)


def scatter_nd(index, updates, shape, name=None):
    """scatter_nd_add into zeros of shape (made of updates' kind: eager beside an eager updates)."""
    with eager_guard() if isinstance(updates, Tensor) else contextlib.nullcontext():
        zeros = fluid_tensor.fill_constant([int(d) for d in shape], updates.dtype, 0.0)
    return indexing.scatter_nd_add(zeros, index, updates, name)


def shard_index(input, index_num, nshards, shard_id, ignore_value=-1):
    """Ids of shard shard_id (of nshards, each (index_num + nshards - 1) // nshards wide) as their
    offset in it; the other ids become ignore_value."""
    return indexing.shard_index(input, index_num, nshards, shard_id, ignore_value)


def _argsort_ids(x):
    return fluid_manipulation.argsort(x)[1]


def unique(x, return_index=False, return_inverse=False, return_counts=False, axis=None, dtype="int64", name=None):
    """The distinct values of x (flattened) in ascending order; with return_index, the index of
    each one's first occurrence in x; return_inverse, each entry's position among them;
    return_counts, how often each occurs. The first-seen unique op, reordered by sorting."""
    if axis is not None:
        raise NotImplementedError("unique: axis is not supported; unique works on x flattened (axis=None)")
    dtype = convert_dtype(dtype)
    if dtype not in ("int32", "int64"):
        raise TypeError(f"unique: dtype {dtype}; expected int32 or int64")
    flat = fluid_tensor.reshape(x, [-1])
    seen, seen_at, seen_counts = indexing.unique_with_counts(flat, "int64")
    order = _argsort_ids(seen)
    outs = [fluid_manipulation.gather(seen, order)]
    counts = fluid_manipulation.gather(seen_counts, order)
    if return_index:
        starts = bind("cumsum", {"X": [counts]}, {"axis": 0, "exclusive": True})
        outs.append(fluid_manipulation.gather(_argsort_ids(flat), starts))
    if return_inverse:
        outs.append(fluid_manipulation.gather(_argsort_ids(order), seen_at))
    if return_counts:
        outs.append(counts)
    outs = [outs[0]] + [fluid_tensor.cast(o, dtype) for o in outs[1:]]
    for out in outs:
        out.stop_gradient = True
    return outs[0] if len(outs) == 1 else tuple(outs)
