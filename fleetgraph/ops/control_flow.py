"""Control flow: ops that run a sub-block (`conditional_block`, `while`) and their gradients, and
`select_input`/`select_output`, which pick one of several variables by an integer mask.

A run's variables are one dictionary (the executor's env) that every block reads and writes, so a
sub-block's results are where its parent looks for them without a copy. What Paddle keeps in step
scopes is kept as data instead: `while` records, per iteration, the values its body is about to
overwrite (the loop-carried outer variables, at the iteration's start) and the values it made (its
own variables, at the iteration's end); `while_grad` puts each iteration's values back before it
runs the gradient block for that iteration, last iteration first.

Gradient makers of sub-block ops take the index of the gradient block that backward
(transpiler/backward.py) builds for them from the forward sub-block.
"""

from __future__ import annotations

import sys
import weakref

import numpy as np

from ..ir import FleetgraphError, InferContext, register_op
from ..ir.errors import fmt_shape
from ..ir.program import VarType
from ._common import prod
from .lod_tensor import LoDTensor
from .math import sum_values

GRAD = "@GRAD"


def _truth(xp, value) -> bool:
    """A one-element condition as a Python bool."""
    if prod(value.shape) != 1:
        raise FleetgraphError(f"a condition must hold one element, got shape {fmt_shape(value.shape)}")
    return bool(xp.reshape(value, ()))


# -- select_input / select_output -----------------------------------------------------------------


def _mask_index(xp, mask, n: int) -> int:
    index = int(xp.reshape(mask, ()))
    if not 0 <= index < n:
        raise FleetgraphError(f"Mask is {index}; expected an index in [0, {n})")
    return index


def _select_input_infer(ctx: InferContext) -> None:
    first = ctx.input_var("X")
    ctx.set_output("Out", first.shape, first.dtype, lod_level=first.lod_level, type=first.type)


def _select_input_grad(op) -> list[dict]:
    return [
        dict(
            type="select_output",
            inputs={"X": [op.output("Out")[0] + GRAD], "Mask": op.input("Mask")},
            outputs={"Out": [n + GRAD for n in op.input("X")]},
            attrs={},
        )
    ]


register_op(
    "select_input",
    inputs=("X*", "Mask"),
    outputs=("Out",),
    infer_shape=_select_input_infer,
    grad=_select_input_grad,
    kernel=lambda xp, x, mask: x[_mask_index(xp, mask, len(x))],
)


def _select_output_grad(op) -> list[dict]:
    return [
        dict(
            type="select_input",
            inputs={"X": [n + GRAD for n in op.output("Out")], "Mask": op.input("Mask")},
            outputs={"Out": [op.input("X")[0] + GRAD]},
            attrs={},
        )
    ]


def _select_output(xp, x, mask, *, ctx):
    """X into the output the mask picks. The others keep what they hold, as Paddle leaves them; one
    that holds nothing yet gets zeros (as select_input's gradient, the branch not taken gets none)."""
    names = ctx.op.output("Out")
    index = _mask_index(xp, mask, len(names))
    outs = [ctx.env.get(n) for n in names]
    outs = [xp.zeros_like(x) if v is None else v for v in outs]
    outs[index] = x
    return outs


def _select_output_infer(ctx: InferContext) -> None:
    x = ctx.input_var("X")
    for i, _ in enumerate(ctx.op.outputs.get("Out", [])):
        ctx.set_output("Out", x.shape, x.dtype, i=i, lod_level=x.lod_level, type=x.type)


register_op(
    "select_output",
    inputs=("X", "Mask"),
    outputs=("Out*",),
    infer_shape=_select_output_infer,
    grad=_select_output_grad,
    kernel=_select_output,
    needs_context=True,
)

# -- conditional_block ----------------------------------------------------------------------------


