"""Distributed tables in the parameter-server rewrite.

A table the plan marks `table` lives on the pservers only. The trainer's lookups of it become one
`distributed_lookup_table` that fetches the rows of the batch's ids; its startup gives the table a
`fake_init` placeholder (a shape, no memory); its sparse gradient is split and sent as any other.
Each pserver holds its blocks of the table, and of the optimizer state shaped like it, as lazily
grown tables (`lookup_sparse_table_init`); so does a GEO trainer for its local copy.

Steps of `replace_lookups` (trainer, every mode but GEO):
  1. take the table's lookup ops out of the block, grouped by op type (lookup_table, lookup_table_v2);
  2. for each group, insert one distributed_lookup_table right after the last op that writes one of
     its ids (Paddle's place for it), which must come before the first op that reads a lookup's output;
  3. where ids are written after a lookup is read (a model computes each slot's ids, then looks them
     up and pools them, slot after slot), the ops computing the ids move up to before the first such
     reader, together with what they read, when none of them needs a lookup's output.
"""

from __future__ import annotations

from ..ir import FleetgraphError, OpRole, get_op_def
from ..ir.program import Block, Operator
from ..ops.counter_rng import INIT_DRAWS
from .ps_plan import LOOKUP_OPS, ParamPlan

LAZY_INITS = ("fill_constant", *INIT_DRAWS)
_INIT_ATTRS = ("value", "min", "max", "mean", "std")


def replace_lookups(block: Block, p: ParamPlan, trainer_id: int) -> None:
    lookups = [op for op in block.ops if op.type in LOOKUP_OPS and op.input("W") == [p.param]]
    block.ops = [op for op in block.ops if op not in lookups]  # step 1
    for version in dict.fromkeys(op.type for op in lookups):  # step 2
        group = [op for op in lookups if op.type == version]
        pads = sorted({op.attrs.get("padding_idx", -1) for op in group})
        if len(pads) > 1:
            raise FleetgraphError(
                f"transpile: table {p.param!r} is looked up with padding_idx {pads}; expected one padding_idx"
            )
        ids = [op.input("Ids")[0] for op in group]
        outs = [op.output("Out")[0] for op in group]
        at = _insert_point(block, p.param, ids, outs)
        block._insert_op(
            at,
            "distributed_lookup_table",
            {"Ids": ids, "W": [p.param]},
            {"Outputs": outs},
            {
                "table_names": [b.name for b in p.blocks],
                "height_sections": p.sections,
                "endpoints": [b.endpoint for b in p.blocks],
                "padding_idx": pads[0],
                "trainer_id": trainer_id,
                "lookup_table_version": version,
                "op_role": int(OpRole.Forward),
            },
        )


def _insert_point(block: Block, table: str, ids: list[str], outs: list[str]) -> int:
    writers = [i for i, op in enumerate(block.ops) if set(op.output_arg_names) & set(ids)]
    at = max(writers) + 1 if writers else 0
    readers = [i for i, op in enumerate(block.ops) if set(op.input_arg_names) & set(outs)]
    if not readers or min(readers) >= at:
        return at
    return _hoist_id_producers(block, table, ids, outs, min(readers))  # step 3


def _hoist_id_producers(block: Block, table: str, ids: list[str], outs: list[str], first_reader: int) -> int:
    """Move the ops at or after `first_reader` that the ids depend on up to `first_reader`; returns
    the index right after them."""
    needed, moved = set(ids), []
    for i in range(len(block.ops) - 1, first_reader - 1, -1):
        op = block.ops[i]
        if set(op.output_arg_names) & needed and not op.attrs.get("op_role", 0) & (OpRole.Backward | OpRole.Optimize):
            moved.append(i)
            needed |= set(op.input_arg_names)
    if needed & set(outs) or any(get_op_def(block.ops[i].type).side_effect for i in moved):
        op = block.ops[first_reader]
        raise FleetgraphError(
            f"transpile: op {first_reader} ({op.type}) reads a lookup of table {table!r} before the ids of the "
            "other lookups are computed, and computing them needs a lookup's output; expected the ids of a "
            "table's lookups computed before any lookup is read"
        )
    ops = [block.ops[i] for i in sorted(moved)]
    block.ops = (
        block.ops[:first_reader] + ops + [op for i, op in enumerate(block.ops) if i >= first_reader and i not in moved]
    )
    block.program._bump()
    return first_reader + len(ops)


def table_state_vars(block: Block, p: ParamPlan) -> list[str]:
    """The table and the optimizer state shaped like it (moments, velocity): what grows lazily."""
    names = [p.param]
    for op in block.ops:
        if op.attrs.get("op_role", 0) & OpRole.Optimize and op.attrs.get("op_role_var", [None])[0] == p.param:
            for name in op.input_arg_names + op.output_arg_names:
                var = block._find_var_recursive(name)
                state = var is not None and var.persistable and tuple(var.shape) == tuple(p.shape)
                if state and name not in names:
                    names.append(name)
    return names


def lazy_init_attrs(init: Operator, var_name: str, shape, offset: int, dtype: str) -> dict:
    """lookup_sparse_table_init's attrs for rows [offset, offset + shape[0]) of `var_name`, whose
    startup init op is `init`: a row is created as `init` would fill it in the whole variable."""
    if init.type not in LAZY_INITS:
        raise FleetgraphError(
            f"transpile: table variable {var_name!r} is initialized by {init.type}; a table the pservers grow "
            f"lazily needs one of {', '.join(LAZY_INITS)}"
        )
    attrs = {
        "shape": [int(d) for d in shape],
        "dtype": dtype,
        "offset": int(offset),
        "init_type": init.type,
        "seed": int(init.attrs.get("seed", 0)),
        "rng_key": var_name,
    }
    attrs.update({k: float(init.attrs[k]) for k in _INIT_ATTRS if k in init.attrs})
    if init.type == "fill_constant" and init.attrs.get("str_value"):
        attrs["value"] = float(init.attrs["str_value"])
    return attrs
