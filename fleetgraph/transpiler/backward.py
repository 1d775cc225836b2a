"""Reverse-mode autodiff over a block: gradient ops are appended as ordinary ops.

Steps of `append_backward(loss)`:
  1. find the forward ops on a path from a gradient source (a trainable parameter, or a variable
     that does not stop gradients) to the loss;
  2. seed the loss gradient with `fill_constant` (value 1);
  3. ask each of those ops, last to first, for its gradient ops, dropping gradients of variables
     that need none and ops left with no output;
  4. give repeated writes of one gradient their own names (`x@GRAD@RENAME@block0@k`) and add them
     up with a `sum` op before the first read (or at the end);
  5. create the gradient variables, append the ops under op_role Backward, tag each parameter
     gradient's last producer with op_role_var [param, grad], and return (param, grad) pairs.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..ir import FleetgraphError, OpRole, Parameter, Variable, VarType, get_op_def
from ..ir.program import Block, Operator
from .error_clip import error_clip_callback

GRAD = "@GRAD"


def grad_var_name(name: str) -> str:
    return name + GRAD


def _forward_name(grad_name: str) -> str:
    return grad_name.split(GRAD)[0]


def _names(items) -> set[str]:
    return {v.name if isinstance(v, Variable) else v for v in (items or [])}


def append_backward(
    loss: Variable,
    parameter_list: Iterable | None = None,
    no_grad_set: Iterable | None = None,
    callbacks=None,
    checkpoints: Iterable | None = None,
) -> list[tuple[Parameter, Variable]]:
    """Append the gradient ops of `loss` to its block; returns (parameter, gradient) pairs.

    Each callback is called as `callback(block=, context=)` after each gradient op is appended, the
    context mapping each gradient name to its forward variable's, as Paddle's; `error_clip_callback`
    (a variable's `error_clip`) is always among them.

    A loss built inside a sub-block gets its gradient ops in a new block, as Paddle does: a sibling
    of the loss's block (same parent) whose forward block is the loss's, left as the current block
    so that the optimizer's ops follow them there.
    """
    block = loss.block
    params = [p for p in block.program.all_parameters() if p.trainable]
    if parameter_list is not None:
        wanted = _names(parameter_list)
        params = [p for p in params if p.name in wanted]
    sources = {p.name for p in params}
    target = block
    if block.idx != 0:
        target = block.program._create_block(parent_idx=block.parent_idx)
        target.forward_block_idx = block.idx
    callbacks = list(callbacks or [])
    if error_clip_callback not in callbacks:  # as Paddle's: error clips always apply
        callbacks.append(error_clip_callback)
    kw = dict(target=target, checkpoints=_names(checkpoints), callbacks=callbacks)
    grads = _append_grad_ops(block, [loss], sources, _names(no_grad_set), False, **kw)
    pairs = [(p, target.var(grads[p.name])) for p in params if p.name in grads]
    _tag_param_grads(target, pairs)
    return pairs


def gradients(targets, inputs, target_gradients=None, no_grad_set=None) -> list[Variable | None]:
    """Gradients of the sum of `targets` with respect to `inputs` (None where one does not depend)."""
    targets = targets if isinstance(targets, (list, tuple)) else [targets]
    inputs = inputs if isinstance(inputs, (list, tuple)) else [inputs]
    if target_gradients is not None:
        raise FleetgraphError("gradients: target_gradients is not supported; scale the target instead")
    block = targets[0].block
    grads = _append_grad_ops(block, targets, _names(inputs), _names(no_grad_set), leaves_need_grad=True)
    return [block.var(grads[v.name]) if v.name in grads else None for v in inputs]


def _append_grad_ops(
    block: Block,
    targets,
    sources: set[str],
    no_grad: set[str],
    leaves_need_grad: bool,
    target: Block | None = None,
    checkpoints: set[str] | None = None,
    callbacks: list = (),
):
    """Gradient ops of `targets` over `block`'s forward ops, appended to `target` (default `block`);
    with `checkpoints`, forward segments between them are recomputed in the backward pass."""
    target = target or block
    forward = [op for op in block.ops if not op.attrs.get("op_role", 0) & (OpRole.Backward | OpRole.Optimize)]
    # an integer or bool variable carries no gradient: a counter, a comparison, a mask
    stop = no_grad | {
        v.name for v in block.vars.values() if (v.stop_gradient or not _floating(v)) and v.name not in sources
    }
    # step 1: variables that carry a gradient from a source, and ops that lead to a target
    requires = set(sources) - stop
    if leaves_need_grad:
        requires |= {n for n in sources if n not in stop}
    for op in forward:
        if any(n in requires for n in op.input_arg_names):
            requires |= {n for n in op.output_arg_names if n not in stop}
    needed = {t.name for t in targets}
    path: list[Operator] = []
    for op in reversed(forward):
        if any(n in needed for n in op.output_arg_names) and any(n in requires for n in op.input_arg_names):
            path.append(op)
            needed |= {n for n in op.input_arg_names if n in requires}
    # step 2: seed the target gradients
    for t in targets:
        if t.name not in requires and t.name not in sources:
            raise FleetgraphError(f"append_backward: {t.name!r} does not depend on any trainable variable")
        if any(d < 0 for d in t.shape):
            raise FleetgraphError(
                f"append_backward: target {t.name!r} has shape {list(t.shape)}; "
                "expected a static shape such as [1] (reduce it with mean first)"
            )
        _mark_loss_op(block, t.name)
    seeds = [
        dict(
            type="fill_constant",
            inputs={},
            outputs={"Out": [grad_var_name(t.name)]},
            attrs={
                "shape": list(t.shape),
                "value": 1.0,
                "dtype": t.dtype,
                "op_role": int(OpRole.Backward | OpRole.Loss),
            },
        )
        for t in targets
    ]
    # step 3: gradient ops, last forward op first
    per_op = _grad_descs(path, requires, no_grad, target)
    if checkpoints:
        descs = _with_recompute(block, target, forward, per_op, checkpoints, {t.name for t in targets})
    else:
        descs = [d for _, op_descs in per_op for d in op_descs]
    # step 4: unique names for repeated writes, sums before reads; zeros for gradients never written
    descs, _ = _accumulate(seeds + descs, target)
    # step 5: variables and ops
    _append_descs(target, descs, callbacks)
    produced = {n for d in descs for names in d["outputs"].values() for n in names if n}
    return {_forward_name(g): g for g in produced if g.endswith(GRAD) and _forward_name(g) in sources}


def _grad_descs(path: list[Operator], requires: set[str], no_grad: set[str], target: Block) -> list:
    """Each path op's gradient op descriptions, as (op, descs) pairs. An op with a sub-block gets a
    gradient block built from it first (`_grad_sub_block`), which its maker names. The last desc
    of an op lists the gradients its writes end (`_kills`): a variable written here and read
    earlier (a loop's carried value, an assign into an existing variable) is another version there."""
    per_op = []
    for op in path:
        op_descs = []
        maker = get_op_def(op.type).grad
        if maker is None:  # a comparison, a metric, a constant: passes no gradient back, as in Paddle
            made = ()
        elif "sub_block" in op.attrs:
            made = maker(op, _grad_sub_block(op, requires, no_grad, target))

            def carries(name: str, block=op.block) -> bool:
                return _forward_name(name) in requires and _floating(block.var_recursive(_forward_name(name)))

            for desc in made:  # gradients flow in and out only for float variables that carry one
                desc["inputs"] = {
                    slot: [n for n in names if GRAD not in n or carries(n)] for slot, names in desc["inputs"].items()
                }
                desc["outputs"] = {
                    slot: [n if carries(n) else None for n in names] for slot, names in desc["outputs"].items()
                }
        else:
            made = maker(op)
        for desc in made:
            desc["outputs"] = {
                slot: [n if n and _forward_name(n) in requires else None for n in names]
                for slot, names in desc["outputs"].items()
            }
            if any(n for names in desc["outputs"].values() for n in names):
                op_descs.append(desc)
        # A write ends the gradient of what it overwrote, except a tensor array's (written element by
        # element) and a branch's or loop's: one that did not run (or ran no iteration) passes the old
        # value on, and its gradient block zeroes the gradient itself when it did run.
        if op_descs and "sub_block" not in op.attrs:
            op_descs[-1]["_kills"] = [
                grad_var_name(n)
                for n in op.output_arg_names
                if n not in op.input_arg_names and op.block.var_recursive(n).type != VarType.LOD_TENSOR_ARRAY
            ]
        per_op.append((op, op_descs))
    return per_op


def _grad_sub_block(op: Operator, requires: set[str], no_grad: set[str], parent: Block) -> int:
    """The gradient block of a sub-block op (conditional_block, while), as Paddle builds it: a child
    of `parent` whose forward block is the sub-block, holding the gradient ops of the sub-block's
    ops on a path from the op's inputs to its outputs. The gradients of the op's outputs come in
    from outside under their own names; an output the sub-block overwrites without reading leaves
    a zero gradient for what came before it. Returns the new block's index."""
    program = op.block.program
    sub = program.block(op.attrs["sub_block"])
    current = program.current_block_idx
    grad_block = program._create_block(parent_idx=parent.idx)
    grad_block.forward_block_idx = sub.idx
    program.current_block_idx = current
    stop = no_grad | {v.name for v in sub.vars.values() if v.stop_gradient or not _floating(v)}
    outs, links = _sub_block_outputs(op)
    inner = set(requires)
    grew = True
    while grew:  # to a fixed point: a loop's later iterations read what its last ops write
        grew = False
        for o in sub.ops:
            if any(n in inner for n in o.input_arg_names):
                new = {n for n in o.output_arg_names if n not in stop} - inner
                inner |= new
                grew = grew or bool(new)
        for name, sources in links.items():
            if name not in inner | stop and sources & inner:
                inner.add(name)
                grew = True
    outer = [n for n in outs if n in inner and _floating(sub.var_recursive(n))]
    needed, on_path = set(outer), set()
    grew = True
    while grew:
        grew = False
        for o in reversed(sub.ops):
            if id(o) not in on_path and any(n in needed for n in o.output_arg_names):
                if any(n in inner for n in o.input_arg_names):
                    on_path.add(id(o))
                    needed |= {n for n in o.input_arg_names if n in inner}
                    grew = True
    path = [o for o in reversed(sub.ops) if id(o) in on_path]
    per_op = _grad_descs(path, inner, no_grad, grad_block)
    incoming = [grad_var_name(n) for n in outer]
    for name in outer:  # the op feeds these to its gradient block (a recurrent op's states' from the step after)
        if parent._find_var_recursive(grad_var_name(name)) is None:
            _create_grad_var(grad_block, grad_var_name(name), sub.var_recursive(name), is_data=True)
    # while_grad starts each iteration's gradient block on the values its carried variables had at its start
    started = set(op.output("Out")) if op.type == "while" else set()
    descs, dead = _accumulate(_with_counters(sub, per_op, started), grad_block, incoming)
    for name in outer:
        if grad_var_name(name) in dead:
            descs.append(
                dict(type="fill_zeros_like", inputs={"X": [name]}, outputs={"Out": [grad_var_name(name)]}, attrs={})
            )
    _append_descs(grad_block, descs)
    return grad_block.idx


def _with_counters(sub: Block, per_op: list, started: set[str]) -> list[dict]:
    """The gradient descs of a loop body, and the counters it steps in place (`increment` with X
    its Out) that they read, of those whose value at the iteration's start the gradient block
    starts on (`started`): each such counter is stepped at the start of the gradient block, to the
    value the body left, and stepped back (Paddle's increment gradient, step -step) where its
    increment falls among the gradient ops, so each gradient op reads the counter its forward op
    read (DynamicRNN writes its memory at the incremented step)."""
    descs = [d for _, op_descs in per_op for d in op_descs]
    read = {n for d in descs for names in d["inputs"].values() for n in names if GRAD not in n} & started
    counters = [
        o for o in sub.ops if o.type == "increment" and o.input("X") == o.output("Out") and o.input("X")[0] in read
    ]
    if not counters:
        return descs

    def step(o: Operator, sign: float) -> dict:
        return dict(
            type="increment",
            inputs={"X": o.input("X")},
            outputs={"Out": o.input("X")},
            attrs={"step": sign * o.attrs["step"]},
        )

    by_op = {id(op): op_descs for op, op_descs in per_op}
    by_op.update({id(o): [step(o, -1.0)] for o in counters})
    return [step(o, 1.0) for o in counters] + [d for o in reversed(sub.ops) for d in by_op.get(id(o), ())]


def _sub_block_outputs(op: Operator) -> tuple[list[str], dict[str, set[str]]]:
    """The variables whose gradients come into a sub-block op's gradient block from outside: a
    branch's or loop's Out; a recurrent op's outputs and states, as its step block names them. And
    the recurrent op's links between steps: each ex_state holds its initial state at the first
    step and its state from the step before after that."""
    if "states" not in op.attrs:
        return op.output("Out"), {}
    steps = zip(op.attrs["ex_states"], op.input("initial_states"), op.attrs["states"])
    return op.output("outputs") + list(op.attrs["states"]), {ex: {init, state} for ex, init, state in steps}


def _floating(var: Variable) -> bool:
    return var.dtype in ("float16", "bfloat16", "float32", "float64")


def _append_descs(target: Block, descs: list[dict], callbacks=()) -> None:
    """Create the gradient variables the descs name (shaped as their forward variables) and append
    the ops under op_role Backward, calling the callbacks after each."""
    grad_to_var: dict[str, str] = {}
    with target.program._backward_role_guard():
        for desc in descs:
            for names in list(desc["inputs"].values()) + list(desc["outputs"].values()):
                for name in names:
                    if name and not target._find_var_recursive(name):
                        _create_grad_var(target, name, target.var_recursive(_forward_name(name)))
            op = target.append_op(desc["type"], desc["inputs"], _kept_outputs(target, desc), desc["attrs"])
            grad_to_var.update({n: _forward_name(n) for n in op.output_arg_names if GRAD in n})
            for callback in callbacks:
                callback(block=target, context=grad_to_var)


def _create_grad_var(block: Block, name: str, fwd: Variable, **kw) -> None:
    """The gradient variable `name` of `fwd`: its shape, dtype and LoD level, and an array's type."""
    kind = {"type": fwd.type} if fwd.type == VarType.LOD_TENSOR_ARRAY else {}
    block.create_var(name, fwd.shape, fwd.dtype, lod_level=fwd.lod_level, **kind, **kw)


def _with_recompute(block: Block, target: Block, forward, per_op, checkpoints: set[str], losses: set[str]) -> list:
    """The gradient ops with forward recomputation, as Paddle's RecomputeOptimizer builds them: the
    forward ops are cut into segments at the checkpoints (each checkpoint's producer ends one; the
    ops before the first form one more); walking the gradients back, each segment's forward ops are
    run again, their outputs renamed `name.subprog_k` (the last segment k=0), just before the
    segment's gradient ops, which read the recomputed values. Only checkpoints, inputs, parameters,
    values used outside their segment and the outputs of random ops are kept from the forward pass:
    the rest of a segment's activations are needed only there."""
    producer: dict[str, int] = {}
    for i, op in enumerate(forward):
        for name in op.output_arg_names:
            producer.setdefault(name, i)
    marks = sorted({producer[c] for c in checkpoints if c in producer})
    if not marks:
        raise FleetgraphError(
            f"RecomputeOptimizer: none of the checkpoints {sorted(checkpoints)} is computed by the forward "
            "ops; expected outputs of layers such as fc"
        )
    segments = [(0, marks[0] + 1)] if len(marks) == 1 else [(a + 1, b + 1) for a, b in zip(marks, marks[1:])]
    if segments[0][0] != 0:
        segments.insert(0, (0, segments[0][0]))
    produced = set(producer)
    kept = set(checkpoints) | {n for op in forward for n in op.input_arg_names if n not in produced}
    for a, b in segments:
        inside = {n for op in forward[a:b] for n in op.output_arg_names}
        outside = {n for i, op in enumerate(forward) if not a <= i < b for n in op.input_arg_names} | losses
        kept |= inside & outside
    kept |= {n for op in forward if get_op_def(op.type).random for n in op.output_arg_names}

    def recomputed(name: str) -> bool:
        var = block._find_var_recursive(name)
        return name not in kept and not (var is not None and var.persistable)

    segment_of = {i: k for k, (a, b) in enumerate(segments) for i in range(a, b)}
    index = {id(op): i for i, op in enumerate(forward)}
    out, entered, renames = [], set(), {}
    for op, op_descs in per_op:
        k = segment_of.get(index[id(op)])
        if k is not None and k not in entered:
            entered.add(k)
            a, b = segments[k]
            suffix = f".subprog_{len(segments) - 1 - k}"
            rename = {
                n: n + suffix for o in forward[a:b] for n in o.input_arg_names + o.output_arg_names if recomputed(n)
            }
            renames[k] = rename
            for name, new in rename.items():
                var = block.var_recursive(name)
                target.create_var(new, var.shape, var.dtype, lod_level=var.lod_level)
            for fwd in forward[a:b]:
                if any(recomputed(n) for n in fwd.output_arg_names):
                    attrs = {k2: v for k2, v in fwd.attrs.items() if k2 not in ("op_role", "op_role_var")}
                    out.append(
                        dict(
                            type=fwd.type,
                            inputs=_renamed(fwd.inputs, rename),
                            outputs=_renamed(fwd.outputs, rename),
                            attrs=attrs,
                        )  # fmt: skip
                    )
        for desc in op_descs:
            if k is not None:
                desc["inputs"] = _renamed(desc["inputs"], renames[k])
            out.append(desc)
    return out


def _renamed(slots: dict, rename: dict) -> dict:
    return {slot: [rename.get(n, n) for n in names] for slot, names in slots.items()}


EMPTY_VAR = "@EMPTY@"  # Paddle's kEmptyVarName: a gradient slot position nobody reads


def _kept_outputs(block: Block, desc: dict) -> dict:
    """The gradient op's outputs without the gradients nobody needs. In a list slot ('X@GRAD*') a
    needed gradient keeps its position: the ones around it are written to '@EMPTY@', as in Paddle."""
    opdef = get_op_def(desc["type"])
    outputs = {}
    for slot, names in desc["outputs"].items():
        if not any(names):
            continue
        if opdef.output_slot(slot).duplicable and not all(names):
            if not block.has_var(EMPTY_VAR):
                block.create_var(EMPTY_VAR, stop_gradient=True)
            outputs[slot] = [n or EMPTY_VAR for n in names]
        else:
            outputs[slot] = [n for n in names if n]
    return outputs


def _mark_loss_op(block: Block, name: str) -> None:
    for op in reversed(block.ops):
        if name in op.output_arg_names:
            op.attrs["op_role"] = int(op.attrs.get("op_role", 0) | OpRole.Loss)
            return


def _accumulate(descs: list[dict], block: Block, incoming: Iterable[str] = ()) -> tuple[list[dict], set[str]]:
    """Rename repeated writes of a gradient and insert `sum` ops, as Paddle's backward does.

    Versions: a gradient a desc both reads and writes (a loop's carried variable) starts over with
    that write, and the gradients a forward op's writes end (`_kills`) start over with their next
    write; read before any, they are zero. `incoming` names gradients that exist before the first
    desc (a gradient block's outputs' gradients). Returns the descs and the gradients ended and
    never written again."""
    out: list[dict] = []
    pending: dict[str, list[str]] = {name: [name] for name in incoming}
    dead: set[str] = set()
    counter = [0]

    def flush(name: str) -> None:
        parts = pending.get(name, [])
        if len(parts) > 1:
            out.append(dict(type="sum", inputs={"X": parts}, outputs={"Out": [name]}, attrs={}))
            pending[name] = [name]

    for desc in descs:
        kills = desc.pop("_kills", ())
        read = set()
        for names in desc["inputs"].values():
            for name in names:
                if GRAD not in name:
                    continue
                read.add(name)
                if name in pending:
                    flush(name)
                else:
                    # an output of the forward op that nothing downstream used: its gradient is zero
                    out.append(
                        dict(
                            type="fill_zeros_like",
                            inputs={"X": [_forward_name(name)]},
                            outputs={"Out": [name]},
                            attrs={},
                        )
                    )
                    pending[name] = [name]
        for names in desc["outputs"].values():
            for i, name in enumerate(names):
                if not name or GRAD not in name:  # a forward value (a recomputed one, a loop's counter)
                    continue
                if name in pending and name not in read:
                    renamed = f"{name}@RENAME@block{block.idx}@{counter[0]}"
                    counter[0] += 1
                    names[i] = renamed
                    pending[name].append(renamed)
                else:
                    pending[name] = [name]
                dead.discard(name)
        out.append(desc)
        for name in kills:
            if name in pending:
                flush(name)
                del pending[name]
                dead.add(name)
    for name in list(pending):
        flush(name)
    return out, dead


def _tag_param_grads(block: Block, pairs) -> None:
    """op_role_var [param, grad, ...] on each gradient's last producer: one op may produce several
    (a loop's gradient op gives every parameter read in its body one)."""
    tagged: set[int] = set()
    for param, grad in pairs:
        for op in reversed(block.ops):
            if grad.name in op.output_arg_names:
                before = op.attrs["op_role_var"] if id(op) in tagged else []
                op.attrs["op_role_var"] = [*before, param.name, grad.name]
                tagged.add(id(op))
                break
