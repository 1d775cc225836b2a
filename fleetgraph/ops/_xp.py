"""Array operations kernels call where NumPy's array methods and the array API standard differ:
NumPy's own method on NumPy arrays (its module function dispatches through `__array_function__`,
which costs more than the work on a small array), the standard's function on any other array
module (CuPy, `array_api_strict` in the tests)."""

from __future__ import annotations

import numpy as np


def reshape(xp, x, shape):
    return x.reshape(shape) if xp is np else xp.reshape(x, tuple(shape))


def astype(xp, x, dtype):
    """`x` as `dtype` (a dtype or its name, e.g. 'float32')."""
    if xp is np:
        return x.astype(dtype)
    return xp.astype(x, dtype_of(xp, dtype))


def dtype_of(xp, dtype):
    """The array module's dtype for a dtype or its name ('float32', np.float32, np.dtype('int64'))."""
    if xp is np:
        return np.dtype(dtype)
    if isinstance(dtype, str):
        return getattr(xp, dtype)
    if isinstance(dtype, (type, np.dtype)):  # NumPy's: np.float32, np.dtype('int64')
        return getattr(xp, np.dtype(dtype).name)
    return dtype  # the module's own


def dtype_name(dtype) -> str:
    """'float32' for a dtype of any module: NumPy's and CuPy's have a name, the standard's types
    only print as `<module>.float32`."""
    name = getattr(dtype, "name", None)
    return name if isinstance(name, str) else str(dtype).rsplit(".", 1)[-1]


def full(xp, shape, value, dtype):
    """An array of `shape` filled with `value` (a Python number, taken as the dtype's kind, as
    NumPy's full does) of `dtype` (a dtype or its name)."""
    if xp is np:
        return np.full(shape, value, dtype=dtype)
    dtype = dtype_of(xp, dtype)
    kind = bool if dtype == xp.bool else float if xp.isdtype(dtype, "real floating") else int
    return xp.full(tuple(shape), kind(value), dtype=dtype)


def is_float(xp, x) -> bool:
    return x.dtype.kind == "f" if xp is np else xp.isdtype(x.dtype, "real floating")


def scalar(xp, x, value):
    """`value` as a scalar of x's dtype, for arithmetic with x: NumPy's scalar type, else a Python
    number of x's kind (the standard keeps an array's dtype in arithmetic with a Python scalar)."""
    if xp is np:
        return x.dtype.type(value)
    return float(value) if is_float(xp, x) else int(value)


def mask(xp, m, like):
    """A boolean mask to multiply `like` by: as it is on NumPy, of like's dtype elsewhere (the
    standard does not promote booleans in arithmetic)."""
    return m if xp is np else xp.astype(m, like.dtype)


def scalar_type(xp, x):
    """What makes a scalar of x's dtype from a number (see `scalar`)."""
    if xp is np:
        return x.dtype.type
    return float if is_float(xp, x) else int


def total(xp, x, axis=None, keepdims=False):
    """The sum over `axis` (a method on NumPy)."""
    return x.sum(axis=axis, keepdims=keepdims) if xp is np else xp.sum(x, axis=axis, keepdims=keepdims)


def largest(xp, x, axis=None, keepdims=False):
    return x.max(axis=axis, keepdims=keepdims) if xp is np else xp.max(x, axis=axis, keepdims=keepdims)


def smallest(xp, x, axis=None, keepdims=False):
    return x.min(axis=axis, keepdims=keepdims) if xp is np else xp.min(x, axis=axis, keepdims=keepdims)


def is_array(xp, x) -> bool:
    """Whether `x` is an array of module `xp` (a NumPy scalar is not one of NumPy's)."""
    if xp is np:
        return isinstance(x, np.ndarray)
    namespace = getattr(x, "__array_namespace__", None)
    return namespace is not None and namespace() is xp


def host(a) -> np.ndarray:
    """An array of any module on the host: CuPy's `get`; NumPy and the CPU array API convert."""
    get = getattr(a, "get", None)
    return get() if callable(get) else np.asarray(a)


