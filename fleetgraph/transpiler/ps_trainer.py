"""Build a trainer's main and startup programs from a `DistPlan`.

Steps of `build_trainer_program`:
  1. clone the program and drop its optimize ops, which the pservers run (GEO keeps them: the
     trainer updates a local copy); async and half-async keep gradient clipping, as backward ops (a
     trainer clips its own gradient and sends the clipped one, as Paddle's); sync mode clips the
     averaged gradient on the pservers (ps_clip.py);
  2. in sync mode with several trainers, rename each gradient to this trainer's copy
     ('w@GRAD.trainer_0');
  3. right after each gradient's last producer, cut it into the plan's blocks (split_byref, or
     split_selected_rows for a sparse gradient) and send the blocks to their pservers; GEO instead
     sends each parameter after the optimize ops, the runtime turning it into a delta every k steps
     (a table's send also takes its sparse gradient: the rows touched);
  4. a paddle.optimizer.lr scheduler's rate (the variable the executor sets each run) goes to every
     pserver with the step's first send, as 'learning_rate_0@SCHEDULED'; sync: one send_barrier
     after the last send, and with a norm clip the scale it takes from the pservers' answers, sent
     back to them (ps_clip.py, step 3);
  5. recv every parameter block but the tables' (GEO: the runtime pulls after pushing), then sync:
     fetch_barrier; an async step reads what a background thread last pulled, as Paddle's async
     communicator's receiving thread does (half-async's sends are added up by a background thread);
  6. concat the blocks of each sliced parameter back into the parameter, then run the ops that
     average the parameters (ExponentialMovingAverage, ModelAverage: optimize ops of the trainer,
     on the parameters just received, as one process averages them after each update);
     with `runtime_split` (Paddle's runtime_split_send_recv) steps 3 and 6 add no ops: send takes
     the whole gradient with the blocks' `sections` and names, recv puts the blocks it names back
     into the parameter, and the runtime cuts and joins them (the same blocks on the wire);
  7. the lookups of each distributed table become one distributed_lookup_table (not in GEO, where
     the trainer looks up its local copy): see ps_table.py;
  8. drop variables no op names any more, and verify.

`build_trainer_startup` keeps the startup's init ops of the variables the trainer still uses, then
receives every parameter from the pservers (steps 5 and 6), so all trainers start from the same
values. A distributed table gets a `fake_init` placeholder instead (appended last, as Paddle's); a
GEO trainer's local copy of a table, and of its optimizer state, grows lazily from the same init.
"""

from __future__ import annotations

from ..ir import OpRole, Program, verify
from ..ir.program import Block
from .ps_clip import SCALE, SQUARES, append_trainer_scale, is_clip_op
from .ps_plan import ASYNC, GEO, HALF_ASYNC, DistPlan, ParamPlan
from .ps_table import lazy_init_attrs, replace_lookups, table_state_vars

RPC, DIST = int(OpRole.RPC), int(OpRole.Dist)


def build_trainer_program(program: Program, plan: DistPlan, trainer_id: int, *, runtime_split: bool = False) -> Program:
    trainer = program.clone()
    block = trainer.global_block()
    averaging = [op for op in block.ops if is_averaging_op(op) and op.attrs.get("op_role", 0) & OpRole.Optimize]
    if plan.mode != GEO:  # step 1
        for op in block.ops if not plan.sync else ():
            if is_clip_op(op):  # the trainer clips its own gradient before sending it, as Paddle's
                op.attrs["op_role"] = int(OpRole.Backward)
        block.ops = [op for op in block.ops if not op.attrs.get("op_role", 0) & (OpRole.Optimize | OpRole.LRSched)]
    suffix = plan.grad_suffix_trainer(trainer_id)
    if plan.mode != GEO and trainer.lr_scheduler is not None:  # step 4
        _prepend_scheduled_lr_send(block, plan, trainer.lr_scheduler._var_name, trainer_id)
    for p in plan.params:
        if plan.mode == GEO:  # step 3, GEO
            _append_geo_send(block, p, trainer_id, plan.k_steps)
            continue
        grad = p.grad
        if suffix is not None and len(p.blocks) == 1:  # step 2
            grad = _rename_var(block, p.grad, p.blocks[0].grad_name(p.grad, suffix))
        _insert_send(block, plan, p, grad, trainer_id, runtime_split)  # step 3
    if plan.sync:  # step 4
        norm_clip = plan.clip is not None and plan.clip.groups
        if norm_clip:  # what the pservers answer: each one's sums of squares, one per norm group
            block.create_var(SQUARES, [len(plan.endpoints), len(plan.clip.groups)], plan.clip.dtype)
        block.append_op(
            "send_barrier",
            outputs={"Out": [SQUARES]} if norm_clip else None,
            attrs={"endpoints": plan.endpoints, "trainer_id": trainer_id, "op_role": RPC},
        )
        if norm_clip:
            append_trainer_scale(block, plan.clip, plan.endpoints, scale_name(plan, trainer_id), trainer_id)
    if plan.mode != GEO:
        background = plan.mode == ASYNC
        append_recv_params(
            block, plan, trainer_id, fetch_barrier=plan.sync, background=background, joined=runtime_split
        )
        for op in averaging:  # step 6
            block.append_op(op.type, op.inputs, op.outputs, op.attrs)
        for p in plan.tables:  # step 7
            replace_lookups(block, p, trainer_id)
    drop_unused_vars(block)  # step 8
    return verify(trainer)


