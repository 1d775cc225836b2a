"""Programs as JSON (stable key order, exact round trip) and persistable values as .npz, never pickle."""

from __future__ import annotations

import json
import os

import numpy as np

from .errors import FleetgraphError
from .program import Block, Operator, Parameter, Program, Variable
from .registry import get_op_def

FORMAT = "fleetgraph.program"
FORMAT_VERSION = 1


def program_to_dict(program: Program) -> dict:
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "random_seed": program.random_seed,
        "blocks": [
            {
                "idx": b.idx,
                "parent_idx": b.parent_idx,
                "forward_block_idx": b.forward_block_idx,
                "vars": [v.to_dict() for v in b.vars.values()],
                "ops": [op.to_dict() for op in b.ops],
            }
            for b in program.blocks
        ],
    }


def program_from_dict(data: dict, *, _keep_param_attrs_from: Program | None = None) -> Program:
    """Rebuild a program exactly as saved: ops are not re-inferred, only their types checked."""
    if data.get("format") != FORMAT:
        raise FleetgraphError(f"program JSON: expected format {FORMAT!r}, got {data.get('format')!r}")
    if data.get("version") != FORMAT_VERSION:
        raise FleetgraphError(f"program JSON: expected version {FORMAT_VERSION}, got {data.get('version')!r}")
    program = Program()
    program.random_seed = data.get("random_seed", 0)
    program.blocks = []
    for bd in data["blocks"]:
        block = Block(program, bd["idx"], bd["parent_idx"])
        block.forward_block_idx = bd.get("forward_block_idx", -1)
        program.blocks.append(block)
        for vd in bd["vars"]:
            block.vars[vd["name"]] = _var_from_dict(block, vd, _keep_param_attrs_from)
        for od in bd["ops"]:
            get_op_def(od["type"])
            block.ops.append(Operator(block, od["type"], od["inputs"], od["outputs"], od["attrs"]))
    return program


def _var_from_dict(block: Block, vd: dict, source: Program | None) -> Variable:
    names = ("type", "lod_level", "persistable", "stop_gradient", "is_data", "need_check_feed")
    kw = {k: vd[k] for k in names if k in vd}
    if "parameter" not in vd:
        return Variable(block, vd["name"], vd["shape"], vd["dtype"], **kw)
    pd = vd["parameter"]
    param = Parameter(
        block,
        vd["name"],
        vd["shape"],
        vd["dtype"],
        trainable=pd["trainable"],
        optimize_attr=pd.get("optimize_attr"),
        **kw,
    )
    param.is_distributed = bool(pd.get("is_distributed", False))
    if source is not None and block.idx < len(source.blocks):
        original = source.blocks[block.idx].vars.get(param.name)
        if isinstance(original, Parameter):
            param.initializer, param.regularizer = original.initializer, original.regularizer
            param.need_clip = original.need_clip
    return param


def program_to_json(program: Program) -> str:
    return json.dumps(program_to_dict(program), indent=1)


def program_from_json(text: str) -> Program:
    return program_from_dict(json.loads(text))


def save_program(program: Program, path: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(program_to_json(program))
        f.write("\n")


def load_program(path: str) -> Program:
    with open(path, encoding="utf-8") as f:
        try:
            return program_from_json(f.read())
        except json.JSONDecodeError as e:
            raise FleetgraphError(f"{path}: not a program JSON file ({e})") from None


def save_arrays(arrays: dict[str, np.ndarray], path: str) -> None:
    """Write named arrays to one .npz file (written to a temporary name, then renamed)."""
    tmp = path + ".tmp.npz"
    np.savez(tmp, **{k: np.asarray(v) for k, v in arrays.items()})
    os.replace(tmp, path)


def load_arrays(path: str) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as data:
        return {k: data[k] for k in data.files}