def copy(xp, x):
    return x.copy() if xp is np else xp.asarray(x, copy=True)


def contiguous(xp, x):
    """`x` laid out C-contiguously where the module has layouts (NumPy, CuPy), else `x`."""
    make = getattr(xp, "ascontiguousarray", None)
    return x if make is None else make(x)


def pad(xp, x, widths, value=0):
    """`x` with `widths[i] = (before, after)` elements of `value` around axis i (np.pad, constant)."""
    if xp is np:
        return np.pad(x, widths, constant_values=value)
    shape = tuple(n + a + b for n, (a, b) in zip(x.shape, widths))
    out = xp.full(shape, value, dtype=x.dtype)
    out[tuple(slice(a, a + n) for n, (a, _) in zip(x.shape, widths))] = x
    return out


def put_along(xp, dst, indices, values, axis: int):
    """`dst` with `values` put at `indices` along `axis` (np.put_along_axis, in place on NumPy):
    the standard has no scatter, so elsewhere each of the k index planes is a `where` over a
    one-hot comparison; k is small (a label, a top-k)."""
    if xp is np:
        np.put_along_axis(dst, indices, values, axis=axis)
        return dst
    axis = axis % dst.ndim
    positions = xp.reshape(xp.arange(dst.shape[axis]), tuple(-1 if i == axis else 1 for i in range(dst.ndim)))
    for j in range(indices.shape[axis]):
        plane = tuple(slice(j, j + 1) if i == axis else slice(None) for i in range(dst.ndim))
        dst = xp.where(positions == indices[plane], values[plane], dst)
    return dst


def split(xp, x, sizes, axis: int):
    """`x` cut along `axis` into consecutive parts of `sizes` elements."""
    parts, start = [], 0
    index = [slice(None)] * x.ndim
    for n in sizes:
        index[axis] = slice(start, start + n)
        parts.append(x[tuple(index)])
        start += n
    return parts


def stable_argsort(xp, x, axis):
    """argsort keeping equal values in index order (NumPy's kind='stable', the standard's stable)."""
    return np.argsort(x, axis=axis, kind="stable") if xp is np else xp.argsort(x, axis=axis, stable=True)


def sorted_runs(xp, count: int, index):
    """Index sorted (stably) and, for each of rows 0..count-1, where its run of equal ids starts and
    ends in that order: what a scatter needs, from sort and searchsorted (the standard has no scatter)."""
    order = stable_argsort(xp, index, 0)
    ids = xp.take(index, order)
    rows = xp.arange(count, dtype=index.dtype)
    return order, xp.searchsorted(ids, rows, side="left"), xp.searchsorted(ids, rows, side="right")


def scatter_add(xp, count: int, index, rows):
    """`count` rows of zeros with each of `rows` added at its `index`, an index met twice getting
    both: NumPy's and CuPy's add.at, elsewhere differences of a running sum over the sorted runs."""
    if hasattr(getattr(xp, "add", None), "at"):
        out = xp.zeros((count, *rows.shape[1:]), dtype=rows.dtype)
        xp.add.at(out, index, rows)
        return out
    order, lo, hi = sorted_runs(xp, count, index)
    sums = xp.cumulative_sum(xp.take(rows, order, axis=0), axis=0, include_initial=True)
    return xp.take(sums, hi, axis=0) - xp.take(sums, lo, axis=0)


def scatter_last(xp, dst, index, rows):
    """`dst` with each of `rows` written at its `index`, the last write of an index winning (as
    Paddle's ScatterAssign does on a CPU)."""
    order, lo, hi = sorted_runs(xp, dst.shape[0], index)
    last = xp.take(order, xp.clip(hi - 1, 0, None), axis=0)
    hit = reshape(xp, hi > lo, (-1,) + (1,) * (dst.ndim - 1))
    return xp.where(hit, xp.take(rows, last, axis=0), dst)
