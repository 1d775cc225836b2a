"""Build a pserver's main and startup programs from a `DistPlan`.

Steps of `build_pserver_program`:
  1. find, for each parameter block this pserver owns, the optimize ops of its parameter
     (regularization, per-parameter learning rate, the optimizer op) and the names they take on
     the block: the parameter and every variable shaped like it are cut to the block's rows
     ('w.block0', 'w_moment1_0.block0'), the gradient is the block's ('w@GRAD.block0');
  2. declare in block 0 every variable the sub-blocks name, and what the trainers send;
  3. one optimize sub-block per parameter block: sync with several trainers first sums the
     trainers' gradient copies and scales by 1/trainers; GEO only adds the pushed delta; a norm
     clip (sync) moves that average to the clip block, run at the send barrier, and the optimize
     block starts by scaling the averaged gradient (ps_clip.py);
  4. a learning-rate schedule's ops (LRSched, not per parameter) go to one more sub-block, first of
     the optimize blocks as Paddle's lr_decay_block: the pserver runs it once per optimization round
     (sync: once per step), so its step counter advances as a single process's does; a
     paddle.optimizer.lr scheduler's rate, which the trainers send, gets a block that sets it (the
     trainers' mean in sync), fed like a gradient so that it runs before the optimizers;
  5. block 0's one op: listen_and_serv, naming the endpoint, Fanin (trainers), the mode, the optimize
     blocks, the lr decay block, the clip block and which received variable feeds which block.

`build_pserver_startup` keeps the startup's init ops of the variables this pserver holds. For a
sliced variable a constant init is cut to the block's shape; a random one draws the whole variable
(its stream is keyed by the variable's name) and a `slice` keeps the block's rows, so the blocks
hold exactly the values a single process would start from. A distributed table's block, and the
optimizer state shaped like it, is a `lookup_sparse_table_init` instead: rows appear as ids touch
them, each with the value the whole variable's init gives it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import FleetgraphError, OpRole, Program, get_op_def, verify
from ..ir.errors import close_matches
from ..ir.program import Block, Operator, Variable, VarType
from .ps_clip import SCALE, SQUARES, append_scaled_grad, append_squares, declare_scale, is_clip_op
from .ps_plan import GEO, DistPlan, ParamPlan, VarBlock
from .ps_table import lazy_init_attrs, table_state_vars
from .ps_trainer import SCHEDULED, delta_name, is_averaging_op, scale_name, scheduled_lr_names


@dataclass(frozen=True)
class _Served:
    """A variable of the pserver program and where it comes from in the trainer's program."""

    name: str
    origin: str
    shape: tuple[int, ...]
    sliced: bool
    offset: int = 0  # first row of the block, when sliced
    table: bool = False  # a block of a distributed table or of its state: grown lazily


