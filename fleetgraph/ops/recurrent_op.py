"""The `recurrent` op (StaticRNN's): a step block run once per time step over inputs sliced along
dimension 0, with states carried from each step to the next, and `recurrent_grad`, which runs the
gradient block once per step, last step first; and `rnn_memory_helper`, the identity StaticRNN
puts between a step's variables and the op's outputs and states.

As with `while` (ops/control_flow.py), every block reads and writes the run's one env. The step
block names a step's slice of an input, and a step's value of an output, as the outer variable
itself: the kernel puts the slice under that name for the step and the whole sequence back after
the last one. Each step's values are kept as data (step_scopes) for the gradient, which puts them
back before it runs that step's gradient block.
"""

from __future__ import annotations

from ..ir import FleetgraphError, InferContext, register_op
from ..ir.program import VarType
from .control_flow import GRAD, SeparateGrads, grad_slots, input_grads_of


def _offsets(n: int, reverse: bool) -> list[int]:
    """The time steps in the order the forward pass visits them."""
    return list(range(n - 1, -1, -1)) if reverse else list(range(n))


def _seq_len(inputs, names: list[str]) -> int:
    lengths = {name: x.shape[0] for name, x in zip(names, inputs)}
    if not lengths:
        raise FleetgraphError("recurrent: no inputs; expected at least one sequence to step over")
    if len(set(lengths.values())) != 1:
        raise FleetgraphError(f"recurrent: inputs {lengths} have different lengths; expected one sequence length")
    return next(iter(lengths.values()))


def _recurrent_infer(ctx: InferContext) -> None:
    ctx.set_output("step_scopes", (), type=VarType.STEP_SCOPES)


def _recurrent(
    xp,
    inputs,
    initial_states,
    parameters,
    *,
    ex_states,
    states,
    sub_block,
    reverse,
    is_train,
    has_states,
    skip_eager_deletion_vars,
    ctx,
):
    """Per step: each input's slice and each ex_state (the initial state, then the previous step's
    state) under their step-block names, the step block, and the step's outputs collected; the
    outputs stacked along dimension 0. With is_train, each step's values are recorded for the
    gradient."""
    env, op = ctx.env, ctx.op
    names, out_names = op.input("inputs"), op.output("outputs")
    offsets = _offsets(_seq_len(inputs, names), reverse)
    kept = ctx.plan(sub_block).written | set(names) | set(ex_states)
    collected: dict[int, list] = {}
    steps = []
    for i, t in enumerate(offsets):
        env.update({name: x[t, ...] for name, x in zip(names, inputs)})
        if has_states:
            carried = initial_states if i == 0 else [env[s] for s in states]
            env.update(zip(ex_states, carried))
        ctx.run_block(sub_block)
        collected[t] = [env[n] for n in out_names]
        if is_train:
            steps.append((t, {n: env[n] for n in kept if n in env}))
    env.update(zip(names, inputs))
    outputs = [xp.stack([collected[t][k] for t in sorted(collected)]) for k in range(len(out_names))]
    return outputs, steps


def _recurrent_grad_maker(op, grad_block: int) -> list[dict]:
    """Paddle's RecurrentGradOpMaker: every forward slot in, a gradient for every input slot out."""
    inputs = {slot: op.input(slot) for slot in ("inputs", "initial_states", "parameters")}
    return [
        dict(
            type="recurrent_grad",
            inputs={
                **inputs,
                "outputs": op.output("outputs"),
                "outputs@GRAD": [n + GRAD for n in op.output("outputs")],
                "step_scopes": op.output("step_scopes"),
            },
            outputs={slot + GRAD: [n + GRAD for n in names] for slot, names in inputs.items()},
            attrs={**{key: op.attrs[key] for key in _ATTRS}, "sub_block": grad_block},
        )
    ]


_ATTRS = {
    "ex_states": [],
    "states": [],
    "sub_block": 0,
    "reverse": False,
    "is_train": True,
    "has_states": False,
    "skip_eager_deletion_vars": [],
}

register_op(
    "recurrent",
    inputs=("inputs*", "initial_states*?", "parameters*?"),
    outputs=("outputs*", "step_scopes"),
    attrs=_ATTRS,
    infer_shape=_recurrent_infer,
    grad=_recurrent_grad_maker,
    kernel=_recurrent,
    needs_context=True,
)


