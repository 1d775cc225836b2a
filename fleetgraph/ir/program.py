"""The program IR: Program holds Blocks, a Block holds Variables and Operators that name them."""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from . import unique_name
from .dtypes import convert_dtype
from .errors import FleetgraphError, unknown
from .op_check import check_op_slots
from .registry import COMMON_ATTRS, InferContext, get_op_def


class OpRole(enum.IntFlag):
    """Paddle's op_role values: passes find forward, backward and optimize ops by them."""

    Forward = 0x0000
    Backward = 0x0001
    Optimize = 0x0002
    RPC = 0x0004
    Dist = 0x0008
    LRSched = 0x0010
    Loss = 0x0100


class VarType:
    DENSE_TENSOR = "dense_tensor"  # Paddle's LOD_TENSOR
    SELECTED_ROWS = "selected_rows"
    RAW = "raw"
    LOD_TENSOR_ARRAY = "lod_tensor_array"  # a list of tensors, indexed by array_write/array_read
    STEP_SCOPES = "step_scopes"  # a loop's saved iterations, which its gradient op reads back
    LOD_RANK_TABLE = "lod_rank_table"  # sequences ranked by length (lod_rank_table), for DynamicRNN
    ALL = (DENSE_TENSOR, SELECTED_ROWS, RAW, LOD_TENSOR_ARRAY, STEP_SCOPES, LOD_RANK_TABLE)


_PRINT_TYPE = {
    VarType.DENSE_TENSOR: "LOD_TENSOR",
    VarType.SELECTED_ROWS: "SELECTED_ROWS",
    VarType.RAW: "RAW",
    VarType.LOD_TENSOR_ARRAY: "LOD_TENSOR_ARRAY",
    VarType.STEP_SCOPES: "STEP_SCOPES",
    VarType.LOD_RANK_TABLE: "LOD_RANK_TABLE",
}


def _normalize_shape(shape) -> tuple[int, ...]:
    if shape is None:
        return ()
    if isinstance(shape, (int, np.integer)):
        shape = [shape]
    return tuple(-1 if d is None else int(d) for d in shape)


class Variable:
    """A named value in a block: its static shape (-1 for a dimension known only at run time), dtype
    and flags. Ops refer to variables by name."""

    def __init__(
        self,
        block: Block,
        name: str,
        shape=(),
        dtype="float32",
        *,
        type: str = VarType.DENSE_TENSOR,
        lod_level: int = 0,
        persistable: bool = False,
        stop_gradient: bool = False,
        is_data: bool = False,
        need_check_feed: bool = False,
    ) -> None:
        if type not in VarType.ALL:
            raise FleetgraphError(f"variable {name!r}: unknown type {type!r}; expected one of {VarType.ALL}")
        self.block = block
        self.name = name
        self.shape = _normalize_shape(shape)
        self.dtype = convert_dtype(dtype)
        self.type = type
        self.lod_level = int(lod_level)
        self.persistable = bool(persistable)
        self.stop_gradient = bool(stop_gradient)
        self.is_data = bool(is_data)
        self.need_check_feed = bool(need_check_feed)  # fluid.data / static.data: feeds checked against the shape
        self.error_clip = None  # fluid.clip.ErrorClipByValue: clips this variable's gradient in backward

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def _set_error_clip(self, error_clip) -> None:
        """Clip the gradient flowing back through this variable (fluid.clip.ErrorClipByValue)."""
        self.error_clip = error_clip

    def to_string(self, throw_on_error: bool = False, with_details: bool = False) -> str:
        kind = "persist " if self.persistable else ""
        head = f"{kind}var {self.name}"
        flags = f".stop_gradient({self.stop_gradient})"
        return f"{head} : {_PRINT_TYPE[self.type]}.shape{_paren(self.shape)}.dtype({self.dtype}){flags}"

    __str__ = to_string

    def __repr__(self) -> str:
        return f"Variable({self.name!r}, shape={list(self.shape)}, dtype={self.dtype!r})"

    def to_dict(self) -> dict:
        d = {"name": self.name, "shape": list(self.shape), "dtype": self.dtype, "type": self.type}
        defaults = (("lod_level", 0), ("persistable", False), ("stop_gradient", False), ("is_data", False))
        for key, default in (*defaults, ("need_check_feed", False)):
            if getattr(self, key) != default:
                d[key] = getattr(self, key)
        return d


