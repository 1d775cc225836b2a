"""Checkpoints of a parameter-server job: the pservers' state gathered into the single-process
program's variables, and such a checkpoint (or any saved persistables) loaded back into pservers,
each cutting the rows it holds with the transpiler's plan, for any number of pservers.

Steps of `gather_pserver_state` (trainer 0, `fleet.save_persistables`):
  1. ask every pserver for what it holds (one STATE message each, all at once);
  2. map each pserver variable to the saved variable it is (part of) -- a parameter block `w.block1`
     is rows [offset, offset + rows) of `w`; a variable of the block's optimize sub-block named
     `<name>.block1` (the block's slice of optimizer state shaped like `w`) the same rows of `<name>`;
     any other name the whole variable -- and put the blocks together; a table's rows (and its
     optimizer state's) stay rows: `<name>@IDS` (global ids) and `<name>@ROWS`;
  3. add the persistables only trainers hold (a step counter, metric state) from this trainer.

Steps of `load_server_persistables` (`fleet.init_server(dirname)`):
  1. the same map for this pserver's variables;
  2. check every value the directory has for them (the checkpoint's manifest and checksums, then
     each dtype and shape, as a single process's load does) before any is set, so nothing loads partly;
  3. set them, cut to the rows this pserver holds: a table creates the rows of its ids, and a table's
     optimizer state follows its table (one index, as the optimizer makes it);
  4. a parameter the directory lacks is an error; other state (optimizer accumulators, the learning
     rate) it lacks keeps the value the pserver's startup program gave it.
"""

from __future__ import annotations

import os

import numpy as np

from ..executor.scope import Scope
from ..ir import FleetgraphError, Program
from ..ops.sparse_table import SparseTable
from ..transpiler.ps_plan import DistPlan, VarBlock
from ..transpiler.ps_pserver import build_pserver_program
from ..transpiler.ps_trainer import SCHEDULED
from . import checkpoint
from .checkpoint import PARAMS_FILE

ROWS_OF = ("@IDS", "@ROWS")  # a table saved as the rows it has


def gather_pserver_state(client, plan: DistPlan, origin: Program, scope: Scope, trainer_id: int):
    """The single-process program's persistables as the pservers (and this trainer) hold them, and
    the step the pservers have applied."""
    states = client.state(plan.endpoints, trainer_id)  # step 1
    wanted = {v.name: v for v in origin.list_vars() if v.persistable}
    arrays: dict[str, np.ndarray] = {}
    rows: dict[str, list] = {}
    for endpoint, state in zip(plan.endpoints, states):  # step 2
        sources = _sources(build_pserver_program(origin, plan, endpoint), plan, endpoint)
        for name, value in state.items():
            base, suffix = _rows_part(name)
            origin_name, block = sources.get(base, (base, None))
            if origin_name not in wanted:
                continue
            if suffix:
                rows.setdefault(origin_name + suffix, []).append(value)
            elif block is not None and block.split:
                var = wanted[origin_name]
                full = arrays.setdefault(origin_name, np.zeros(var.shape, dtype=var.dtype))
                full[block.offset : block.offset + block.rows] = value
            else:
                arrays.setdefault(origin_name, value)
    arrays.update((name, np.concatenate(parts)) for name, parts in rows.items())
    tables = {p.param for p in plan.tables}
    for name in wanted:  # step 3
        held = name in arrays or name + ROWS_OF[0] in arrays or name in tables
        if not held and scope.vars.get(name) is not None:
            arrays[name] = np.asarray(scope.vars[name])
    steps = [int(state["@STEPS@"][0]) for state in states if "@STEPS@" in state]
    return arrays, (min(steps) if steps else 0)


def save_pserver_state(dirname: str, client, role, scope: Scope, filename: str | None = None) -> str:
    """Write what the pservers (and this trainer) hold as a checkpoint of the single-process program,
    the step the pservers applied in its meta. `role` is the trainer program's `RolePlan` (or any
    value with its `plan`, `origin_program` and `trainer_id`, as the transpiler that made it has)."""
    arrays, step = gather_pserver_state(client, role.plan, role.origin_program, scope, role.trainer_id)
    return checkpoint.save(dirname, arrays, filename or PARAMS_FILE, meta={"step": step})


