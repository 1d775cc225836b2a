"""The op registry: each op type declared once with its slots, attrs, shape inference, gradient and kernel."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .errors import ShapeError, fmt_shape, unknown
from .views import BlockView, OpView, VarView

# Attrs every op may carry besides its own schema; passes read them, kernels never see them.
COMMON_ATTRS = {"op_role": 0, "op_role_var": [], "op_namescope": "/", "op_device": ""}
GRAD_SUFFIX = "@GRAD"


@dataclass(frozen=True)
class Slot:
    """An input or output slot. Spelled 'X', 'Bias?' (optional) or 'X*' (a list of variables)."""

    name: str
    optional: bool = False
    duplicable: bool = False

    @classmethod
    def parse(cls, spec: str) -> Slot:
        optional = spec.endswith("?") or spec.endswith("*?")
        duplicable = spec.rstrip("?").endswith("*")
        return cls(spec.rstrip("?").rstrip("*"), optional, duplicable)


@dataclass
class OpDef:
    type: str
    inputs: tuple[Slot, ...]
    outputs: tuple[Slot, ...]
    attrs: dict[str, Any]
    infer_shape: Callable[[InferContext], None] | None = None
    grad: Callable[[OpView], list[dict]] | None = None
    kernel: Callable[..., Any] | None = None
    # output slot -> input slot whose buffer the kernel updates in place (optimizer state)
    inplace: dict[str, str] = field(default_factory=dict)
    # ops with effects outside their outputs (send, recv, barriers, all-reduce): never dropped or reordered
    side_effect: bool = False
    random: bool = False  # the kernel takes rng=, a seeded numpy Generator
    wants_outputs: bool = False  # the kernel takes need=, the set of output slots somebody reads
    # the kernel takes ctx=, the run's context (executor, scope, variables, sub-blocks, communicator)
    needs_context: bool = False
    # the kernel sees LoDTensor inputs as they are (sequence ops); other kernels get their rows, and
    # an output declared with lod_level > 0 takes the LoD of the op's first LoD input
    takes_lod: bool = False

    def input_slot(self, name: str) -> Slot:
        return _find_slot(self.inputs, name, self.type, "input")

    def output_slot(self, name: str) -> Slot:
        return _find_slot(self.outputs, name, self.type, "output")

    @property
    def differentiable(self) -> bool:
        return self.grad is not None


def _find_slot(slots, name, op_type, kind) -> Slot:
    for s in slots:
        if s.name == name:
            return s
    raise unknown(f"{kind} slot", name, [s.name for s in slots], where=op_type)


_REGISTRY: dict[str, OpDef] = {}


def register_op(
    type: str,
    *,
    inputs=(),
    outputs=(),
    attrs: dict[str, Any] | None = None,
    infer_shape=None,
    grad=None,
    kernel=None,
    inplace=None,
    side_effect=False,
    random=False,
    wants_outputs=False,
    needs_context=False,
    takes_lod=False,
) -> OpDef:
    """Declare an op type. Gradient output slots ('X@GRAD') are always optional: backward drops the
    gradients nobody needs."""
    if type in _REGISTRY:
        raise ValueError(f"op {type!r} is registered twice")
    outs = tuple(Slot.parse(s) for s in outputs)
    outs = tuple(Slot(s.name, True, s.duplicable) if s.name.endswith(GRAD_SUFFIX) else s for s in outs)
    if infer_shape is None and type.endswith("_grad"):
        infer_shape = infer_grad_shapes
    opdef = OpDef(
        type,
        tuple(Slot.parse(s) for s in inputs),
        outs,
        dict(attrs or {}),
        infer_shape,
        grad,
        kernel,
        dict(inplace or {}),
        side_effect,
        random,
        wants_outputs,
        needs_context,
        takes_lod,
    )
    _REGISTRY[type] = opdef
    return opdef


def get_op_def(type: str) -> OpDef:
    try:
        return _REGISTRY[type]
    except KeyError:
        raise unknown("op type", type, _REGISTRY) from None


def has_op(type: str) -> bool:
    return type in _REGISTRY


def registered_ops() -> dict[str, OpDef]:
    return dict(_REGISTRY)


class InferContext:
    """What shape inference sees of one op: its input variables, attrs and output variables."""

    def __init__(self, op: OpView, block: BlockView) -> None:
        self.op, self.block = op, block

    def has_input(self, slot: str) -> bool:
        return bool(self.op.inputs.get(slot))

    def has_output(self, slot: str) -> bool:
        return bool(self.op.outputs.get(slot))

    def input_var(self, slot: str, i: int = 0) -> VarView:
        return self.block.var_recursive(self.op.inputs[slot][i])

    def input_vars(self, slot: str) -> list[VarView]:
        return [self.block.var_recursive(n) for n in self.op.inputs.get(slot, [])]

    def input_shape(self, slot: str, i: int = 0) -> tuple[int, ...]:
        return self.input_var(slot, i).shape

    def input_dtype(self, slot: str, i: int = 0) -> str:
        return self.input_var(slot, i).dtype

    def attr(self, name: str) -> Any:
        return self.op.attrs[name]

    def output_vars(self, slot: str) -> list[VarView]:
        return [self.block.var_recursive(n) for n in self.op.outputs.get(slot, [])]

    def set_output(
        self,
        slot: str,
        shape,
        dtype: str | None = None,
        i: int = 0,
        lod_level: int | None = None,
        type: str | None = None,
    ):
        names = self.op.outputs.get(slot)
        if not names:
            return
        var = self.block.var_recursive(names[i])
        var.shape = tuple(int(d) for d in shape)
        if dtype is not None:
            var.dtype = dtype
        if lod_level is not None:
            var.lod_level = lod_level
        if type is not None:
            var.type = type

    def error(self, message: str) -> ShapeError:
        return ShapeError(f"{self.op.type}: {message}")

    def check_rank(self, slot: str, ranks: tuple[int, ...], i: int = 0) -> tuple[int, ...]:
        shape = self.input_shape(slot, i)
        if len(shape) not in ranks:
            name = self.op.inputs[slot][i]
            want = " or ".join(str(r) for r in ranks)
            raise self.error(f"input {slot} '{name}': expected rank {want}, got shape {fmt_shape(shape)}")
        return shape


def infer_grad_shapes(ctx: InferContext) -> None:
    """A gradient has its variable's shape and dtype: 'X@GRAD' copies input 'X'."""
    for slot, names in ctx.op.outputs.items():
        base = slot[: -len(GRAD_SUFFIX)] if slot.endswith(GRAD_SUFFIX) else None
        if base is None or not ctx.op.inputs.get(base):
            continue
        for i, _ in enumerate(names):
            src = ctx.input_var(base, min(i, len(ctx.op.inputs[base]) - 1))
            ctx.set_output(slot, src.shape, src.dtype, i=i)


def grad_name(name: str) -> str:
    return name + GRAD_SUFFIX


def make_grad_op(*, inputs: tuple[str, ...], outputs: tuple[str, ...], type: str | None = None):
    """A gradient maker that builds '<type>_grad' from the forward op's slots.

    Slot names are Paddle's: 'X' is the forward input X, 'Out' a forward output, 'Out@GRAD' the
    gradient of Out, and outputs 'X@GRAD' the gradients of the forward inputs.
    """

    def maker(op: OpView) -> list[dict]:
        def names(slot: str) -> list[str]:
            base = slot[: -len(GRAD_SUFFIX)] if slot.endswith(GRAD_SUFFIX) else slot
            found = op.inputs.get(base, op.outputs.get(base, []))
            return [grad_name(n) for n in found] if base != slot else list(found)

        grad_inputs = {s: names(s) for s in inputs if names(s)}
        grad_outputs = {s: names(s) for s in outputs if names(s)}
        attrs = {k: v for k, v in op.attrs.items() if k not in COMMON_ATTRS}
        return [dict(type=type or op.type + "_grad", inputs=grad_inputs, outputs=grad_outputs, attrs=attrs)]

    maker.inputs, maker.outputs = inputs, outputs
    return maker