def _recurrent_grad(
    xp,
    inputs,
    initial_states,
    parameters,
    outputs,
    out_grads,
    step_scopes,
    *,
    ctx,
    **attrs,
):
    """The gradient block per step, last step first, on that step's recorded values: the step's
    slice of each output's gradient and, as each state's gradient, its ex_state's gradient from
    the step after (zero at the last step) come in; each input's gradient slice and the
    parameters' gradients (summed over the steps) go out, and at the first step the ex_states'
    gradients are the initial states'. The forward values and the env's other gradients under the
    same names are put back afterwards. `attrs`: the forward op's, which the gradient op carries."""
    if not attrs["is_train"]:
        raise FleetgraphError("recurrent_grad: the recurrent op ran with is_train=False and recorded no steps")
    env, op = ctx.env, ctx.op
    ex_states, states = attrs["ex_states"], attrs["states"]
    in_names, in_grad_names = grad_slots(ctx, "inputs")
    param_names, param_grad_names = grad_slots(ctx, "parameters")
    incoming = {n.split(GRAD)[0]: g for n, g in zip(op.input("outputs@GRAD"), out_grads)}
    own = [n + GRAD for n in (*in_names, *op.input("outputs"), *states, *ex_states)]
    saved = {g: env[g] for g in own if g in env}
    final = {n: env[n] for _, values in step_scopes for n in values if n in env}
    separate = SeparateGrads(env, [n for n, g in zip(param_names, param_grad_names) if g])
    carry = None
    in_grads: dict[int, list] = {}
    for t, values in reversed(step_scopes):
        env.update(values)
        for name in op.input("outputs"):
            grad = incoming.get(name)
            env[name + GRAD] = xp.zeros_like(env[name]) if grad is None else grad[t, ...]
        for k, state in enumerate(states):
            env[state + GRAD] = xp.zeros_like(env[state]) if carry is None else carry[k]
        for name in (*in_names, *ex_states):
            env.pop(name + GRAD, None)
        ctx.run_block(attrs["sub_block"])
        separate.collect(xp)
        carry = [_popped_grad(xp, env, ex) for ex in ex_states]
        in_grads[t] = [_popped_grad(xp, env, n) for n in in_names]
    env.update(final)
    for g in own:
        env.pop(g, None)
    env.update(saved)
    separate.restore()
    order = sorted(in_grads)
    input_grads = [
        None if g is None else xp.stack([in_grads[t][k] for t in order]) for k, g in enumerate(in_grad_names)
    ]
    _, init_grad_names = grad_slots(ctx, "initial_states")
    init_grads = [
        None if g is None else xp.zeros_like(x) if carry is None else carry[k]
        for k, (g, x) in enumerate(zip(init_grad_names, initial_states))
    ]
    return input_grads, init_grads, input_grads_of(xp, ctx, param_names, param_grad_names, set(), separate.sums)


def _popped_grad(xp, env: dict, name: str):
    """The gradient the step block left for `name`, taken out of the env; zeros where none flowed."""
    grad = env.pop(name + GRAD, None)
    return xp.zeros_like(env[name]) if grad is None else grad


register_op(
    "recurrent_grad",
    inputs=("inputs*", "initial_states*?", "parameters*?", "outputs*", "outputs@GRAD*?", "step_scopes"),
    outputs=("inputs@GRAD*?", "initial_states@GRAD*?", "parameters@GRAD*?"),
    attrs=_ATTRS,
    kernel=_recurrent_grad,
    needs_context=True,
)


def _rnn_memory_helper_infer(ctx: InferContext) -> None:
    x = ctx.input_var("X")
    ctx.set_output("Out", x.shape, x.dtype)


def _rnn_memory_helper_grad_maker(op) -> list[dict]:
    return [
        dict(
            type="rnn_memory_helper_grad",
            inputs={"Out@GRAD": [n + GRAD for n in op.output("Out")], "X": op.input("X"), "Out": op.output("Out")},
            outputs={"X@GRAD": [n + GRAD for n in op.input("X")]},
            attrs={"dtype": op.attrs["dtype"]},
        )
    ]


register_op(
    "rnn_memory_helper",
    inputs=("X",),
    outputs=("Out",),
    attrs={"dtype": "float32"},
    infer_shape=_rnn_memory_helper_infer,
    grad=_rnn_memory_helper_grad_maker,
    kernel=lambda xp, x, *, dtype: x,
)

register_op(
    "rnn_memory_helper_grad",
    inputs=("Out@GRAD?", "X", "Out"),
    outputs=("X@GRAD",),
    attrs={"dtype": "float32"},
    kernel=lambda xp, out_grad, x, out, *, dtype: xp.zeros_like(x) if out_grad is None else out_grad,
)
