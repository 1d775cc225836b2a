"""`paddle.save` / `paddle.load` of state dicts as fleetgraph checkpoints (never pickle).

`save(obj, path)` writes a checkpoint directory at `path` with checkpoint.save (the arrays as .npz,
written under a temporary name and renamed into place, a manifest with their SHA-256 written last).
What it takes: Tensors, NumPy arrays and scalars, bool/int/float/str/None, and dicts (string keys)
and lists or tuples of these, nested, as a Layer's or an optimizer's state_dict() is. The nesting
goes into the manifest's meta as JSON, each array into the .npz under a key of its own (a bfloat16
one as its uint16 bits, its entry saying so).

`load(path)` checks the files against the manifest and gives the object back: Tensors as Tensors
(stop_gradient True, as Paddle's), or as NumPy arrays with return_numpy=True.
"""

from __future__ import annotations

import os

import numpy as np

from ..ir import FleetgraphError
from ..ir.dtypes import BFLOAT16
from ..store import checkpoint
from .tensor import Tensor

FORMAT, VERSION = "fleetgraph.save", 1
DATA = "state.npz"


def save(obj, path: str, protocol: int = 4, **configs) -> None:
    """Write `obj` (a state dict, nested dicts/lists of Tensors, arrays and plain values) to `path`."""
    path = os.fspath(path)
    if os.path.isfile(path):
        raise FleetgraphError(
            f"save: {path!r} is a file; expected a new path or a directory paddle.save wrote (it writes a "
            "checkpoint directory there)"
        )
    arrays: dict[str, np.ndarray] = {}
    tree = _encode(obj, arrays, "obj")
    checkpoint.save(path, arrays, DATA, meta={"format": FORMAT, "version": VERSION, "tree": tree})


def load(path: str, **configs):
    """What `save` wrote at `path`; Tensors come back as NumPy arrays with return_numpy=True."""
    path = os.fspath(path)
    if os.path.isfile(path):
        raise FleetgraphError(
            f"load: {path!r} is a file; expected a directory paddle.save wrote (fleetgraph does not read "
            "pickled Paddle files: load them in Paddle and save the arrays with numpy.savez)"
        )
    if not os.path.isdir(path):
        raise FleetgraphError(f"load: {path!r} does not exist; expected a directory paddle.save wrote")
    meta = checkpoint.meta(path)
    if meta.get("format") != FORMAT:
        raise FleetgraphError(
            f"load: {path!r} is not what paddle.save writes; expected a {FORMAT} checkpoint, got "
            f"{meta.get('format') or 'a checkpoint without one'} (static programs load with paddle.static.load)"
        )
    if meta.get("version") != VERSION:
        raise FleetgraphError(f"load: {path!r}: format version {meta.get('version')}; expected {VERSION}")
    arrays = checkpoint.load(path, DATA)
    return _decode(meta["tree"], arrays, bool(configs.get("return_numpy", False)))


def _encode(value, arrays: dict, where: str):
    """The JSON form of `value`, its arrays put into `arrays` under fresh keys."""
    if isinstance(value, Tensor):
        if value.value is None:
            raise FleetgraphError(f"save: {where} is a Tensor without a value; expected one that holds data")
        return _array_entry("tensor", value.numpy(), arrays)
    if isinstance(value, np.ndarray):
        return _array_entry("ndarray", value, arrays)
    if isinstance(value, np.generic):
        return {"scalar": _put(arrays, np.asarray(value))}
    if value is None or isinstance(value, (bool, int, float, str)):
        return {"value": value}
    if isinstance(value, dict):
        for k in value:
            if not isinstance(k, str):
                raise FleetgraphError(f"save: {where}: a key {k!r} of type {type(k).__name__}; expected str keys")
        return {"dict": [[k, _encode(v, arrays, f"{where}[{k!r}]")] for k, v in value.items()]}
    if isinstance(value, (list, tuple)):
        kind = "list" if isinstance(value, list) else "tuple"
        return {kind: [_encode(v, arrays, f"{where}[{i}]") for i, v in enumerate(value)]}
    raise FleetgraphError(
        f"save: {where} is a {type(value).__name__}; expected Tensors, NumPy arrays, numbers, strings, None, "
        "and dicts or lists of them (a state_dict())"
    )


def _array_entry(kind: str, array: np.ndarray, arrays: dict) -> dict:
    """A bfloat16 array goes in as its bits (uint16), under kind 'bfloat16 <kind>': a .npy file has no
    bfloat16 and would read it back as raw bytes (void16)."""
    if array.dtype == BFLOAT16:
        return {f"bfloat16 {kind}": _put(arrays, array.view(np.uint16))}
    return {kind: _put(arrays, array)}


def _put(arrays: dict, array: np.ndarray) -> str:
    key = f"a{len(arrays)}"
    arrays[key] = array
    return key


def _decode(node, arrays: dict, return_numpy: bool):
    (kind, body), *rest = node.items()
    if rest:
        raise FleetgraphError(f"load: a malformed entry {node!r}; expected one kind each")
    if kind in ("bfloat16 tensor", "bfloat16 ndarray"):
        bits = arrays[body]
        if bits.dtype != np.uint16:
            raise FleetgraphError(f"load: bfloat16 entry {body!r} holds {bits.dtype}; expected its uint16 bits")
        kind, arrays = kind.split()[1], {body: bits.view(BFLOAT16)}
    if kind == "tensor":
        array = arrays[body]
        return array if return_numpy else Tensor(array, stop_gradient=True)
    if kind == "ndarray":
        return arrays[body]
    if kind == "scalar":
        return arrays[body][()]
    if kind == "value":
        return body
    if kind == "dict":
        return {k: _decode(v, arrays, return_numpy) for k, v in body}
    if kind in ("list", "tuple"):
        items = [_decode(v, arrays, return_numpy) for v in body]
        return items if kind == "list" else tuple(items)
    raise FleetgraphError(f"load: an entry of kind {kind!r}; expected tensor, ndarray, scalar, value, dict or list")