def load_server_persistables(
    scope: Scope, pserver_main: Program, plan: DistPlan, endpoint: str, dirname: str, filename: str | None = None
) -> list[str]:
    """Load the saved values of `endpoint`'s variables into `scope`; returns the names loaded."""
    path = os.path.join(dirname, filename or PARAMS_FILE)
    if not os.path.isdir(dirname):
        raise FleetgraphError(
            f"init_server: {dirname} does not exist; expected a directory fleet.save_persistables wrote"
        )
    arrays = checkpoint.load(dirname, filename or PARAMS_FILE)
    sources = _sources(pserver_main, plan, endpoint)  # step 1
    params = {b.name for _, b in plan.blocks_on(endpoint)}
    settled, missing = [], []
    for var in pserver_main.global_block().vars.values():  # step 2
        if not var.persistable:
            continue
        origin, block = sources.get(var.name, (var.name, None))
        current = scope.vars.get(var.name)
        if origin + ROWS_OF[0] in arrays:
            settled.append((var.name, _table_rows(arrays, origin, block, current, path)))
            continue
        if origin not in arrays:
            if var.name in params:  # step 4
                missing.append(f"{origin!r} (for {var.name!r})")
            continue
        value = arrays[origin]
        if block is not None and block.split and value.ndim:
            value = value[block.offset : block.offset + block.rows]
        checkpoint.check_value(f"init_server: {path}", f"{origin!r} (for {var.name!r})", value, var.shape, var.dtype)
        settled.append((var.name, value))
    if missing:
        raise FleetgraphError(f"init_server: {path} has no saved value for parameter {', '.join(missing)}")
    followers = _state_tables(pserver_main, scope)
    settled.sort(key=lambda item: item[0] in followers)  # step 3: a table before the state that follows it
    for name, value in settled:
        if isinstance(value, tuple):
            _restore_rows(scope.vars[name], *value, scope.vars.get(followers.get(name, "")))
        else:
            scope.vars[name] = value
    return [name for name, _ in settled]


def _rows_part(name: str) -> tuple[str, str]:
    for suffix in ROWS_OF:
        if name.endswith(suffix):
            return name[: -len(suffix)], suffix
    return name, ""


def _table_rows(arrays, origin: str, block: VarBlock | None, current, path: str):
    """The saved rows of table `origin` that this pserver's block holds, as (local ids, rows)."""
    if not isinstance(current, SparseTable):
        raise FleetgraphError(
            f"init_server: {path}: {origin!r} was saved as a table's rows; expected this pserver to hold it as a "
            f"table, got {type(current).__name__} (run the pserver's startup program first)"
        )
    if origin + "@ROWS" not in arrays:
        raise checkpoint.CheckpointError(f"init_server: {path}: {origin!r} has @IDS but no @ROWS; expected both")
    ids, rows = arrays[origin + "@IDS"], arrays[origin + "@ROWS"]
    label = repr(origin + "@ROWS")
    checkpoint.check_value(f"init_server: {path}", label, rows, (-1, current.width), current.dtype)
    if ids.ndim != 1 or ids.dtype.kind not in "iu" or len(rows) != len(ids):
        raise checkpoint.CheckpointError(
            f"init_server: {path}: {origin!r} has ids {list(ids.shape)} {ids.dtype} and rows {list(rows.shape)}; "
            f"expected integer ids [n] and rows [n, {current.width}]"
        )
    lo = current.offset
    mine = (ids >= lo) & (ids < lo + current.height)
    return ids[mine] - lo, rows[mine]


def _restore_rows(table: SparseTable, ids: np.ndarray, rows: np.ndarray, leader: SparseTable | None) -> None:
    if leader is not None:
        table.follow(leader)
    table.write(table.positions(ids), rows)


def _state_tables(pserver_main: Program, scope: Scope) -> dict[str, str]:
    """Optimizer state held as tables -> the table each follows (the Param of the op that reads both)."""
    out = {}
    for block in pserver_main.blocks:
        for op in block.ops:
            params = op.inputs.get("Param", [])
            if len(params) != 1 or not isinstance(scope.vars.get(params[0]), SparseTable):
                continue
            for slot, names in op.inputs.items():
                for name in names:
                    if slot != "Param" and isinstance(scope.vars.get(name), SparseTable):
                        out[name] = params[0]
    return out


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
