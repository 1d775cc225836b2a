"""Saving and loading: persistable values as .npz, programs and inference models as JSON."""

from __future__ import annotations

import json
import os
import warnings

import numpy as np

from ..executor import global_scope
from ..executor.scope import Scope
from ..ir import FleetgraphError, FleetgraphValueError, Program, default_main_program
from ..ir.program import Parameter, Variable, VarType
from ..ir.prune import prune_for_inference
from ..ir.serialize import program_from_dict, program_to_dict
from ..ops.sparse_table import SparseTable
from . import checkpoint
from .checkpoint import PARAMS_FILE
from .pserver_state import save_pserver_state

MODEL_FILE = "model.json"
ONNX_FILE = "model.onnx"


def _persistables(program: Program) -> list[Variable]:
    return [v for v in program.list_vars() if is_persistable(v)]


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


# -- save / load of a program's state (`fluid.save`, `paddle.static.save`) ----------------------------
#
# Paddle 1.8's files under their names: `model_path.pdparams` (the parameters), `model_path.pdopt`
# (the other persistables: optimizer state, learning rates, counters) and `model_path.pdmodel` (the
# program). The first two are checkpoint directories (fleetgraph.store.checkpoint, never pickles), the
# program is JSON; Paddle's own pickled files do not load here.

_SUFFIXES = (".pdparams", ".pdopt", ".pdmodel")


def is_parameter(var: Variable) -> bool:
    """`fluid.io.is_parameter`."""
    return isinstance(var, Parameter)


def is_persistable(var: Variable) -> bool:
    """`fluid.io.is_persistable`: persistable, and not a reader's queue (Paddle's READER variables)."""
    return var.persistable and var.type != VarType.RAW


def is_belong_to_optimizer(var: Variable) -> bool:
    """`fluid.io.is_belong_to_optimizer`: a persistable that is neither a parameter nor a feed."""
    return not is_parameter(var) and not var.need_check_feed and is_persistable(var)


def get_program_parameter(program: Program) -> list[Variable]:
    """`fluid.io.get_program_parameter`: the program's parameters."""
    return [v for v in program.list_vars() if is_parameter(v)]


def get_program_persistable_vars(program: Program) -> list[Variable]:
    """`fluid.io.get_program_persistable_vars`: every persistable variable (the readers' queues excepted)."""
    return _persistables(program)


def _optimizer_vars(program: Program) -> list[Variable]:
    return [v for v in program.list_vars() if is_belong_to_optimizer(v)]


def _model_prefix(model_path) -> str:
    model_path = os.fspath(model_path)
    for suffix in _SUFFIXES:
        if model_path.endswith(suffix):
            return model_path[: -len(suffix)]
    return model_path


def save(program: Program, model_path: str, protocol=4, **configs) -> None:
    """`fluid.save` / `paddle.static.save`: the parameters to model_path.pdparams, the optimizer's
    variables to model_path.pdopt (written even when there are none, as Paddle does) and the program
    to model_path.pdmodel. `protocol` is Paddle's pickle protocol, checked as Paddle checks it; the
    files here are not pickles, so every allowed protocol writes the same."""
    from ..ir import save_program

    model_path = os.fspath(model_path)
    if not os.path.basename(model_path):
        raise FleetgraphValueError(
            f"save: model_path {model_path!r}; expected dirname/filename, got no filename (the files are "
            "filename.pdparams, .pdopt and .pdmodel)"
        )
    if not isinstance(protocol, int) or isinstance(protocol, bool) or not 1 < protocol < 5:
        raise ValueError(f"save: protocol expected an int in (1, 5), got {protocol!r}")
    if configs:
        raise NotImplementedError(f"save: configs {sorted(configs)} are not supported; expected none")
    save_vars(None, model_path + ".pdparams", program, get_program_parameter(program))
    save_vars(None, model_path + ".pdopt", program, _optimizer_vars(program))
    save_program(program, model_path + ".pdmodel")


def load(program: Program, model_path: str, executor=None, var_list=None) -> None:
    """`fluid.load` / `paddle.static.load`: what `save` wrote under model_path (with or without a
    suffix), every value checked against its variable before any is set.

    A model_path without .pdparams is what save_vars / save_params / save_persistables wrote, as in
    Paddle: a directory (the program's variables it holds load; with var_list, only those), or the
    file named by their `filename` (var_list says which variables it holds, and is required). Of
    save's files, var_list (when given) chooses which of the program's variables load."""
    prefix = _model_prefix(model_path)
    if not os.path.exists(prefix + ".pdparams"):
        _load_saved_vars(program, os.fspath(model_path), executor, var_list)
        return
    chosen = None if var_list is None else set(_names(var_list))
    for suffix, variables in ((".pdparams", get_program_parameter(program)), (".pdopt", _optimizer_vars(program))):
        variables = [v for v in variables if chosen is None or v.name in chosen]
        if not variables:
            continue
        if not os.path.exists(prefix + suffix):
            raise FleetgraphError(f"load: {prefix + suffix} does not exist; expected the file save() wrote there")
        load_vars(executor, prefix + suffix, program, variables)