def _conditional_block(xp, cond, inputs, *, sub_block, is_scalar_condition, ctx):
    """Run the sub-block when the condition holds: a scalar's value, or else every Cond tensor
    being non-empty (Paddle's rule). Scope records whether it ran, for the gradient."""
    if is_scalar_condition:
        run = _truth(xp, cond[0])
    else:
        run = all(prod(c.shape) != 0 for c in cond)
    if run:
        ctx.run_block(sub_block)
    env = ctx.env
    return [env.get(n) for n in ctx.op.output("Out")], [run]


def _conditional_block_grad_maker(op, grad_block: int) -> list[dict]:
    return [
        dict(
            type="conditional_block_grad",
            inputs={
                "Cond": op.input("Cond"),
                "Input": op.input("Input"),
                "Out": op.output("Out"),
                "Out@GRAD": [n + GRAD for n in op.output("Out")],
                "Scope": op.output("Scope"),
            },
            outputs={"Input@GRAD": [n + GRAD for n in op.input("Input")]},
            attrs={"sub_block": grad_block, "is_scalar_condition": op.attrs["is_scalar_condition"]},
        )
    ]


def _step_scopes_infer(ctx: InferContext) -> None:
    for slot in ("Scope", "StepScopes"):
        if ctx.has_output(slot):
            ctx.set_output(slot, (), type=VarType.STEP_SCOPES)


register_op(
    "conditional_block",
    inputs=("Cond*", "Input*?"),
    outputs=("Out*?", "Scope"),
    attrs={"sub_block": 0, "is_scalar_condition": False},
    infer_shape=_step_scopes_infer,
    grad=_conditional_block_grad_maker,
    kernel=_conditional_block,
    needs_context=True,
)


def input_grads_of(xp, ctx, names: list[str], grad_names: list[str], carried: set[str], sums: dict) -> list:
    """The gradient outputs of a sub-block op: a carried variable's chained gradient as the gradient
    block left it, the others' sums over the block's runs; zeros where nothing flowed back."""
    env, out = ctx.env, []
    for name, grad_name in zip(names, grad_names):
        if grad_name is None or grad_name == "@EMPTY@":
            out.append(None)
            continue
        value = env.get(name + GRAD) if name in carried else sums.get(name)
        if value is None:
            value = xp.zeros_like(env[name])
        out.append(value)
    return out


def grad_slots(ctx, in_slot: str) -> tuple[list[str], list[str | None]]:
    """The forward inputs of a gradient op, and the gradient output names aligned with them."""
    names = ctx.op.input(in_slot)
    wanted = ctx.op.output(in_slot + GRAD)
    by_forward = {g.split(GRAD)[0]: g for g in wanted if g != "@EMPTY@"}
    return names, [by_forward.get(n) for n in names]


class SeparateGrads:
    """While a gradient block runs, the gradients it writes of non-carried outer variables are its
    own: what the env held under those names (another op's share of the same gradient) is set aside
    and put back afterwards, and each run's values are summed."""

    def __init__(self, env: dict, names: list[str]) -> None:
        self.env, self.names = env, [n + GRAD for n in names]
        self.saved = {g: env.pop(g) for g in self.names if g in env}
        self.sums: dict[str, object] = {}

    def collect(self, xp) -> None:
        for g in self.names:
            value = self.env.pop(g, None)
            if value is not None:
                key = g[: -len(GRAD)]
                self.sums[key] = value if key not in self.sums else sum_values(xp, [self.sums[key], value])

    def restore(self) -> None:
        self.env.update(self.saved)


def _conditional_block_grad(xp, cond, inputs, out, out_grads, scope, *, sub_block, is_scalar_condition, ctx):
    names, grad_names = grad_slots(ctx, "Input")
    carried = set(names) & set(ctx.op.input("Out"))
    separate = SeparateGrads(ctx.env, [n for n, g in zip(names, grad_names) if g and n not in carried])
    if scope[0]:
        ctx.run_block(sub_block)
    separate.collect(xp)
    separate.restore()
    return input_grads_of(xp, ctx, names, grad_names, carried, separate.sums)