def build_trainer_startup(startup: Program, trainer_main: Program, plan: DistPlan, trainer_id: int) -> Program:
    out = startup.clone()
    block = out.global_block()
    used = {n for b in trainer_main.blocks for op in b.ops for n in op.input_arg_names + op.output_arg_names}
    block.ops = [op for op in block.ops if any(n in used for n in op.output_arg_names)]
    if plan.mode == GEO:
        _grow_tables_lazily(block, trainer_main, plan)
    else:
        tables = {p.param for p in plan.tables}
        block.ops = [op for op in block.ops if not set(op.output_arg_names) & tables]
    append_recv_params(block, plan, trainer_id, fetch_barrier=True)
    for p in plan.tables if plan.mode != GEO else ():
        block.append_op("fake_init", outputs={"Out": [p.param]}, attrs={"shape": list(p.shape), "dtype": p.dtype})
    drop_unused_vars(block)
    return verify(out)


def _grow_tables_lazily(block: Block, trainer_main: Program, plan: DistPlan) -> None:
    """A GEO trainer's copy of each table (and of the optimizer state shaped like it) starts empty and
    grows as ids touch it, each row as the variable's init op would fill it."""
    for p in plan.tables:
        for name in table_state_vars(trainer_main.global_block(), p):
            var = block.var(name)
            var.type = "selected_rows"
            for i, op in enumerate(block.ops):
                if op.output_arg_names == [name]:
                    attrs = lazy_init_attrs(op, name, p.shape, 0, var.dtype)
                    block._remove_op(i)
                    block._insert_op(i, "lookup_sparse_table_init", outputs={"Out": [name]}, attrs=attrs)
                    break


def append_recv_params(
    block: Block,
    plan: DistPlan,
    trainer_id: int,
    *,
    fetch_barrier: bool,
    background: bool = False,
    joined: bool = False,
) -> None:
    """recv each parameter's blocks (step 5), fetch_barrier, then concat sliced ones (step 6); async
    steps read the values a background thread pulls (`background`); `joined`: one recv output, the
    parameter, for all its blocks (runtime_split_send_recv)."""
    for p in [p for p in plan.params if not p.table]:
        names = [b.name for b in p.blocks]
        if not joined:
            for b in p.blocks:
                if not block.has_var(b.name):
                    param = block.var(p.param)
                    block.create_var(b.name, b.shape, p.dtype, type=param.type)
        block.append_op(
            "recv",
            outputs={"Out": [p.param] if joined else names},
            attrs={
                "epmap": [b.endpoint for b in p.blocks],
                "recv_varnames": names,
                "geo_base": plan.mode == GEO,
                "background": background,
                "trainer_id": trainer_id,
                "op_role": RPC,
            },
        )
    if fetch_barrier:
        block.append_op("fetch_barrier", attrs={"endpoints": plan.endpoints, "trainer_id": trainer_id, "op_role": RPC})
    for p in plan.params:
        if len(p.blocks) > 1 and not p.table and not joined:
            block.append_op(
                "concat", {"X": [b.name for b in p.blocks]}, {"Out": [p.param]}, {"axis": 0, "op_role": DIST}
            )


