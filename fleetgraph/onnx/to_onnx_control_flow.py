"""Export rules of control flow: `conditional_block` as If, `while` as Loop, `select_input` and
`select_output` as Ifs on the mask.

cond builds two conditional_blocks (one on pred, one on its negation) whose branches assign their
results to variables of the enclosing block, then select_input picks the taken one. Each
conditional_block becomes an If whose then-branch is its sub-block and whose else-branch hands
on what its outputs held before (an empty tensor of their rank where they held nothing, which
select_input then never picks): the same values the executor leaves, for cond, Switch and plain
ConditionalBlocks alike.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ..ir.program import Operator, VarType
from .emitter import Emitter, UnsupportedOp, exports


def _scalar(e: Emitter, name: str) -> str:
    """A one-element tensor as a scalar, the shape If's and Loop's conditions take."""
    return e.node("Reshape", [name, e.const(np.zeros(0, dtype=np.int64))])


def _tensors(e: Emitter, op: Operator, slot: str) -> list[str]:
    """The slot's outputs, refusing a tensor array (a Python list at run time, no ONNX tensor)."""
    names = op.output(slot)
    for name in names:
        if e.var(name).type == VarType.LOD_TENSOR_ARRAY:
            raise UnsupportedOp(f"output {slot} '{e.variable(name)}' is a tensor array, which ONNX lacks")
    return names


def _before(e: Emitter, op: Operator, name: str) -> str | None:
    """The ONNX name of the value an output variable held before the op, or None if it held none."""
    prior = op.before[e.variable(name)]
    return prior if e.is_defined(prior) else None


def _condition(e: Emitter, op: Operator) -> str:
    """Paddle's rule: a scalar condition's value, or else every Cond tensor being non-empty."""
    conds = e.xs(op, "Cond")
    if op.attr("is_scalar_condition"):
        return _scalar(e, conds[0])
    zero = e.const(np.zeros((), dtype=np.int64))
    held = [e.node("Greater", [e.node("Size", [c]), zero]) for c in conds]
    result = held[0]
    for h in held[1:]:
        result = e.node("And", [result, h])
    return result


def _passing(e: Emitter, values: list[str], names: list[str]) -> onnx.GraphProto:
    """A branch that gives `values` (ONNX names of the enclosing graph) as outputs typed as `names`."""
    branch = Emitter(e.block, e.opset, parent=e)
    outs = [branch.node("Identity", [v], branch.fresh(e.variable(n))) for v, n in zip(values, names)]
    for out, name in zip(outs, names):
        branch.origin[out] = e.variable(name)
    return branch.graph("pass", [], outs)


@exports("conditional_block")
def conditional_block(e: Emitter, op: Operator) -> None:
    outs = _tensors(e, op, "Out")
    if not outs:
        return
    then = e.child(op.attr("sub_block"))
    then.emit_block()
    then_graph = then.graph("then", [], [then.name_of(e.variable(n)) for n in outs])
    held = []
    for name in outs:
        prior = _before(e, op, name)
        held.append(prior or e.const(np.zeros([0] * len(e.shape(name)), dtype=e.dtype(name)), hint="nothing"))
    e.node("If", [_condition(e, op)], outs, then_branch=then_graph, else_branch=_passing(e, held, outs))


@exports("while")
def while_(e: Emitter, op: Operator) -> None:
    """Loop over the Out variables but the condition (each needs a value before the loop); the body
    reads them as its inputs and gives their values at its end, and the condition's."""
    cond = e.x(op, "Condition")
    cond_var = e.variable(cond)
    outs = [n for n in _tensors(e, op, "Out") if e.variable(n) != cond_var]
    initial = []
    for name in outs:
        prior = _before(e, op, name)
        if prior is None:
            raise UnsupportedOp(f"output Out '{e.variable(name)}' has no value before the loop to carry")
        initial.append(prior)
    body = e.child(op.attr("sub_block"))
    step, cond_in = body.fresh("iteration"), body.fresh("condition")
    inputs = [
        helper.make_tensor_value_info(step, TensorProto.INT64, []),
        helper.make_tensor_value_info(cond_in, TensorProto.BOOL, []),
    ]
    body.node("Reshape", [cond_in, e.const(_dims(e, cond), dtype=np.int64)], body.write(cond_var, keep=False))
    for name in outs:
        variable = e.variable(name)
        inputs.append(body.value_info(body.write(variable, keep=False)))
        body.defined.add(inputs[-1].name)
    body.emit_block()
    results = [_scalar(body, body.name_of(cond_var))] + [body.name_of(e.variable(n)) for n in outs]
    body.origin[results[0]] = cond_var
    e.node("Loop", ["", _scalar(e, cond), *initial], outs, body=body.graph("body", inputs, results))
    for name in _tensors(e, op, "Out"):  # the loop ended, so its condition is false
        if e.variable(name) == cond_var:
            e.node("Identity", [e.const(np.zeros(_dims(e, cond), dtype=bool))], name)


def _dims(e: Emitter, name: str) -> list[int]:
    """The shape of a one-element variable (its unknown dims are 1)."""
    return [max(d, 1) for d in e.shape(name)]


@exports("select_input")
def select_input(e: Emitter, op: Operator) -> None:
    """X[Mask] as a chain of Ifs (mask == i), the last input where no other matched; an If rather
    than Where, as an input cond's branch did not take may be empty."""
    xs, mask = e.xs(op, "X"), _scalar(e, e.x(op, "Mask"))
    result = xs[-1]
    for i in reversed(range(len(xs) - 1)):
        hit = e.node("Equal", [mask, e.const(np.asarray(i, dtype=e.dtype(e.x(op, "Mask"))))])
        out = e.out(op, "Out") if i == 0 else e.fresh("select")
        if i:
            e.origin[out] = e.variable(xs[0])
        e.node("If", [hit], out, then_branch=_passing(e, [xs[i]], [xs[i]]), else_branch=_passing(e, [result], [xs[i]]))
        result = out
    if len(xs) == 1:
        e.node("Identity", [xs[0]], e.out(op, "Out"))


@exports("select_output")
def select_output(e: Emitter, op: Operator) -> None:
    """X into Out[Mask]; every other output keeps what it held, or zeros shaped as X."""
    x, mask = e.x(op, "X"), _scalar(e, e.x(op, "Mask"))
    for i, name in enumerate(op.output("Out")):
        prior = _before(e, op, name)
        if prior is None:
            zero = numpy_helper.from_array(np.zeros(1, dtype=e.dtype(x)))
            value = e.node("ConstantOfShape", [e.node("Shape", [x])], value=zero)
            e.origin[value] = e.variable(x)
        else:
            value = prior
        hit = e.node("Equal", [mask, e.const(np.asarray(i, dtype=e.dtype(e.x(op, "Mask"))))])
        e.node("If", [hit], name, then_branch=_passing(e, [x], [name]), else_branch=_passing(e, [value], [name]))
