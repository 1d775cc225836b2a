"""Saving and loading: persistable values as .npz, programs and inference models as JSON."""

from __future__ import annotations

import json
import os

import numpy as np

from ..executor import global_scope
from ..executor.scope import Scope
from ..ir import FleetgraphError, Program, default_main_program
from ..ir.program import Variable, VarType
from ..ir.prune import prune_for_inference
from ..ir.serialize import program_from_dict, program_to_dict
from ..ops.sparse_table import SparseTable
from . import checkpoint
from .checkpoint import PARAMS_FILE
from .pserver_state import save_pserver_state

MODEL_FILE = "model.json"
ONNX_FILE = "model.onnx"


def _persistables(program: Program) -> list[Variable]:
    return [v for v in program.list_vars() if v.persistable and v.type != VarType.RAW]


def _scope_of(executor) -> Scope:
    return global_scope()


def save_vars(executor, dirname, main_program=None, vars=None, predicate=None, filename=None) -> str:
    """Write the variables' values as a checkpoint (fleetgraph.store.checkpoint: atomic, with a manifest);
    a sparse table as the rows it has (`name@IDS`, `name@ROWS`)."""
    program = main_program or default_main_program()
    chosen = vars if vars is not None else [v for v in program.list_vars() if predicate is None or predicate(v)]
    scope = _scope_of(executor)
    missing = [v.name for v in chosen if v.name not in scope]
    if missing:
        raise FleetgraphError(f"save: variables {missing} have no value in the scope; run the startup program first")
    return checkpoint.save(dirname, arrays_of(scope, [v.name for v in chosen]), filename or PARAMS_FILE)


def arrays_of(scope: Scope, names: list[str]) -> dict[str, np.ndarray]:
    arrays = {}
    for name in names:
        value = scope.vars[name]
        if isinstance(value, SparseTable):
            ids, rows = value.items()
            arrays[name + "@IDS"], arrays[name + "@ROWS"] = ids + value.offset, rows
        else:
            arrays[name] = np.asarray(value)
    return arrays


def save_persistables(executor, dirname, main_program=None, filename=None) -> str:
    """Every persistable variable (parameters and optimizer state) of the program, as a checkpoint.
    Of a parameter-server trainer's program: what its pservers hold (every block, table row and
    optimizer state), as the single-process program's variables."""
    program = main_program or default_main_program()
    role = program.dist_plan
    if role is not None and role.trainer_id is not None:
        from ..executor.comm import process_comm

        return save_pserver_state(dirname, process_comm().ps_client(), role, _scope_of(executor), filename)
    return save_vars(executor, dirname, program, _persistables(program), filename=filename)


def save_params(executor, dirname, main_program=None, filename=None) -> str:
    program = main_program or default_main_program()
    return save_vars(executor, dirname, program, program.all_parameters(), filename=filename)


def load_vars(executor, dirname, main_program=None, vars=None, predicate=None, filename=None) -> None:
    """Set the variables from a checkpoint (or a plain .npz): every value is checked first, so an error
    leaves the scope as it was. A table saved as rows updates those rows of the table in the scope."""
    program = main_program or default_main_program()
    chosen = vars if vars is not None else [v for v in program.list_vars() if predicate is None or predicate(v)]
    path = os.path.join(dirname, filename or PARAMS_FILE)
    arrays = checkpoint.load(dirname, filename or PARAMS_FILE)
    scope = _scope_of(executor)
    settled = {}
    for var in chosen:
        if var.name not in arrays and var.name + "@IDS" in arrays:
            if var.name + "@ROWS" not in arrays:
                raise checkpoint.CheckpointError(f"load {path}: {var.name!r} has @IDS but no @ROWS; expected both")
            settled[var.name] = _with_rows(scope, var, arrays[var.name + "@IDS"], arrays[var.name + "@ROWS"], path)
            continue
        if var.name not in arrays:
            raise checkpoint.CheckpointError(f"load {path}: variable {var.name!r} is not in the file")
        checkpoint.check_value(f"load {path}", repr(var.name), arrays[var.name], var.shape, var.dtype)
        settled[var.name] = arrays[var.name]
    scope.vars.update(settled)


def _with_rows(scope: Scope, var: Variable, ids: np.ndarray, rows: np.ndarray, path: str) -> np.ndarray:
    """The table in the scope with the saved rows set (the others keep their initial values)."""
    table = scope.vars.get(var.name)
    if not isinstance(table, np.ndarray) or table.ndim != 2:
        raise FleetgraphError(
            f"load {path}: {var.name!r} was saved as a table's rows; run the startup program first, so that "
            "the rows not saved keep their initial values"
        )
    checkpoint.check_value(f"load {path}", repr(var.name + "@ROWS"), rows, (-1, table.shape[1]), table.dtype)
    if (
        ids.ndim != 1
        or ids.dtype.kind not in "iu"
        or rows.shape != (len(ids), table.shape[1])
        or (len(ids) and not 0 <= ids.min() <= ids.max() < len(table))
    ):
        raise checkpoint.CheckpointError(
            f"load {path}: {var.name!r} has ids {list(ids.shape)} {ids.dtype} and rows {list(rows.shape)}; "
            f"expected integer ids in [0, {len(table)}) and rows [n, {table.shape[1]}]"
        )
    table = table.copy()
    table[ids] = rows
    return table