def _insert_send(block: Block, plan: DistPlan, p: ParamPlan, grad: str, trainer_id: int, runtime_split: bool) -> None:
    index = _last_writer(block, grad) + 1
    role_var = [p.param, grad]
    sent = names = [grad]
    if len(p.blocks) > 1 and runtime_split:
        names = [b.grad_name(p.grad, plan.grad_suffix_trainer(trainer_id)) for b in p.blocks]
    elif len(p.blocks) > 1:
        sent = names = [b.grad_name(p.grad, plan.grad_suffix_trainer(trainer_id)) for b in p.blocks]
        grad_var = block.var(grad)
        for b, name in zip(p.blocks, sent):
            block.create_var(name, b.shape, p.dtype, type=grad_var.type)
        split, attrs = (
            ("split_selected_rows", {"height_sections": p.sections})
            if p.sparse
            else ("split_byref", {"sections": p.sections})
        )
        block._insert_op(
            index, split, {"X": [grad]}, {"Out": sent}, {**attrs, "op_role": DIST, "op_role_var": role_var}
        )
        index += 1
    block._insert_op(
        index,
        "send",
        {"X": sent},
        attrs={
            "epmap": [b.endpoint for b in p.blocks],
            "sections": p.sections,
            "send_varnames": names,
            "merge_add": plan.mode == HALF_ASYNC,
            "is_sparse": p.sparse,
            "trainer_id": trainer_id,
            "op_role": RPC,
            "op_role_var": role_var,
        },
    )


SCHEDULED = "@SCHEDULED"


AVERAGING_SCOPES = ("/moving_average/", "/move_average/")


def is_averaging_op(op) -> bool:
    """An op of ExponentialMovingAverage or ModelAverage (by their name scopes, Paddle's)."""
    scope = op.attrs.get("op_namescope", "/")
    return any(s in scope for s in AVERAGING_SCOPES)


def scale_name(plan: DistPlan, trainer_id: int) -> str:
    """The name under which a trainer sends the clip scale: its own copy in sync with several."""
    suffix = plan.grad_suffix_trainer(trainer_id)
    return SCALE if suffix is None else f"{SCALE}.trainer_{suffix}"


def scheduled_lr_names(plan: DistPlan, lr: str) -> list[str]:
    """What the pservers receive of a scheduler's rate: one copy per trainer in sync with several."""
    if plan.grad_suffix_trainer(0) is None:
        return [lr + SCHEDULED]
    return [f"{lr}{SCHEDULED}.trainer_{t}" for t in range(plan.trainers)]


def _prepend_scheduled_lr_send(block: Block, plan: DistPlan, lr: str, trainer_id: int) -> None:
    name = scheduled_lr_names(plan, lr)[0 if plan.grad_suffix_trainer(0) is None else trainer_id]
    block._insert_op(
        0,
        "send",
        {"X": [lr] * len(plan.endpoints)},
        attrs={
            "epmap": list(plan.endpoints),
            "send_varnames": [name] * len(plan.endpoints),
            "trainer_id": trainer_id,
            "op_role": RPC,
        },
    )


def _append_geo_send(block: Block, p: ParamPlan, trainer_id: int, k_steps: int) -> None:
    block.append_op(
        "send",
        {"X": [p.param, p.grad] if p.table else [p.param]},
        attrs={
            "epmap": [b.endpoint for b in p.blocks],
            "sections": p.sections,
            "send_varnames": [delta_name(b.name) for b in p.blocks],
            "is_sparse": p.sparse,
            "k_steps": k_steps,
            "trainer_id": trainer_id,
            "op_role": RPC,
            "op_role_var": [p.param, p.grad],
        },
    )


def delta_name(block_name: str) -> str:
    """The name under which GEO trainers push a parameter block's change."""
    return f"{block_name}.delta"


def _last_writer(block: Block, name: str) -> int:
    for i in range(len(block.ops) - 1, -1, -1):
        if name in block.ops[i].output_arg_names:
            return i
    raise ValueError(f"transpile: no op of block {block.idx} writes {name!r}")


def _rename_var(block: Block, old: str, new: str) -> str:
    var = block.var(old)
    block._remove_var(old)
    var.name = new
    block._add_var(var)
    for op in block.ops:
        if old in op.input_arg_names:
            op._rename_input(old, new)
        if old in op.output_arg_names:
            op._rename_output(old, new)
        if old in op.attrs.get("op_role_var", []):
            op.attrs["op_role_var"] = [new if n == old else n for n in op.attrs["op_role_var"]]
    return new


def drop_unused_vars(block: Block) -> None:
    used = {n for op in block.ops for n in op.input_arg_names + op.output_arg_names}
    for name in [n for n, v in block.vars.items() if n not in used and not v.is_data]:
        block._remove_var(name)