register_op(
    "conditional_block_grad",
    inputs=("Cond*", "Input*?", "Out*?", "Out@GRAD*?", "Scope"),
    outputs=("Input@GRAD*?",),
    attrs={"sub_block": 0, "is_scalar_condition": False},
    infer_shape=lambda ctx: None,
    kernel=_conditional_block_grad,
    needs_context=True,
)

# -- while ----------------------------------------------------------------------------------------


def _while_infer(ctx: InferContext) -> None:
    cond = ctx.input_var("Condition")
    if cond.dtype != "bool" or prod(cond.shape) != 1:
        raise ctx.error(
            f"Condition '{cond.name}' is {cond.dtype} {fmt_shape(cond.shape)}; expected a bool with one element"
        )
    _step_scopes_infer(ctx)


def _while(xp, x, condition, *, sub_block, is_test, skip_eager_deletion_vars, ctx):
    """Run the body while Condition holds. Unless is_test, each iteration's values are recorded
    (StepScopes) for while_grad: the outer variables the body writes as they were at its start,
    and the body's own variables as it left them."""
    env, op = ctx.env, ctx.op
    cond_name = op.input("Condition")[0]
    outs = op.output("Out")
    local = ctx.plan(sub_block).written.difference(outs)
    steps = []
    while _truth(xp, env[cond_name]):
        start = None if is_test else {n: env[n] for n in outs if n in env}
        ctx.run_block(sub_block)
        if start is not None:
            steps.append((start, {n: env[n] for n in local if n in env}))
    return [env.get(n) for n in outs], steps


def _while_grad_maker(op, grad_block: int) -> list[dict]:
    outs = op.output("Out")
    return [
        dict(
            type="while_grad",
            inputs={
                "X": op.input("X"),
                "Out": outs,
                "Out@GRAD": [n + GRAD for n in outs],
                "StepScopes": op.output("StepScopes"),
            },
            outputs={"X@GRAD": [n + GRAD for n in op.input("X")]},
            attrs={"sub_block": grad_block, "original_output_grad": [n + GRAD for n in outs]},
        )
    ]


register_op(
    "while",
    inputs=("X*?", "Condition"),
    outputs=("Out*?", "StepScopes"),
    attrs={"sub_block": 0, "is_test": False, "skip_eager_deletion_vars": []},
    infer_shape=_while_infer,
    grad=_while_grad_maker,
    kernel=_while,
    needs_context=True,
)


def _while_grad(
    xp, x, out, out_grads, step_scopes, *, sub_block, is_test, original_output_grad, skip_eager_deletion_vars, ctx
):
    """The gradient block once per recorded iteration, last first, each on that iteration's
    values. A loop-carried variable's gradient chains through the runs under its own name; the
    others' (parameters, values read but not written) are summed over the iterations. The forward
    values are put back afterwards, so a fetch after backward sees what the loop computed."""
    if is_test:
        raise FleetgraphError("while_grad: the loop ran with is_test=True and recorded no iterations")
    env, op = ctx.env, ctx.op
    names, grad_names = grad_slots(ctx, "X")
    carried = set(names) & set(op.input("Out"))
    separate = SeparateGrads(env, [n for n, g in zip(names, grad_names) if g and n not in carried])
    final = {n: env[n] for start, end in step_scopes[-1:] for n in (*start, *end) if n in env}
    for start, end in reversed(step_scopes):
        env.update(end)
        env.update(start)
        ctx.run_block(sub_block)
        separate.collect(xp)
    env.update(final)
    separate.restore()
    return input_grads_of(xp, ctx, names, grad_names, carried, separate.sums)


