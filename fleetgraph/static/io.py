"""Paddle 2.0's in-memory model files (`paddle.static.serialize_program`, ...): the program and the
persistables as bytes, to be stored or sent as the caller likes.

Paddle's bytes are its ProgramDesc protobuf and its save_combine stream; fleetgraph's are its own
formats, the ones `save_inference_model` writes: the program is the UTF-8 JSON document of the
model file (the pruned inference program with its feed and fetch names), the persistables an .npz
archive of the arrays by name. Each round trip (serialize, deserialize) is exact; Paddle's own bytes
do not load here, nor these in Paddle."""

from __future__ import annotations

import io
import json
import warnings

import numpy as np

from ..dygraph import mode
from ..executor import global_scope
from ..ir import FleetgraphError, Program, default_main_program
from ..ir.program import Parameter, Variable, VarType
from ..ir.prune import prune_for_inference
from ..ir.serialize import program_from_dict, program_to_dict
from ..store.persistence import arrays_of, is_persistable


def _static_only(what: str) -> None:
    """Paddle's check of a static-only API (an AssertionError there too)."""
    if mode.in_dynamic_mode():
        raise AssertionError(
            "In PaddlePaddle 2.x, we turn on dynamic graph mode by default, and "
            f"'{what}()' is only supported in static graph mode. So if you want to use this api, please call "
            "'paddle.enable_static()' before this api to enter static graph mode."
        )


def _names(what: str, variables) -> list[str]:
    variables = variables if isinstance(variables, (list, tuple)) else [variables]
    if not variables or not all(isinstance(v, Variable) for v in variables):
        raise ValueError(f"'{what}' should be a Variable or a list of Variable.")
    return [v.name for v in variables]


def _pruned(feed_vars, fetch_vars, program) -> tuple[Program, list[str], list[str]]:
    feeds, fetches = _names("feed_vars", feed_vars), _names("fetch_vars", fetch_vars)
    program = default_main_program() if program is None else program
    if not isinstance(program, Program):
        raise TypeError(f"program type must be `fluid.Program`, but received `{type(program)}`")
    return prune_for_inference(program, feeds, fetches), feeds, fetches


def serialize_program(feed_vars, fetch_vars, **kwargs) -> bytes:
    """The program (kwargs['program'], default the main program) pruned to compute fetch_vars from
    feed_vars, as the bytes of fleetgraph's inference model file (JSON)."""
    _static_only("serialize_program")
    pruned, feeds, fetches = _pruned(feed_vars, fetch_vars, kwargs.get("program"))
    model = {"program": program_to_dict(pruned), "feed_names": feeds, "fetch_names": fetches}
    return json.dumps(model).encode("utf-8")


def deserialize_program(data: bytes) -> Program:
    """The Program serialize_program wrote."""
    _static_only("deserialize_program")
    try:
        model = json.loads(data.decode("utf-8") if isinstance(data, bytes) else data)
        return program_from_dict(model["program"])
    except (UnicodeDecodeError, ValueError, KeyError, TypeError) as e:
        raise ValueError(
            f"deserialize_program: expected the bytes of fleetgraph's serialize_program (JSON), got {data[:16]!r}...; "
            f"{type(e).__name__}: {e} (Paddle's protobuf programs do not load here)"
        ) from e


def serialize_persistables(feed_vars, fetch_vars, executor, **kwargs) -> bytes | None:
    """The values (in the global scope) of the persistables the pruned program reads, as .npz bytes;
    None, with Paddle's warning, when it has none."""
    _static_only("serialize_persistables")
    pruned = _pruned(feed_vars, fetch_vars, kwargs.get("program"))[0]
    names = sorted(v.name for v in pruned.list_vars() if is_persistable(v))
    if not names:
        warnings.warn(
            "no variable in your model, please ensure there are any variables in your model to save", stacklevel=2
        )
        return None
    scope = global_scope()
    missing = [n for n in names if n not in scope]
    if missing:
        raise FleetgraphError(
            f"serialize_persistables: variables {missing} have no value in the scope; run the startup program first"
        )
    buffer = io.BytesIO()
    np.savez(buffer, **arrays_of(scope, names))
    return buffer.getvalue()


def deserialize_persistables(program, data: bytes, executor) -> None:
    """Set the global scope's value of each persistable of `program` from serialize_persistables'
    bytes; a parameter whose stored shape differs from the program's is refused, as Paddle's."""
    _static_only("deserialize_persistables")
    if not isinstance(program, Program):
        raise TypeError(f"program type must be `fluid.Program`, but received `{type(program)}`")
    with np.load(io.BytesIO(data), allow_pickle=False) as archive:
        arrays = {name: archive[name] for name in archive.files}
    wanted = [v for v in program.list_vars() if is_persistable(v) and v.type != VarType.RAW]
    missing = [v.name for v in wanted if v.name not in arrays]
    if missing:
        raise FleetgraphError(f"deserialize_persistables: the data holds no value of {missing}")
    for var in wanted:
        value = arrays[var.name]
        if isinstance(var, Parameter) and tuple(value.shape) != tuple(var.shape):
            raise RuntimeError(
                f"Shape mismatch, program needs a parameter with shape ({tuple(var.shape)}), but the loaded "
                f"parameter ('{var.name}') has a shape of ({tuple(value.shape)})."
            )
    scope = global_scope()
    for var in wanted:
        scope.vars[var.name] = arrays[var.name]


def save_to_file(path: str, content: bytes) -> None:
    """Write `content` (bytes) to `path`."""
    if not isinstance(content, bytes):
        raise ValueError("'content' type should be bytes.")
    with open(path, "wb") as f:
        f.write(content)


def load_from_file(path: str) -> bytes:
    """The bytes of the file at `path`."""
    with open(path, "rb") as f:
        return f.read()