class Parameter(Variable):
    """A persistable, trainable variable of the global block, initialized by the startup program."""

    def __init__(
        self,
        block,
        name,
        shape,
        dtype="float32",
        *,
        trainable=True,
        initializer=None,
        regularizer=None,
        optimize_attr=None,
        need_clip=True,
        **kw,
    ) -> None:
        kw.setdefault("persistable", True)
        kw.setdefault("stop_gradient", not trainable)
        super().__init__(block, name, shape, dtype, **kw)
        self.trainable = bool(trainable)
        self.initializer = initializer
        self.regularizer = regularizer
        self.optimize_attr = dict(optimize_attr or {"learning_rate": 1.0})
        self.need_clip = bool(need_clip)  # grad_clip leaves the gradient of a parameter that says False
        self.is_distributed = False  # a shard that differs by rank: never broadcast, never all-reduced

    def to_string(self, throw_on_error: bool = False, with_details: bool = False) -> str:
        text = super().to_string()
        return text.replace("persist var", "persist trainable param" if self.trainable else "persist param", 1)

    __str__ = to_string

    def to_dict(self) -> dict:
        d = super().to_dict()
        d["parameter"] = {"trainable": self.trainable, "optimize_attr": self.optimize_attr}
        if self.is_distributed:
            d["parameter"]["is_distributed"] = True
        return d


def _paren(shape) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ")"


def _names(value) -> list[str]:
    """Slot arguments as variable names: a Variable, a name, or a list of either."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [v.name if isinstance(v, Variable) else str(v) for v in value]
    return [value.name if isinstance(value, Variable) else str(value)]


def normalize_attr(value: Any) -> Any:
    """Attrs are JSON values: tuples become lists and NumPy scalars become Python numbers."""
    if isinstance(value, (list, tuple)):
        return [normalize_attr(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Block):
        return value.idx
    return value


class Operator:
    """One op: its type, slots mapping to variable names, and attrs."""

    def __init__(self, block: Block, type: str, inputs: dict, outputs: dict, attrs: dict) -> None:
        self.block = block
        self.type = type
        self.inputs: dict[str, list[str]] = {k: _names(v) for k, v in (inputs or {}).items()}
        self.outputs: dict[str, list[str]] = {k: _names(v) for k, v in (outputs or {}).items()}
        self.attrs: dict[str, Any] = {k: normalize_attr(v) for k, v in (attrs or {}).items()}

    @property
    def idx(self) -> int:
        """This op's index in its block."""
        for i, op in enumerate(self.block.ops):
            if op is self:
                return i
        raise ValueError(f"op {self.type} is not in block {self.block.idx} any more")

    def input(self, slot: str) -> list[str]:
        return self.inputs.get(slot, [])

    def output(self, slot: str) -> list[str]:
        return self.outputs.get(slot, [])

    @property
    def input_names(self) -> list[str]:
        return list(self.inputs)

    @property
    def output_names(self) -> list[str]:
        return list(self.outputs)

    @property
    def input_arg_names(self) -> list[str]:
        return [n for names in self.inputs.values() for n in names]

    @property
    def output_arg_names(self) -> list[str]:
        return [n for names in self.outputs.values() for n in names]

    def attr(self, name: str) -> Any:
        if name not in self.attrs:
            raise unknown("attr", name, self.attrs, where=f"op {self.type}")
        return self.attrs[name]

    def has_attr(self, name: str) -> bool:
        return name in self.attrs

    def _set_attr(self, name: str, value: Any) -> None:
        self.attrs[name] = normalize_attr(value)
        self.block.program._bump()

    def _rename_input(self, old: str, new: str) -> None:
        self.inputs = {k: [new if n == old else n for n in v] for k, v in self.inputs.items()}
        self.block.program._bump()

    def _rename_output(self, old: str, new: str) -> None:
        self.outputs = {k: [new if n == old else n for n in v] for k, v in self.outputs.items()}
        self.block.program._bump()

    def to_dict(self) -> dict:
        return {"type": self.type, "inputs": self.inputs, "outputs": self.outputs, "attrs": self.attrs}

    def to_string(self, throw_on_error: bool = False) -> str:
        outs = ", ".join(f"{k}={v}" for k, v in self.outputs.items())
        ins = ", ".join(f"{k}={v}" for k, v in self.inputs.items())
        attrs = "".join(f", {k} = {v!r}" for k, v in sorted(self.attrs.items()) if k not in ("op_callstack",))
        return f"{{{outs}}} = {self.type}(inputs={{{ins}}}{attrs})"

    __str__ = to_string

    def __repr__(self) -> str:
        return f"Operator({self.type!r})"


