"""`fluid.dygraph.save_dygraph` / `load_dygraph`: a Layer's or an optimizer's state dict at
`model_path.pdparams` / `model_path.pdopt`, as Paddle 1.8 names them.

Each is written by `paddle.save` (a checkpoint directory of arrays and a manifest, never a pickle:
Paddle's own .pdparams files do not load here). What is saved is 1.8's: every Tensor as its array,
other values as they are, and under "StructuredToParameterName@@" each structured name's parameter
name; load_dygraph drops that table unless keep_name_table.
"""

from __future__ import annotations

import os

from ...dygraph.save_load import load, save
from ...dygraph.tensor import ParamBase
from ...ir import FleetgraphError
from ...ir.program import Variable

__all__ = ["save_dygraph", "load_dygraph"]

NAME_TABLE = "StructuredToParameterName@@"


def save_dygraph(state_dict: dict, model_path: str) -> None:
    """A Layer's state dict to model_path.pdparams; an optimizer's (its first value is no
    parameter) to model_path.pdopt."""
    if os.path.basename(os.fspath(model_path)) == "":
        raise FleetgraphError(f"save_dygraph: model_path {model_path!r}; expected dirname/filename, got no filename")
    if not state_dict:
        raise FleetgraphError("save_dygraph: the state_dict is empty; expected something to save")
    suffix = ".pdparams" if isinstance(next(iter(state_dict.values())), ParamBase) else ".pdopt"
    model_dict, name_table = {}, {}
    for key, value in state_dict.items():
        if isinstance(value, Variable):
            model_dict[key], name_table[key] = value.numpy(), value.name
        else:
            model_dict[key] = value
    model_dict[NAME_TABLE] = name_table
    save(model_dict, os.fspath(model_path) + suffix)


def load_dygraph(model_path: str, keep_name_table: bool = False) -> tuple[dict | None, dict | None]:
    """(parameters, optimizer state) from model_path.pdparams and model_path.pdopt, as NumPy arrays
    and values; None for a file that is not there."""
    model_path = os.fspath(model_path)
    for suffix in (".pdparams", ".pdopt", ".pdmodel"):
        if model_path.endswith(suffix):
            model_path = model_path[: -len(suffix)]
    loaded = []
    for suffix in (".pdparams", ".pdopt"):
        path = model_path + suffix
        state = load(path, return_numpy=True) if os.path.exists(path) else None
        if state is not None and not keep_name_table:
            state.pop(NAME_TABLE, None)
        loaded.append(state)
    return loaded[0], loaded[1]