def build_pserver_program(program: Program, plan: DistPlan, endpoint: str) -> Program:
    _check_endpoint(plan, endpoint)
    pserver = Program()
    pserver.random_seed = program.random_seed
    root = pserver.global_block()
    origin = program.global_block()
    optimize_blocks, grad_to_block = [], []
    lr_block = _append_lr_block(pserver, origin, plan)  # step 4
    if lr_block is not None:
        optimize_blocks.append(lr_block)
    scheduled = _append_scheduled_lr_block(pserver, program, plan)
    if scheduled is not None:
        optimize_blocks.append(scheduled[1])
        grad_to_block.append(f"{scheduled[0]}:{scheduled[1]}")
    clip = plan.clip if plan.clip is not None and plan.clip.groups else None
    clip_block, clipped_here = None, []
    if clip is not None:
        clip_block = pserver._create_block(0)
        pserver._rollback()
        declare_scale(root, clip, [scale_name(plan, t) for t in range(plan.trainers)])
    for p, b in plan.blocks_on(endpoint):
        ops, served = _block_ops(origin, plan, p, b)  # step 1
        for s in served:  # step 2
            _declare(root, origin.var_recursive(s.origin), s)
        received = _received_names(plan, p, b)
        for name in received:
            root.create_var(name, b.shape, p.dtype, type=_received_type(origin, plan, p))
        sub = pserver._create_block(0)  # step 3
        clipped = clip.clipped_grad(p.param) if clip is not None else None
        if clipped is not None:  # averaged in the clip block, scaled here
            _append_merge(clip_block, plan, p, b, received)
            clipped_here.append((p.param, _merged_grad(plan, p, b), p.sparse))
            append_scaled_grad(sub, root, clip, p.param, _merged_grad(plan, p, b), _renamed_name(clipped, served))
        else:
            _append_merge(sub, plan, p, b, received)
        for op in ops:
            sub.append_op(op.type, _renamed(op.inputs, served), _renamed(op.outputs, served), op.attrs)
        pserver._rollback()
        optimize_blocks.append(sub.idx)
        grad_to_block.append(f"{_merged_grad(plan, p, b)}:{sub.idx}")
    if not optimize_blocks:  # a pserver that holds nothing: one empty optimize block, as Paddle's
        optimize_blocks.append(pserver._create_block(0).idx)
        pserver._rollback()
    if clip_block is not None:
        append_squares(clip_block, root, clip, clipped_here)
    root.append_op(
        "listen_and_serv",
        attrs={  # step 5
            "endpoint": endpoint,
            "pserver_id": plan.endpoints.index(endpoint),
            "Fanin": plan.trainers,
            "distributed_mode": plan.mode,
            "optimize_blocks": optimize_blocks,
            "grad_to_block_id": grad_to_block,
            "lr_decay_block_id": -1 if lr_block is None else lr_block,
            "k_steps": plan.k_steps,
            "clip_block_id": -1 if clip_block is None else clip_block.idx,
            "clip_vars": [] if clip_block is None else [SQUARES, SCALE],
            "op_role": int(OpRole.RPC),
        },
    )
    return verify(pserver)


def lr_schedule_ops(origin: Block) -> list[Operator]:
    """The ops of a learning-rate schedule: LRSched, not an optimizer's per-parameter ops."""
    return [op for op in origin.ops if op.attrs.get("op_role", 0) & OpRole.LRSched and not _optimize_op(op)]


def _optimize_op(op: Operator) -> bool:
    return bool(op.attrs.get("op_role", 0) & OpRole.Optimize)


def _append_lr_block(pserver: Program, origin: Block, plan: DistPlan) -> int | None:
    ops = lr_schedule_ops(origin) if plan.mode != GEO else []  # a GEO trainer steps its own schedule
    if not ops:
        return None
    root = pserver.global_block()
    for name in dict.fromkeys(n for op in ops for n in op.input_arg_names + op.output_arg_names):
        var = origin.var_recursive(name)
        if not root.has_var(name):
            root.create_var(name, var.shape, var.dtype, persistable=var.persistable)
    sub = pserver._create_block(0)
    for op in ops:
        sub.append_op(op.type, op.inputs, op.outputs, op.attrs)
    pserver._rollback()
    return sub.idx


def _append_scheduled_lr_block(pserver: Program, program: Program, plan: DistPlan) -> tuple[str, int] | None:
    """A paddle.optimizer.lr scheduler steps on the trainers, which send its rate each step: a block
    that sets the rate from what arrived (the trainers' mean in sync), run before the optimizers."""
    if plan.mode == GEO or program.lr_scheduler is None:
        return None
    lr = program.lr_scheduler._var_name
    origin = program.global_block().var(lr)
    root = pserver.global_block()
    received = scheduled_lr_names(plan, lr)
    if not root.has_var(lr):
        root.create_var(lr, origin.shape, origin.dtype, persistable=True)
    for name in received:
        root.create_var(name, origin.shape, origin.dtype)
    sub = pserver._create_block(0)
    role = {"op_role": int(OpRole.LRSched)}
    merged = lr + SCHEDULED
    if len(received) > 1:
        root.create_var(merged, origin.shape, origin.dtype)
        sub.append_op("sum", {"X": received}, {"Out": [merged]}, role)
        sub.append_op("scale", {"X": [merged]}, {"Out": [merged]}, {"scale": 1.0 / len(received), **role})
    sub.append_op("assign", {"X": [merged]}, {"Out": [lr]}, role)
    pserver._rollback()
    return merged, sub.idx