def _load_saved_vars(program: Program, model_path: str, executor, var_list) -> None:
    """Paddle's load of a save_vars / save_params / save_persistables directory or file."""
    if executor is None:
        raise ValueError(
            "executor is required when loading model file saved with [ save_params, save_persistables, save_vars ]"
        )
    if os.path.isdir(model_path):
        held = set(checkpoint.load(model_path, PARAMS_FILE))
        chosen = None if var_list is None else set(_names(var_list))
        variables = [v for v in program.list_vars() if v.name in held and (chosen is None or v.name in chosen)]
        unused = held - {v.name for v in variables}
        if unused:
            warnings.warn(f"load {model_path}: variable file [ {' '.join(sorted(unused))} ] not used", stacklevel=3)
        _load_or_fail(executor, model_path, program, variables, None)
        return
    dirname, filename = os.path.split(model_path)
    if not _holds_file(dirname or ".", filename):
        raise FleetgraphError(
            f"load: {model_path!r} holds no model; expected model_path.pdparams (from save), or the directory "
            "or file save_vars / save_params / save_persistables wrote"
        )
    if var_list is None:
        raise ValueError(
            "var_list is required when loading model file saved with [ save_params, save_persistables, save_vars ]"
        )
    names = {v.name for v in program.list_vars()}
    for var in var_list:
        if var.name not in names:
            raise LookupError(f"load: loaded var [{var.name}] is not in program variable list")
    _load_or_fail(executor, dirname or ".", program, list(var_list), filename)


def _load_or_fail(executor, dirname: str, program: Program, variables: list, filename) -> None:
    """load_vars, its failure raised as RuntimeError as Paddle's load raises it."""
    try:
        load_vars(executor, dirname, program, variables, filename=filename)
    except FleetgraphError as e:
        raise RuntimeError(
            f"load: {e}; expected a model file saved with save_params, save_persistables or save_vars "
            "holding each variable with its shape and dtype"
        ) from e


def _holds_file(dirname: str, filename: str) -> bool:
    """Whether `filename` is a file save_vars(filename=...) wrote in `dirname` (or a plain .npz)."""
    manifest = checkpoint.read_manifest(dirname) if os.path.isdir(dirname) else None
    return filename in manifest["files"] if manifest is not None else os.path.isfile(os.path.join(dirname, filename))


def load_program_state(model_path: str, var_list=None) -> dict[str, np.ndarray]:
    """`fluid.load_program_state`: {name: array} of what `save` wrote (parameters and optimizer
    variables), or of a save_vars directory (with var_list, only those) or file (var_list required)."""
    prefix = _model_prefix(model_path)
    if os.path.exists(prefix + ".pdparams"):
        state = checkpoint.load(prefix + ".pdparams", PARAMS_FILE)
        if os.path.exists(prefix + ".pdopt"):
            state.update(checkpoint.load(prefix + ".pdopt", PARAMS_FILE))
        return state
    model_path = os.fspath(model_path)
    if var_list is not None and not all(isinstance(v, Variable) for v in var_list):
        raise TypeError(f"load_program_state: value in var_list must be variable, got {list(var_list)!r}")
    if not os.path.isdir(model_path) and var_list is None:
        raise ValueError("var_list can not be None when model_path is a file type")
    dirname, filename = (model_path, PARAMS_FILE) if os.path.isdir(model_path) else os.path.split(model_path)
    try:
        state = checkpoint.load(dirname or ".", filename)
    except (FleetgraphError, OSError) as e:
        raise RuntimeError(f"load_program_state: {e}; expected what save_vars / save_persistables wrote") from e
    if var_list is None:
        return state
    missing = [v.name for v in var_list if v.name not in state]
    if missing:
        raise RuntimeError(f"load_program_state {model_path}: variables {missing} are not in it")
    return {v.name: state[v.name] for v in var_list}


def set_program_state(program: Program, state_dict: dict) -> None:
    """`fluid.set_program_state`: each persistable of the program named in state_dict gets its value
    (shape and dtype checked first, nothing set if one differs); names the program lacks are warned of."""
    scope, settled = global_scope(), {}
    for var in _persistables(program):
        if scope.find_var(var.name) is None:
            raise FleetgraphValueError(f"Variable [ {var.name} ] Not found, Please make sure run startup program")
        if var.name not in state_dict:
            continue
        old, new = np.asarray(scope.vars[var.name]), np.asarray(state_dict[var.name])
        if old.shape != new.shape:
            raise FleetgraphValueError(
                f"Parameter's shape does not match, the Program requires a parameter with the shape of "
                f"({old.shape}), while the loaded parameter (namely [ {var.name} ]) has a shape of ({new.shape})."
            )
        if old.dtype != new.dtype:
            raise FleetgraphValueError(
                f"Parameter's data type does not match, the Program requires a parameter with a dtype of "
                f"({old.dtype}), while the loaded parameter (namely [ {var.name} ]) has a dtype of ({new.dtype})."
            )
        settled[var.name] = new.copy()
    for name, value in settled.items():
        scope.find_var(name).get_tensor().set(value)
    unused = [k for k in state_dict if k not in settled]
    if unused:
        warnings.warn(
            "This list is not set, Because of Paramerter not found in program. There are: " + " ".join(unused),
            stacklevel=2,
        )
