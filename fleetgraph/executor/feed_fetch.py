"""Feeds and fetches: a fed value checked against its variable, a fetched value copied out of a run."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ir import DTypeError, FleetgraphError, ShapeError
from ..ir.errors import close_matches, fmt_shape
from ..ir.program import Program, Variable
from ..ops.lod_tensor import LoDTensor, check_lod, from_sequences


def fetch_name(item) -> str:
    if isinstance(item, Variable):
        return item.name
    if isinstance(item, str):
        return item
    raise TypeError(f"fetch_list: expected Variables or names, got {type(item).__name__} {item!r}")


class FetchedValue(np.ndarray):
    """A fetched array of one element that also converts to a Python number. Paddle 1.x scripts
    index a fetched loss (`loss[0]`) and 2.x scripts format it (`"%f" % loss`); NumPy 2.4 refuses
    the second for a shape-[1] array, so the fetch result allows both."""

    def __float__(self) -> float:
        return float(self.reshape(()).item())

    def __int__(self) -> int:
        return int(self.reshape(()).item())

    def __repr__(self) -> str:
        return repr(np.asarray(self))


def fetched(env: dict, name: str, program: Program, return_numpy: bool = True):
    """A copy of the value (later runs may update state in place): an array, or with
    `return_numpy=False` a LoDTensor (with the variable's LoD, if it has one) as Paddle returns."""
    value = env.get(name)
    if isinstance(value, list):  # a tensor array: a list of its elements, as Paddle's as_numpy gives
        return [_one(v, name, return_numpy) for v in value]
    if value is not None:
        return _one(value, name, return_numpy)
    known = [v.name for v in program.list_vars()]
    if name not in known:
        raise FleetgraphError(f"fetch {name!r}: no such variable in the program{close_matches(name, known)}")
    raise FleetgraphError(f"fetch {name!r}: the variable has no value; no op of this run writes it")


def _one(value, name: str, return_numpy: bool):
    levels = value.levels if isinstance(value, LoDTensor) else ()
    array = np.array(value.data if isinstance(value, LoDTensor) else value)
    if not return_numpy:
        return LoDTensor(array, levels)
    if levels:
        raise FleetgraphError(
            f"fetch {name!r}: the value holds LoD {[level.tolist() for level in levels]}, which an array "
            "cannot carry; fetch it with return_numpy=False to get the LoDTensor"
        )
    return array.view(FetchedValue) if array.size == 1 and array.ndim else array


def feed_into(env: dict, feed: dict, plan: Any, xp=np) -> None:
    """Each fed value, checked against its variable in the plan's block, into the run's values as
    arrays of the place's module `xp`."""
    for key, value in feed.items():
        name = key.name if isinstance(key, Variable) else key
        var = plan.block._find_var_recursive(name)
        if var is None:
            raise FleetgraphError(f"feed {name!r}: no such variable in the program{close_matches(name, plan.vars)}")
        value = check_feed(var, value)
        if xp is not np:
            value = (
                LoDTensor(xp.asarray(value.data), value.levels) if isinstance(value, LoDTensor) else xp.asarray(value)
            )
        env[name] = value


def check_feed(var: Variable, value):
    """The fed value as an array of the variable's dtype and shape (a LoDTensor for a variable with
    lod_level > 0: from a LoDTensor, nested lists or an array without LoD), or one clear error."""
    if var.lod_level > 0:
        return _check_lod_feed(var, value)
    if isinstance(value, LoDTensor):  # the variable carries no sequences: its rows are its value
        value = value.data
    return _check_array(var, value)


def _check_lod_feed(var: Variable, value) -> LoDTensor:
    where = f"feed {var.name!r}"
    if isinstance(value, LoDTensor):
        data = _check_array(var, value.data)
        if len(value.levels) > var.lod_level:
            raise FleetgraphError(
                f"{where}: expected at most lod_level {var.lod_level} LoD level(s), got {len(value.levels)}"
            )
        check_lod(value.levels, len(data), where)
        return value if data is value.data else LoDTensor(data, value.levels)
    if isinstance(value, (list, tuple)):
        value = from_sequences(value, var.lod_level, var.dtype, var.shape[1:], where)
        return LoDTensor(_check_array(var, value.data), value.levels)
    return LoDTensor(_check_array(var, value), ())


def _check_array(var: Variable, value) -> np.ndarray:
    want = f"{fmt_shape(var.shape)} {var.dtype}"
    if isinstance(value, np.ndarray):
        if value.dtype.name != var.dtype:
            raise DTypeError(f"feed {var.name!r}: expected shape {want}, got {tuple(value.shape)} {value.dtype.name}")
        array = value
    else:
        try:
            array = np.asarray(value, dtype=var.dtype)
        except (TypeError, ValueError) as e:
            raise DTypeError(f"feed {var.name!r}: expected shape {want}, got {type(value).__name__} ({e})") from None
    shape = array.shape
    if not var.need_check_feed:  # fluid.layers.data: Paddle checks only fluid.data's and static.data's feeds
        return array
    if len(shape) != len(var.shape) or any(d != -1 and d != s for d, s in zip(var.shape, shape)):
        raise ShapeError(f"feed {var.name!r}: expected shape {want}, got {tuple(shape)} {array.dtype.name}")
    return array
