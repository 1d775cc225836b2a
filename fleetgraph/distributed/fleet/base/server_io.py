"""Load a saved model into a pserver: it holds row blocks of the parameters, so each block is cut
from the full saved array with the transpiler's plan.

Steps of `load_server_persistables`:
  1. map each variable of the pserver program to the saved variable it is (part of): a parameter
     block `w.block1` is rows [offset, offset + rows) of `w`; a variable of the block's optimize
     sub-block named `<name>.block1` (the block's slice of optimizer state shaped like `w`) is the
     same rows of `<name>`; any other name is the whole saved variable;
  2. put every persistable the file has into the scope, cut to its rows and checked for shape;
  3. a parameter the file lacks is an error; other state (optimizer accumulators, the learning rate)
     the file lacks keeps the value the pserver's startup program gave it, since
     `fleet.save_persistables` on a worker saves the parameters only.
"""

from __future__ import annotations

import os

from ....executor.scope import Scope
from ....ir import FleetgraphError, Program, load_arrays
from ....persistence import PARAMS_FILE
from ....transpiler.ps_plan import DistPlan, VarBlock
from ....transpiler.ps_trainer import SCHEDULED


def load_server_persistables(
    scope: Scope, pserver_main: Program, plan: DistPlan, endpoint: str, dirname: str, filename: str | None = None
) -> list[str]:
    """Load the saved values of `endpoint`'s variables into `scope`; returns the names loaded."""
    path = os.path.join(dirname, filename or PARAMS_FILE)
    if not os.path.exists(path):
        raise FleetgraphError(f"init_server: {path} does not exist; expected a directory fleet.save_persistables wrote")
    arrays = load_arrays(path)
    sources = _sources(pserver_main, plan, endpoint)  # step 1
    params = {b.name for _, b in plan.blocks_on(endpoint)}
    loaded, missing = [], []
    for var in pserver_main.global_block().vars.values():
        if not var.persistable:
            continue
        origin, block = sources.get(var.name, (var.name, None))
        if origin not in arrays:
            if var.name in params:  # step 3
                missing.append(f"{origin!r} (for {var.name!r})")
            continue
        value = arrays[origin]
        if block is not None and block.split:  # step 2
            value = value[block.offset : block.offset + block.rows]
        if tuple(value.shape) != tuple(var.shape):
            raise FleetgraphError(
                f"init_server: {path}: {origin!r} gives {var.name!r} shape {list(value.shape)}; "
                f"expected {list(var.shape)}"
            )
        scope.vars[var.name] = value
        loaded.append(var.name)
    if missing:
        raise FleetgraphError(f"init_server: {path} has no saved value for parameter {', '.join(missing)}")
    return loaded


def _sources(pserver_main: Program, plan: DistPlan, endpoint: str) -> dict[str, tuple[str, VarBlock]]:
    """pserver variable name -> (saved variable name, the parameter block whose rows it holds)."""
    serve = pserver_main.global_block().ops[0]
    if serve.type != "listen_and_serv":
        raise FleetgraphError(
            f"init_server: expected a pserver program starting with listen_and_serv, got {serve.type}"
        )
    sources: dict[str, tuple[str, VarBlock]] = {}
    schedule = {serve.attrs.get("lr_decay_block_id", -1)}
    schedule |= {int(e.rpartition(":")[2]) for e in serve.attrs["grad_to_block_id"] if SCHEDULED in e}
    per_param = [i for i in serve.attrs["optimize_blocks"] if i not in schedule]
    for (p, b), index in zip(plan.blocks_on(endpoint), per_param):
        sources[b.name] = (p.param, b)
        if not b.split:
            continue
        suffix = f".block{b.index}"
        for op in pserver_main.block(index).ops:
            for name in op.input_arg_names + op.output_arg_names:
                if name.endswith(suffix) and name not in sources:
                    sources[name] = (name[: -len(suffix)], b)
    return sources
