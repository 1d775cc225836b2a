"""An op being built, checked against its declaration before it joins its block."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import FleetgraphError
from .views import BlockView, OpView

if TYPE_CHECKING:
    from .registry import OpDef


def check_op_slots(op: OpView, opdef: OpDef, block: BlockView) -> None:
    """Raises on an undeclared slot, an empty required slot, an unknown variable, or an in-place
    output that names other variables than its input."""
    type = op.type
    for slot in op.inputs:
        opdef.input_slot(slot)
    for slot in op.outputs:
        opdef.output_slot(slot)
    for slot in opdef.inputs:
        if not slot.optional and not op.inputs.get(slot.name):
            raise FleetgraphError(f"{type}: required input slot {slot.name!r} is empty")
    for slot in opdef.outputs:
        if not slot.optional and not op.outputs.get(slot.name):
            raise FleetgraphError(f"{type}: required output slot {slot.name!r} is empty")
    for names in list(op.inputs.values()) + list(op.outputs.values()):
        for name in names:
            block.var_recursive(name)
    for out_slot, in_slot in opdef.inplace.items():
        if op.outputs.get(out_slot) and op.outputs[out_slot] != op.inputs.get(in_slot):
            raise FleetgraphError(
                f"{type}: output {out_slot} updates input {in_slot} in place; expected "
                f"{op.inputs.get(in_slot)}, got {op.outputs[out_slot]}"
            )
