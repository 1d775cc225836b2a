"""The parameter-server plan: which row block of which parameter lives on which pserver.

One `DistPlan` is computed from the program and the config, and both the trainer and the pserver
builders read it, so the two sides cannot disagree. Steps of `make_plan`:
  1. find the (param, grad) pairs from the optimize ops, in their order (sorted by name, as Paddle's
     optimizer emits them), and which parameters are distributed tables: embeddings looked up
     sparsely, which only the pservers hold (Paddle's remote-prefetch tables). nce's and hsigmoid's
     weights with is_sparse (whose ops carry Paddle's remote_prefetch) stay with the trainers, which
     send SelectedRows gradients and receive the updated blocks each step, as for any parameter;
  2. cut each parameter into row blocks (Paddle's `slice_variable`: at most one block per pserver,
     at least `min_block_size` elements each, whole rows);
  3. dispatch the blocks, in order, to the pservers with the split method (whole parameters, when
     not sliced, in an order shuffled by the program's random_seed, as Paddle's transpiler does);
  4. sync mode: the gradient clip, which the pservers apply to the averaged gradients (ps_clip.py).
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field

import numpy as np

from ..ir import FleetgraphError, OpRole, Program, VarType
from ..ir.errors import close_matches
from .ps_clip import ClipPlan, plan_clip

SYNC, ASYNC, HALF_ASYNC, GEO = 0, 1, 2, 3  # Paddle's DistributedMode, also listen_and_serv's attr
MODE_NAMES = {SYNC: "sync", ASYNC: "async", HALF_ASYNC: "half_async", GEO: "geo"}


class PSDispatcher:
    """Paddle's base of the dispatchers: `eps` the pservers, `dispatch(varlist)` an endpoint for each
    variable or block (anything with a `name`, or a `name()` as Paddle's VarBlock has), `reset()`."""

    def __init__(self, pserver_endpoints: list[str]) -> None:
        self._eps = list(pserver_endpoints)
        self._step = 0

    @property
    def eps(self) -> list[str]:
        return self._eps

    def reset(self) -> None:
        self._step = 0

    def dispatch(self, varlist) -> list[str]:
        raise NotImplementedError


def _name_of(var) -> str:
    name = getattr(var, "name", var)
    return name() if callable(name) else str(name)


class RoundRobin(PSDispatcher):
    """Blocks go to the pservers in turn; the turn carries over from one dispatch to the next until
    reset(), as Paddle's."""

    def dispatch(self, varlist) -> list[str]:
        out = []
        for _ in varlist:
            out.append(self._eps[self._step])
            self._step = (self._step + 1) % len(self._eps)
        return out


class HashName(PSDispatcher):
    """A block goes to the pserver its name hashes to (CRC-32: unlike Python's salted `hash`, every
    process gets the same answer). Where that pserver already holds a block of the same parameter,
    the next free one takes it: two blocks of one parameter on one pserver would share that
    parameter's unsliced optimizer state (Adam's beta powers) and update it twice a step."""

    def dispatch(self, varlist) -> list[str]:
        n, taken, out = len(self._eps), {}, []
        for b in varlist:
            used = taken.setdefault(getattr(b, "param", None), set())
            i = zlib.crc32(_name_of(b).encode()) % n
            while i in used and len(used) < n:
                i = (i + 1) % n
            used.add(i)
            out.append(self._eps[i])
        return out


@dataclass(frozen=True)
class VarBlock:
    """Rows [offset, offset + rows) of a parameter, kept on `endpoint`."""

    param: str
    index: int
    offset: int
    rows: int
    shape: tuple[int, ...]
    endpoint: str
    split: bool  # the parameter has more than one block, so names carry '.block<i>'

    @property
    def name(self) -> str:
        return f"{self.param}.block{self.index}" if self.split else self.param

    def sliced(self, var_name: str) -> str:
        """The name of this block's slice of a variable shaped like the parameter."""
        return f"{var_name}.block{self.index}" if self.split else var_name

    def grad_name(self, grad: str, trainer_id: int | None = None) -> str:
        """'w@GRAD.block0', with '.trainer_<id>' when trainers send separately named copies."""
        name = self.sliced(grad)
        return name if trainer_id is None else f"{name}.trainer_{trainer_id}"

    @property
    def numel(self) -> int:
        return math.prod(self.shape)


@dataclass
class ParamPlan:
    param: str
    grad: str
    shape: tuple[int, ...]
    dtype: str
    sparse: bool
    blocks: list[VarBlock] = field(default_factory=list)
    # a distributed table: only the pservers hold it, each block's rows created as ids touch them;
    # trainers fetch the rows of a batch (distributed_lookup_table) and push their sparse gradients
    table: bool = False

    @property
    def sections(self) -> list[int]:
        return [b.rows for b in self.blocks]

    def row_bytes(self) -> int:
        """Bytes of one row of the parameter."""
        return math.prod(self.shape[1:]) * _itemsize(self.dtype)


@dataclass
class DistPlan:
    endpoints: list[str]
    trainers: int
    mode: int
    params: list[ParamPlan]
    k_steps: int = 0
    clip: ClipPlan | None = None  # sync: the clip the pservers apply to the averaged gradients

    @property
    def sync(self) -> bool:
        return self.mode == SYNC

    def param(self, name: str) -> ParamPlan:
        for p in self.params:
            if p.param == name:
                return p
        raise FleetgraphError(f"plan: no parameter {name!r}{close_matches(name, [p.param for p in self.params])}")

    def blocks_on(self, endpoint: str) -> list[tuple[ParamPlan, VarBlock]]:
        return [(p, b) for p in self.params for b in p.blocks if b.endpoint == endpoint]

    def grad_suffix_trainer(self, trainer_id: int) -> int | None:
        """Sync training with several trainers names each trainer's gradient copies apart."""
        return trainer_id if self.sync and self.trainers > 1 else None

    @property
    def tables(self) -> list[ParamPlan]:
        return [p for p in self.params if p.table]

    def bytes_per_step(self, endpoint: str) -> tuple[int, int]:
        """(bytes each trainer sends to, bytes it receives from) `endpoint` in one step for the
        parameters that travel whole (an upper bound for a sparse gradient); a table's traffic
        depends on the ids of the batch instead (`bytes_per_id`)."""
        total = sum(b.numel * _itemsize(p.dtype) for p, b in self.blocks_on(endpoint) if not p.table)
        return total, total

    def bytes_per_id(self, endpoint: str) -> tuple[int, int]:
        """(bytes sent, bytes received) per distinct id of a batch that falls in a table block on
        `endpoint`: the id asked for and its gradient row pushed (id + row), the row received."""
        rows = [p.row_bytes() for p, b in self.blocks_on(endpoint) if p.table]
        return sum(8 + 8 + r for r in rows), sum(rows)

    def __str__(self) -> str:
        lines = [
            f"DistPlan: {MODE_NAMES[self.mode]}, {self.trainers} trainers, {len(self.endpoints)} pservers"
            + (f", GEO every {self.k_steps} steps" if self.mode == GEO else "")
        ]
        for ep in self.endpoints:
            sent, received = self.bytes_per_step(ep)
            id_sent, id_received = self.bytes_per_id(ep)
            per_id = (f" + {id_sent} B", f" + {id_received} B") if id_sent else ("", "")
            lines.append(
                f"  pserver {ep}: sends {_fmt_bytes(sent)}{per_id[0]}/step to it, "
                f"receives {_fmt_bytes(received)}{per_id[1]}/step from it (per trainer"
                + (", per distinct id of a batch in its tables)" if id_sent else ")")
            )
            for p, b in self.blocks_on(ep):
                kind = ", distributed table" if p.table else ", sparse" if p.sparse else ""
                lines.append(
                    f"    {b.name}: rows {b.offset}:{b.offset + b.rows} of {p.param} "
                    f"{list(p.shape)} -> {list(b.shape)} {p.dtype}{kind}"
                )
        if self.clip is not None:
            lines.append(str(self.clip))
        return "\n".join(lines)


def _itemsize(dtype: str) -> int:
    return {"float16": 2, "float32": 4, "float64": 8, "int32": 4, "int64": 8}.get(dtype, 4)


def _fmt_bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def params_grads_of(program: Program) -> list[tuple[str, str]]:
    """(param, grad) names from the optimize ops that update parameters, in program order."""
    pairs, seen = [], set()
    block = program.global_block()
    for op in block.ops:
        role_var = op.attrs.get("op_role_var", [])
        if op.attrs.get("op_role", 0) & OpRole.Optimize and len(role_var) == 2 and "Param" in op.inputs:
            param, grad = role_var
            if param not in seen:
                seen.add(param)
                pairs.append((param, grad))
    if not pairs:
        raise FleetgraphError(
            "transpile: the program has no optimize ops; expected a program after optimizer.minimize(loss)"
        )
    return pairs


LOOKUP_OPS = ("lookup_table", "lookup_table_v2")


def distributed_tables(program: Program) -> set[str]:
    """Tables the pservers hold alone: the W of lookups with is_sparse (Paddle's `remote_prefetch`,
    `is_distributed` and `sparse_embedding` tables all are), or a SELECTED_ROWS parameter."""
    block, sparse, dense = program.global_block(), {}, set()
    for op in block.ops:
        if op.type not in LOOKUP_OPS:
            continue
        w = op.input("W")[0]
        if op.attrs.get("is_sparse") or block.var(w).type == VarType.SELECTED_ROWS:
            sparse.setdefault(w, op)
        elif op.attrs.get("is_distributed"):
            raise FleetgraphError(
                f"transpile: embedding {w!r} has is_distributed=True but is_sparse=False; a table the "
                "pservers hold takes sparse gradients, expected is_sparse=True"
            )
        else:
            dense.add(w)
    both = sorted(dense & set(sparse))
    if both:
        raise FleetgraphError(
            f"transpile: table {both[0]!r} is looked up both sparsely and densely; expected every lookup of "
            "one table to set the same is_sparse"
        )
    return set(sparse)


def slice_rows(shape: tuple[int, ...], slice_count: int, min_block_size: int) -> list[int]:
    """Rows per block, as Paddle's slice_variable: blocks of about numel / count elements, at least
    min_block_size, rounded up to whole rows."""
    numel = math.prod(shape)
    split_count = max(1, min(slice_count, numel // min_block_size))
    block_size = math.ceil(numel / split_count)
    width = math.prod(shape[1:]) if len(shape) > 1 else 1
    if block_size % width:
        block_size += width - block_size % width
    rows_per_block = block_size // width
    rows, sections = shape[0], []
    while rows > 0:
        sections.append(min(rows_per_block, rows))
        rows -= sections[-1]
    return sections


def make_plan(
    program: Program,
    endpoints: list[str],
    trainers: int,
    *,
    mode: int,
    slice_var_up: bool = True,
    min_block_size: int = 8192,
    split_method=RoundRobin,
    k_steps: int = 0,
) -> DistPlan:
    block = program.global_block()
    params = []
    tables = distributed_tables(program)
    pairs = params_grads_of(program)
    clip = plan_clip(program, [p for p, _ in pairs]) if mode == SYNC else None  # step 4
    for param, grad in pairs:  # step 1
        grad = clip.unclipped_grad(param, grad) if clip is not None else grad
        var = block.var(param)
        grad_var = block._find_var_recursive(grad)
        sparse = grad_var is not None and grad_var.type == VarType.SELECTED_ROWS
        if any(d < 0 for d in var.shape):
            raise FleetgraphError(f"transpile: parameter {param!r} has shape {list(var.shape)}; expected it known")
        sections = (
            slice_rows(var.shape, len(endpoints), min_block_size)
            if slice_var_up and var.shape
            else [var.shape[0] if var.shape else 1]
        )
        plan = ParamPlan(param, grad, var.shape, var.dtype, sparse, table=param in tables)
        offset = 0
        for i, rows in enumerate(sections):  # step 2
            shape = (rows,) + tuple(var.shape[1:]) if var.shape else ()
            plan.blocks.append(VarBlock(param, i, offset, rows, shape, "", len(sections) > 1))
            offset += rows
        params.append(plan)
    if not slice_var_up:  # Paddle deals whole parameters out in an order shuffled by the program's seed
        order = list(range(len(params)))
        np.random.RandomState(program.random_seed).shuffle(order)
        params = [params[i] for i in order]
    all_blocks = [b for p in params for b in p.blocks]
    placed = dict(zip([b.name for b in all_blocks], split_method(endpoints).dispatch(all_blocks)))
    for p in params:  # step 3
        p.blocks = [VarBlock(b.param, b.index, b.offset, b.rows, b.shape, placed[b.name], b.split) for b in p.blocks]
    return DistPlan(list(endpoints), trainers, mode, params, k_steps, clip)


@dataclass(frozen=True)
class RolePlan:
    """The distribution plan a parameter-server role's program carries (`Program.dist_plan`): the
    job's plan, the single-process program it was made from, and which trainer (None on a pserver)
    or pserver (None on a trainer) runs it. Persistence reads it from the program it is given, so
    a trainer's save gathers its pservers' state and nothing has to look the transpiler up."""

    plan: DistPlan
    origin_program: Program
    trainer_id: int | None = None
    endpoint: str | None = None