def build_pserver_startup(
    startup: Program, pserver_main: Program, plan: DistPlan, endpoint: str, origin_main: Program
) -> Program:
    _check_endpoint(plan, endpoint)
    served: dict[str, dict[str, _Served]] = {}  # origin name -> pserver name -> variable
    for p, b in plan.blocks_on(endpoint):
        for s in _block_ops(origin_main.global_block(), plan, p, b)[1]:
            if pserver_main.global_block().var(s.name).persistable:
                served.setdefault(s.origin, {})[s.name] = s
    for op in lr_schedule_ops(origin_main.global_block()) if plan.mode != GEO else []:  # the step counter
        for name in op.output_arg_names:
            var = pserver_main.global_block().var(name)
            if var.persistable:
                served.setdefault(name, {})[name] = _Served(name, name, tuple(var.shape), False)
    out = Program()
    out.random_seed = startup.random_seed
    block, source = out.global_block(), startup.global_block()
    for op in source.ops:
        for target in [s for name in op.output_arg_names for s in served.get(name, {}).values()]:
            _declare(block, source.var(target.origin), target)
            if target.table:
                attrs = lazy_init_attrs(op, target.origin, target.shape, target.offset, block.var(target.name).dtype)
                block.append_op("lookup_sparse_table_init", outputs={"Out": [target.name]}, attrs=attrs)
            elif target.sliced and get_op_def(op.type).random:
                _append_random_slice(block, source.var(target.origin), op, target)
            elif op.type == "assign" and op.input("X")[0] in served:  # a copy of a served variable (@SLOW)
                copied = [s for s in served[op.input("X")[0]].values() if s.offset == target.offset]
                block.append_op("assign", {"X": [copied[0].name]}, {"Out": [target.name]}, op.attrs)
            else:
                block.append_op(
                    op.type, op.inputs, {slot: [target.name] for slot in op.outputs}, _init_attrs(op, target)
                )
    return verify(out)


def _append_random_slice(block: Block, whole: Variable, op: Operator, target: _Served) -> None:
    """Draw the whole variable as the single-process startup does, keep this block's rows: the
    blocks of all pservers together equal the single-process values exactly."""
    if not block.has_var(whole.name):
        block.create_var(whole.name, whole.shape, whole.dtype)
    block.append_op(op.type, op.inputs, op.outputs, op.attrs)
    block.append_op(
        "slice",
        {"Input": [whole.name]},
        {"Out": [target.name]},
        {"axes": [0], "starts": [target.offset], "ends": [target.offset + target.shape[0]]},
    )


def _check_endpoint(plan: DistPlan, endpoint: str) -> None:
    if endpoint not in plan.endpoints:
        raise FleetgraphError(
            f"pserver endpoint {endpoint!r} is not one of the pservers {plan.endpoints}"
            f"{close_matches(endpoint, plan.endpoints)}"
        )


def _block_ops(origin: Block, plan: DistPlan, p: ParamPlan, b: VarBlock) -> tuple[list[Operator], list[_Served]]:
    """The parameter's optimize ops and the pserver variables they name on block `b` (step 1)."""
    lazy = set(table_state_vars(origin, p)) if p.table else set()
    if plan.mode == GEO:
        return [], [_Served(b.name, p.param, b.shape, b.split, b.offset, p.table)]
    ops = [
        op
        for op in origin.ops
        if op.attrs.get("op_role", 0) & OpRole.Optimize
        and op.attrs.get("op_role_var", [None])[0] == p.param
        and not (is_clip_op(op) and not _clips_on_pserver(plan))
        and not is_averaging_op(op)  # the trainers average the parameters they receive
    ]
    served = {
        p.param: _Served(b.name, p.param, b.shape, b.split, b.offset, p.table),
        p.grad: _Served(_merged_grad(plan, p, b), p.grad, b.shape, b.split, b.offset),
    }
    for op in ops:
        for name in op.input_arg_names + op.output_arg_names:
            if name not in served:
                var = origin.var_recursive(name)
                sliced = tuple(var.shape) == tuple(p.shape) and b.split
                served[name] = _Served(
                    b.sliced(name) if sliced else name,
                    name,
                    b.shape if sliced or name in lazy else var.shape,
                    sliced,
                    b.offset,
                    name in lazy,
                )
    return ops, list(served.values())