register_op(
    "while_grad",
    inputs=("X*?", "Out*?", "Out@GRAD*?", "StepScopes"),
    outputs=("X@GRAD*?",),
    attrs={"sub_block": 0, "is_test": False, "original_output_grad": [], "skip_eager_deletion_vars": []},
    infer_shape=lambda ctx: None,
    kernel=_while_grad,
    needs_context=True,
)

# -- print ----------------------------------------------------------------------------------------

_PRINTED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # op -> times it printed (first_n)
_CPP_TYPE = {"float32": "float", "float64": "double", "int32": "int", "int64": "long", "bool": "bool"}


def format_tensor(value, name: str, message: str, attrs: dict) -> str:
    """Paddle 2.0's TensorFormatter text for one value (print op, static.Print)."""
    data = value.data if isinstance(value, LoDTensor) else value
    array = np.asarray(data)
    lines = [f"Variable: {name}"] if name else []
    if message:
        lines.append(f"  - message: {message}")
    if attrs["print_tensor_lod"]:
        levels = value.lod() if isinstance(value, LoDTensor) else []
        lines.append("  - lod: {" + "".join("{" + ", ".join(str(i) for i in level) + "}" for level in levels) + "}")
    lines.append("  - place: CPUPlace")
    if attrs["print_tensor_shape"]:
        lines.append("  - shape: [" + ", ".join(str(d) for d in array.shape) + "]")
    if attrs["print_tensor_layout"]:
        lines.append("  - layout: NCHW")
    if attrs["print_tensor_type"]:
        lines.append(f"  - dtype: {_CPP_TYPE.get(array.dtype.name, array.dtype.name)}")
    flat = array.reshape(-1)
    if attrs["summarize"] != -1:
        flat = flat[: attrs["summarize"]]
    kind = array.dtype.kind
    text = [str(int(v)) if kind in "biu" else format(float(v), "g") for v in flat]
    lines.append("  - data: [" + " ".join(text) + "]")
    return "\n".join(lines) + "\n"


def _print(xp, x, *, ctx, **attrs):
    """Print `In` (forward, or its gradient in the backward pass, as print_phase says) and pass it on."""
    phase, forward = attrs["print_phase"], attrs["is_forward"]
    if not ((forward and phase == "BACKWARD") or (not forward and phase == "FORWARD")):
        times = _PRINTED.get(ctx.op, 0) + 1
        _PRINTED[ctx.op] = times
        if attrs["first_n"] <= 0 or times <= attrs["first_n"]:
            name = ctx.op.input("In")[0] if attrs["print_tensor_name"] else ""
            sys.stdout.write(format_tensor(x, name, attrs["message"], attrs))
            sys.stdout.flush()
    return x


def _print_grad(op) -> list[dict]:
    attrs = {k: v for k, v in op.attrs.items() if k not in ("op_role", "op_role_var", "op_namescope", "op_device")}
    return [
        dict(
            type="print",
            inputs={"In": [op.output("Out")[0] + GRAD]},
            outputs={"Out": [op.input("In")[0] + GRAD]},
            attrs={**attrs, "is_forward": False},
        )
    ]


def _print_infer(ctx: InferContext) -> None:
    x = ctx.input_var("In")
    if ctx.attr("print_phase") not in ("FORWARD", "BACKWARD", "BOTH"):
        raise ctx.error(f"print_phase {ctx.attr('print_phase')!r}; expected FORWARD, BACKWARD or BOTH")
    ctx.set_output("Out", x.shape, x.dtype, lod_level=x.lod_level)


register_op(
    "print",
    inputs=("In",),
    outputs=("Out",),
    attrs={
        "first_n": -1,
        "message": "",
        "summarize": 20,
        "print_tensor_name": True,
        "print_tensor_type": True,
        "print_tensor_shape": True,
        "print_tensor_layout": True,
        "print_tensor_lod": True,
        "print_phase": "BOTH",
        "is_forward": True,
    },
    infer_shape=_print_infer,
    grad=_print_grad,
    kernel=_print,
    needs_context=True,
    takes_lod=True,
)