class Block:
    """An ordered list of ops plus the variables they name; sub-blocks see their parent's variables."""

    def __init__(self, program: Program, idx: int, parent_idx: int = -1) -> None:
        self.program = program
        self.idx = idx
        self.parent_idx = parent_idx
        self.forward_block_idx = -1
        self.vars: dict[str, Variable] = {}
        self.ops: list[Operator] = []

    # -- variables -------------------------------------------------------------------------
    @property
    def parent(self) -> Block | None:
        return self.program.blocks[self.parent_idx] if self.parent_idx >= 0 else None

    def has_var(self, name: str) -> bool:
        return name in self.vars

    def var(self, name: str) -> Variable:
        if name not in self.vars:
            raise unknown("variable", name, self.vars, where=f"block {self.idx}")
        return self.vars[name]

    def _lookup_chain(self) -> list[Block]:
        """The blocks whose variables this block sees: itself, its ancestors and, for a gradient
        block, its forward block and theirs (breadth first, as Paddle's Block._find_var_recursive)."""
        chain, frontier = [], [self]
        while frontier:
            block = frontier.pop(0)
            if block in chain:
                continue
            chain.append(block)
            for idx in (block.parent_idx, block.forward_block_idx):
                if idx >= 0:
                    frontier.append(self.program.blocks[idx])
        return chain

    def _find_var_recursive(self, name: str) -> Variable | None:
        if name in self.vars:
            return self.vars[name]
        for block in self._lookup_chain():
            if name in block.vars:
                return block.vars[name]
        return None

    def var_recursive(self, name: str) -> Variable:
        var = self._find_var_recursive(name)
        if var is None:
            raise unknown("variable", name, self._visible_names(), where=f"block {self.idx}")
        return var

    def _visible_names(self) -> list[str]:
        return [name for block in self._lookup_chain() for name in block.vars]

    def create_var(self, name: str | None = None, shape=(), dtype="float32", **kw) -> Variable:
        """Create a variable (a fresh unique name when none is given); an existing name is returned."""
        name = name or unique_name.generate("_generated_var")
        if name in self.vars:
            return self.vars[name]
        var = Variable(self, name, shape, dtype, **kw)
        self.vars[name] = var
        self.program._bump()
        return var

    def create_parameter(self, name: str, shape, dtype="float32", **kw) -> Parameter:
        if name in self.vars:
            raise FleetgraphError(f"block {self.idx}: parameter {name!r} already exists")
        param = Parameter(self, name, shape, dtype, **kw)
        self.vars[name] = param
        self.program._bump()
        return param

    def _add_var(self, var: Variable) -> Variable:
        var.block = self
        self.vars[var.name] = var
        self.program._bump()
        return var

    def _remove_var(self, name: str) -> None:
        del self.vars[name]
        self.program._bump()

    def all_parameters(self) -> list[Parameter]:
        return [v for v in self.vars.values() if isinstance(v, Parameter)]

    iter_parameters = all_parameters

    # -- ops -------------------------------------------------------------------------------
    def append_op(self, type: str, inputs=None, outputs=None, attrs=None) -> Operator:
        op = self._make_op(type, inputs, outputs, attrs)
        self.ops.append(op)
        self.program._bump()
        return op

    def _insert_op(self, index: int, type: str, inputs=None, outputs=None, attrs=None) -> Operator:
        op = self._make_op(type, inputs, outputs, attrs)
        self.ops.insert(index, op)
        self.program._bump()
        return op

    def _prepend_op(self, type: str, inputs=None, outputs=None, attrs=None) -> Operator:
        return self._insert_op(0, type, inputs, outputs, attrs)

    def _remove_op(self, index: int) -> None:
        del self.ops[index]
        self.program._bump()

    def _make_op(self, type, inputs, outputs, attrs) -> Operator:
        """Check slots against the op's declaration, fill default attrs and infer output shapes."""
        opdef = get_op_def(type)
        op = Operator(self, type, inputs, outputs, {})
        check_op_slots(op, opdef, self)
        merged = dict(opdef.attrs)
        merged.update(op_role=int(self.program._op_role), op_role_var=list(self.program._op_role_var))
        if self.program._op_namescope != "/":
            merged["op_namescope"] = self.program._op_namescope
        if self.program._op_device:
            merged["op_device"] = self.program._op_device
        for k, v in (attrs or {}).items():
            if k not in opdef.attrs and k not in COMMON_ATTRS:
                raise unknown("attr", k, list(opdef.attrs) + list(COMMON_ATTRS), where=type)
            merged[k] = v
        op.attrs = {k: normalize_attr(v) for k, v in merged.items()}
        if opdef.infer_shape is not None:
            opdef.infer_shape(InferContext(op, self))
        return op

    def to_string(self, throw_on_error: bool = False, with_details: bool = True) -> str:
        """Paddle's block dump; a sub-block (a branch, a loop body, a gradient block) is printed
        indented under the op that runs it."""
        lines = [f"{{ // block_idx:{self.idx}  parent_idx:{self.parent_idx}  forward_idx:{self.forward_block_idx}"]
        lines += [f"    {v.to_string()}" for v in self.vars.values()]
        if self.vars:
            lines.append("")
        for op in self.ops:
            lines.append(f"    {op.to_string()}")
            sub = self.program.sub_block_of(op)
            if sub is not None:
                lines += [("        " + line).rstrip() for line in sub.to_string().split("\n")]
        lines.append("}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"Block(idx={self.idx}, {len(self.vars)} vars, {len(self.ops)} ops)"


class Program:
    """A whole program: block 0 is the global block; further blocks are sub-blocks (e.g. the
    optimize blocks of a pserver). Every change bumps `_version`, so cached execution plans know
    when to rebuild."""

    def __init__(self) -> None:
        self.blocks: list[Block] = [Block(self, 0)]
        self.current_block_idx = 0
        self.random_seed = 0
        self._version = 0
        self._op_role = OpRole.Forward
        self._op_role_var: list[str] = []
        self._op_namescope = "/"
        self._op_device = ""  # set by device_guard
        self.lr_scheduler = None  # a paddle.optimizer.lr scheduler whose rate the executor sets each run
        # a transpiled role's plan as data (transpiler.ps_plan.RolePlan): who holds which block
        self.dist_plan: Any = None

    def _bump(self) -> None:
        self._version += 1

    def global_block(self) -> Block:
        return self.blocks[0]

    def block(self, index: int) -> Block:
        return self.blocks[index]

    def current_block(self) -> Block:
        return self.blocks[self.current_block_idx]

    @property
    def num_blocks(self) -> int:
        return len(self.blocks)

    def _create_block(self, parent_idx: int | None = None) -> Block:
        parent = self.current_block_idx if parent_idx is None else parent_idx
        block = Block(self, len(self.blocks), parent)
        self.blocks.append(block)
        self.current_block_idx = block.idx
        self._bump()
        return block

    def _rollback(self) -> None:
        self.current_block_idx = self.current_block().parent_idx

    def list_vars(self) -> Iterator[Variable]:
        for block in self.blocks:
            yield from block.vars.values()

    def all_parameters(self) -> list[Parameter]:
        return self.global_block().all_parameters()

    @contextlib.contextmanager
    def _op_role_guard(self, role: OpRole, role_var: Iterable[str] = ()):
        """Ops appended inside carry this op_role (and op_role_var), as Paddle tags them."""
        saved = self._op_role, self._op_role_var
        self._op_role, self._op_role_var = role, list(role_var)
        try:
            yield
        finally:
            self._op_role, self._op_role_var = saved

    def _optimized_guard(self, param_and_grad):
        names = [v.name if isinstance(v, Variable) else v for v in param_and_grad]
        return self._op_role_guard(OpRole.Optimize, names)

    def _backward_role_guard(self):
        return self._op_role_guard(OpRole.Backward)

    def to_string(self, throw_on_error: bool = False, with_details: bool = False) -> str:
        """Every block, each sub-block nested under the op that runs it (see Block.to_string)."""
        nested = {sub.idx for b in self.blocks for op in b.ops if (sub := self.sub_block_of(op)) is not None}
        return "\n".join(b.to_string(throw_on_error, with_details) for b in self.blocks if b.idx not in nested)

    def sub_block_of(self, op: Operator) -> Block | None:
        """The sub-block `op` runs, when it is a child of op's block (a well-formed program's are)."""
        sub = op.attrs.get("sub_block")
        if isinstance(sub, int) and 0 <= sub < len(self.blocks) and self.blocks[sub].parent_idx == op.block.idx:
            return self.blocks[sub]
        return None

    __str__ = to_string

    def __repr__(self) -> str:
        return f"Program({len(self.blocks)} blocks, {sum(len(b.ops) for b in self.blocks)} ops)"


def op_summary(program: Program) -> str:
    """One line of op types per block, as in the reference dumps: 'block0: mul elementwise_add ...'."""
    return "\n".join(f"block{b.idx}: " + " ".join(op.type for op in b.ops) for b in program.blocks)