def load_persistables(executor, dirname, main_program=None, filename=None) -> None:
    program = main_program or default_main_program()
    load_vars(executor, dirname, program, _persistables(program), filename=filename)


def load_params(executor, dirname, main_program=None, filename=None) -> None:
    program = main_program or default_main_program()
    load_vars(executor, dirname, program, program.all_parameters(), filename=filename)


def _names(items) -> list[str]:
    items = items if isinstance(items, (list, tuple)) else [items]
    return [v.name if isinstance(v, Variable) else v for v in items]


def save_inference_model(
    dirname,
    feeded_var_names,
    target_vars,
    executor,
    main_program=None,
    model_filename=None,
    params_filename=None,
    export_for_deployment=True,
    program_only=False,
    format="json",
) -> list[str]:
    """Prune the program to the feeds and targets, then write it (JSON) and its parameters (.npz);
    `format="onnx"`: one ONNX model (model_filename, default model.onnx) holding both."""
    program = main_program or default_main_program()
    feeds, fetches = _names(feeded_var_names), _names(target_vars)
    if format == "onnx":
        return _save_onnx(dirname, feeds, fetches, executor, program, model_filename, export_for_deployment)
    if format != "json":
        raise FleetgraphError(f"save_inference_model: format {format!r}; expected 'json' or 'onnx'")
    pruned = prune_for_inference(program, feeds, fetches)
    os.makedirs(dirname, exist_ok=True)
    model = {"program": program_to_dict(pruned), "feed_names": feeds, "fetch_names": fetches}
    with open(os.path.join(dirname, model_filename or MODEL_FILE), "w", encoding="utf-8") as f:
        json.dump(model, f, indent=1)
        f.write("\n")
    if not program_only:
        save_persistables(executor, dirname, pruned, params_filename)
    return fetches


def _save_onnx(dirname, feeds, fetches, executor, program, model_filename, export_for_deployment) -> list[str]:
    from ..onnx import export

    if not export_for_deployment:
        raise FleetgraphError(
            "save_inference_model: format 'onnx' is a deployment model; expected export_for_deployment=True"
        )
    os.makedirs(dirname, exist_ok=True)
    export(program, feeds, fetches, _scope_of(executor).vars, path=os.path.join(dirname, model_filename or ONNX_FILE))
    return fetches


def load_inference_model(dirname, executor, model_filename=None, params_filename=None):
    """Returns [program, feed_target_names, fetch_targets] and loads the parameters into the scope."""
    path = os.path.join(dirname, model_filename or MODEL_FILE)
    if not os.path.exists(path):
        raise FleetgraphError(f"load_inference_model: {path} does not exist")
    with open(path, encoding="utf-8") as f:
        model = json.load(f)
    program = program_from_dict(model["program"])
    load_persistables(executor, dirname, program, params_filename)
    block = program.global_block()
    return [program, list(model["feed_names"]), [block.var(n) for n in model["fetch_names"]]]


# -- paddle.static spellings: one path prefix instead of a directory ------------------------------


def static_save_inference_model(path_prefix, feed_vars, fetch_vars, executor, program=None, format="json", **kwargs):
    """`paddle.static.save_inference_model`: path_prefix.json and .npz, or (format="onnx") path_prefix.onnx."""
    dirname, base = os.path.split(path_prefix)
    return save_inference_model(
        dirname or ".",
        feed_vars,
        fetch_vars,
        executor,
        program,
        model_filename=base + (".onnx" if format == "onnx" else ".json"),
        params_filename=base + ".npz",
        format=format,
    )


def static_load_inference_model(path_prefix, executor, **kwargs):
    dirname, base = os.path.split(path_prefix)
    return load_inference_model(dirname or ".", executor, base + ".json", base + ".npz")


def save(program: Program, model_path: str, protocol=None, **configs) -> None:
    """`paddle.static.save`: the program as model_path.json and its persistables as model_path.npz."""
    from ..ir import save_program

    dirname, base = os.path.split(model_path)
    save_persistables(None, dirname or ".", program, base + ".npz")
    save_program(program, model_path + ".json")


def load(program: Program, model_path: str, executor=None, var_list=None) -> None:
    dirname, base = os.path.split(model_path)
    load_persistables(executor, dirname or ".", program, base + ".npz")
