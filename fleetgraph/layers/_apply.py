"""The shared body of the one-op layer functions."""

from __future__ import annotations

from ..dygraph import dispatch, engine, mode, opfunc
from ..dygraph.tensor import Tensor
from ..ir.program import Variable
from .helper import LayerHelper


def apply_op(
    op_type: str,
    inputs: dict,
    attrs: dict | None = None,
    *,
    out_slot: str = "Out",
    dtype: str | None = None,
    name: str | None = None,
    extra_outputs=(),
) -> Variable:
    """Append `op_type` with a fresh output variable in `out_slot` (plus `extra_outputs` slots) and
    return the output; on Tensor inputs (or none, in dynamic mode) the op runs at once instead."""
    if inputs and not extra_outputs and out_slot == "Out":
        out = opfunc.try_call(op_type, inputs, attrs)
        if out is not None:
            return out
    ins = dispatch.eager_inputs(op_type, inputs) if inputs else ({} if mode.eager_by_default() else None)
    if ins is not None:
        out = Tensor(dtype=dtype)
        outputs = {out_slot: [out]}
        for slot in extra_outputs:
            outputs[slot] = [Tensor()]
        engine.run_op(op_type, ins, outputs, attrs)
        return out
    helper = LayerHelper(op_type, name)
    first = (
        next(
            v
            for vs in inputs.values()
            for v in (vs if isinstance(vs, (list, tuple)) else [vs])
            if isinstance(v, Variable)
        )
        if inputs
        else None
    )
    dtype = dtype or (first.dtype if first is not None else "float32")
    out = helper.create_variable_for_type_inference(dtype)
    outputs = {out_slot: [out]}
    for slot in extra_outputs:
        outputs[slot] = [helper.create_variable_for_type_inference(dtype, stop_gradient=True)]
    helper.append_op(op_type, inputs, outputs, attrs)
    return out