def _clips_on_pserver(plan: DistPlan) -> bool:
    """By-value clipping runs as it is on the pservers in sync mode (a norm clip is rebuilt there, see
    ps_clip.py); in the other modes the trainers clip, as Paddle's."""
    return plan.clip is not None and plan.clip.kind == "value"


def _renamed_name(name: str, served: list[_Served]) -> str:
    return _renamed({"X": [name]}, served)["X"][0]


def _merged_grad(plan: DistPlan, p: ParamPlan, b: VarBlock) -> str:
    return delta_name(b.name) if plan.mode == GEO else b.grad_name(p.grad)


def _received_names(plan: DistPlan, p: ParamPlan, b: VarBlock) -> list[str]:
    """What the trainers send for block `b`: one copy per trainer in sync mode with several."""
    if plan.mode == GEO:
        return [delta_name(b.name)]
    if plan.grad_suffix_trainer(0) is None:
        return [b.grad_name(p.grad)]
    return [b.grad_name(p.grad, t) for t in range(plan.trainers)]


def _received_type(origin: Block, plan: DistPlan, p: ParamPlan) -> str:
    """What the trainers send for `p`: its gradient as the program makes it, or in GEO the change of
    the parameter, sparse rows only for a table (a weight with a sparse gradient, such as nce's, moves
    as a whole between pushes, so its change goes out dense)."""
    if plan.mode == GEO:
        return VarType.SELECTED_ROWS if p.table else VarType.DENSE_TENSOR
    return origin.var_recursive(p.grad).type


def _append_merge(sub: Block, plan: DistPlan, p: ParamPlan, b: VarBlock, received: list[str]) -> None:
    if plan.mode == GEO:  # each trainer's delta counts 1/trainers, as GEO-SGD averages the trainers' moves
        role = {"op_role": int(OpRole.Optimize)}
        sub.append_op("scale", {"X": received}, {"Out": received}, {"scale": 1.0 / plan.trainers, **role})
        sub.append_op("sum", {"X": [b.name, received[0]]}, {"Out": [b.name]}, role)
    elif len(received) > 1:
        merged = b.grad_name(p.grad)
        role = {"op_role": int(OpRole.Optimize), "op_role_var": [p.param, p.grad]}
        sub.append_op("sum", {"X": received}, {"Out": [merged]}, role)
        sub.append_op("scale", {"X": [merged]}, {"Out": [merged]}, {"scale": 1.0 / plan.trainers, **role})


def _declare(block: Block, template: Variable, s: _Served) -> None:
    if not block.has_var(s.name):
        block.create_var(
            s.name,
            s.shape,
            template.dtype,
            type="selected_rows" if s.table else template.type,
            persistable=template.persistable,
            lod_level=template.lod_level,
        )


def _renamed(slots: dict, served: list[_Served]) -> dict:
    names = {s.origin: s.name for s in served}
    return {slot: [names.get(n, n) for n in vs] for slot, vs in slots.items()}


def _init_attrs(op: Operator, target: _Served) -> dict:
    attrs = dict(op.attrs)
    if target.sliced:
        if "shape" not in attrs:
            raise FleetgraphError(
                f"pserver startup: cannot cut init op {op.type} of {target.origin!r} to block "
                f"{target.name!r}; expected an init op with a 'shape' attr"
            )
        attrs["shape"] = list(target.shape)
    return attrs
