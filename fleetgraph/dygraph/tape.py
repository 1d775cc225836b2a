"""Reverse mode over the eager tape: `backward` runs the registered grad ops of the recorded ops.

Steps of `backward(loss)`:
  1. collect the tape nodes the loss depends on, newest first (a node's sequence number orders it
     after everything it read);
  2. seed the loss gradient with ones;
  3. for each node whose outputs received a gradient, ask its op's grad maker (the one static
     autodiff uses) for the grad ops, keep only gradients of inputs that need one, and run their
     kernels, reading forward values saved on the node and zeros for output gradients never written;
  4. add up the gradients a variable receives from several ops (dense or SelectedRows);
  5. add the gradients of leaves (parameters, tensors with stop_gradient False) into their `.grad`,
     run the post-backward hooks (DataParallel's all-reduce), and free the tape unless retained (the
     saved values and the links to the tensors read, which hold the activations).
"""

from __future__ import annotations

from typing import Any

from ..executor import trace
from ..ir import FleetgraphError, get_op_def
from ..ir.program import Operator
from ..ir.registry import GRAD_SUFFIX
from ..ops._xp import dtype_of, full
from ..ops.bound import has_bfloat16, in_float32
from ..ops.selected_rows import SelectedRows, merge_dense
from . import mode
from .engine import Node, _array, key, merged_attrs, spec

_post_backward_hooks: list = []


def _as_op(node: Node) -> Operator:
    """The node as the static Operator a grad maker reads: its slots by name, each tape key k named
    '@t<k>' (_key_of reads it back)."""
    s = spec(node.type)
    inputs = {slot: [f"@t{k}" for k in keys] for slot, keys in zip(s.in_slots, node.inputs) if keys}
    outputs = {slot: [f"@t{k}" for k in keys] for (slot, _), keys in zip(s.outs, node.outputs) if keys}
    return Operator(None, node.type, inputs, outputs, node.attrs)


def _key_of(name: str) -> int | None:
    """The tape key of a name _as_op made; None for any other name (a grad op's own temporaries)."""
    return int(name[2:]) if name.startswith("@t") and name[2:].isdigit() else None


def _zeros_like(xp, value):
    if isinstance(value, SelectedRows):
        return full(xp, value.shape, 0, value.dtype)
    return xp.zeros_like(value)


def backward(loss, grad=None, retain_graph: bool = False) -> None:
    """Gradients of `loss` into the `.grad` of every leaf it depends on."""
    if loss.stop_gradient:
        raise FleetgraphError(
            f"backward: {loss.name!r} does not depend on any tensor that needs a gradient (stop_gradient is True)"
        )
    nodes: dict[int, Node] = {}  # step 1
    stack = [loss._node]
    while stack:
        node = stack.pop()
        if node is None or id(node) in nodes:
            continue
        if node.values is None:
            raise FleetgraphError(
                "backward: the graph was freed by an earlier backward(); pass retain_graph=True to the first call"
            )
        nodes[id(node)] = node
        stack.extend(t._node for t in node.parents.values() if t._node is not None)
    value, xp = loss.value, mode.array_module()
    if grad is None:
        seed = xp.ones_like(value)
    else:
        seed = xp.asarray(getattr(grad, "value", grad), dtype=dtype_of(xp, value.dtype))
    if tuple(seed.shape) != tuple(value.shape):  # it would broadcast into wrongly shaped gradients
        raise FleetgraphError(
            f"backward: grad_tensor of {loss.name!r}: expected shape {list(value.shape)}, got {list(seed.shape)}"
        )
    grads: dict[int, Any] = {key(loss): seed}  # step 2
    leaves: dict[int, Any] = {}
    if loss._node is None:
        leaves[key(loss)] = loss
    for node in sorted(nodes.values(), key=_seq, reverse=True):
        for names in node.outputs:
            if any(n in grads for n in names):
                break
        else:
            continue  # no gradient reached this node's outputs
        parents = node.parents
        for name, value in _grads_of(node, grads, xp):  # step 3
            old = grads.get(name)  # step 4
            grads[name] = value if old is None else _added(xp, old, value)
            parent = parents[name]
            if parent._node is None:
                leaves[name] = parent
    for name, t in leaves.items():  # step 5
        g = grads.get(name)
        if g is not None:
            t._grad = g if t._grad is None else _added(xp, t._grad, g)
    for hook in list(_post_backward_hooks):
        hook()
    if not retain_graph:  # a loss kept to log it keeps neither the saved values nor the activations
        for node in nodes.values():
            node.values = None
            node.parents = {}


def _seq(node: Node) -> int:
    return node.seq


def _added(xp, a, b):
    """a + b for gradients, dense or SelectedRows (a fresh array: `a` may be a leaf's .grad)."""
    if not isinstance(a, SelectedRows) and not isinstance(b, SelectedRows) and a.shape == b.shape:
        return a + b
    return merge_dense(xp, [a, b])


def _grads_of(node: Node, grads: dict, xp) -> list:
    """(parent key, gradient) pairs from the grad ops of one node, through its type's plan."""
    plan = _PLANS.get(node.type)
    if plan is None:
        maker = get_op_def(node.type).grad
        plan = _PLANS[node.type] = _GradPlan(node, maker) if hasattr(maker, "inputs") else maker
    if plan.__class__ is _GradPlan:  # a make_grad_op maker: one grad op whose slots name forward slots
        return _run_slot_grad_op(node, plan, grads, xp)
    return _run_grad_ops(node, plan, grads, xp)


def _run_grad_ops(node: Node, maker, grads: dict, xp) -> list:
    """Run the grad ops a general maker gives for one node; the gradients it gives its parents."""
    descs = maker(_as_op(node))
    env: dict[str, Any] = {}
    produced = []
    for desc in descs:
        outputs = {
            slot: [
                n if n.endswith(GRAD_SUFFIX) and _key_of(n[: -len(GRAD_SUFFIX)]) in node.parents else None
                for n in names
            ]
            for slot, names in desc["outputs"].items()
        }
        outputs = {slot: names for slot, names in outputs.items() if any(names)}
        if not outputs:
            continue
        s = spec(desc["type"])
        args = []
        for slot, dup in s.ins:
            names = desc["inputs"].get(slot)
            if not names:
                args.append(None)
                continue
            values = [_lookup(xp, n, node, grads, env) for n in names]
            args.append(values if dup else values[0])
        attrs = merged_attrs(s, desc.get("attrs"))
        bound = s.bind(attrs, outputs, next(n for ns in outputs.values() for n in ns if n))
        low = s.type != "cast" and has_bfloat16(args)
        if low:  # the gradient of a bfloat16 op computes as it did
            bound.kernel = in_float32(bound.kernel, narrow=False)
        result = bound(xp, *args)
        results = [result] if s.single_out else result
        for (slot, dup), value in zip(s.outs, results):
            names = outputs.get(slot)
            if not names:
                continue
            for n, v in zip(names, value if dup else [value]):
                if n is not None and v is not None:
                    k = _key_of(n[: -len(GRAD_SUFFIX)])
                    env[n] = _as_dtype_of(node.values[k], _array(v, xp)) if low else _array(v, xp)
                    produced.append((k, env[n]))
    return produced


class _GradPlan:
    """How a make_grad_op maker's grad op reads one op type's node, worked out once per type: for
    each grad-op input slot, where the forward slot it reads sits in the node (its inputs or its
    outputs, at which index) and whether it is that slot's gradient; for each output 'X@GRAD', where
    slot X sits; and whether the node's attrs (the forward op's, complete) are the grad op's too, so
    they pass to its kernel as they are."""

    __slots__ = ("spec", "ins", "outs", "same_attrs")

    def __init__(self, node: Node, maker) -> None:
        forward = spec(node.type)
        self.spec = spec(maker(_as_op(node))[0]["type"])
        wanted_in, wanted_out = set(maker.inputs), set(maker.outputs)

        out_slots = [name for name, _ in forward.outs]

        def where(slot: str) -> tuple[bool, int]:
            """(True, i): the node's inputs[i]; (False, i): its outputs[i]."""
            if slot in forward.in_slots:
                return True, forward.in_slots.index(slot)
            if slot in out_slots:
                return False, out_slots.index(slot)
            raise FleetgraphError(
                f"{self.spec.type}: reads slot {slot!r}; expected one of {node.type}'s slots "
                f"{list(forward.in_slots) + out_slots}"
            )

        self.ins = []
        for slot, dup in self.spec.ins:
            if slot not in wanted_in:
                self.ins.append(None)
                continue
            is_grad = slot.endswith(GRAD_SUFFIX)
            self.ins.append((*where(slot[: -len(GRAD_SUFFIX)] if is_grad else slot), is_grad, dup))
        self.outs = [
            (slot, *where(slot[: -len(GRAD_SUFFIX)]), dup) for slot, dup in self.spec.outs if slot in wanted_out
        ]
        self.same_attrs = set(self.spec.attrs) == set(forward.attrs)


_PLANS: dict[str, object] = {}  # op type -> its _GradPlan, or its general grad maker


def _run_slot_grad_op(node: Node, plan: _GradPlan, grads: dict, xp) -> list:
    """What `_run_grad_ops` does for the common maker, without building names: the grad op's input
    slot 'X' reads the forward values of slot X, 'Out@GRAD' the gradients of slot Out's outputs (zeros
    where none arrived), and output 'X@GRAD' gives the gradients of slot X's inputs."""
    parents, values, fins, fouts = node.parents, node.values, node.inputs, node.outputs
    wanted = {}
    for slot, is_in, i, _ in plan.outs:
        names = fins[i] if is_in else fouts[i]
        if not names:
            continue
        if len(names) == 1:
            if names[0] in parents:
                wanted[slot] = names
            continue
        chosen = [n if n in parents else None for n in names]
        if chosen.count(None) < len(chosen):
            wanted[slot] = chosen
    if not wanted:
        return []
    args = []
    for entry in plan.ins:
        if entry is None:
            args.append(None)
            continue
        is_in, i, is_grad, dup = entry
        names = fins[i] if is_in else fouts[i]
        if is_grad:
            got = [grads[n] if n in grads else _zeros_like(xp, values[n]) for n in names]
        else:
            got = [values[n] for n in names]
        args.append((got if dup else got[0]) if got else None)
    s = plan.spec
    attrs = node.attrs
    if not plan.same_attrs:
        attrs = {k: attrs[k] if k in attrs else default for k, default in s.attrs.items()}
    bound = s.bound  # its kwargs are the attrs themselves, and the gradients wanted (so it skips the others)
    kwargs = {**attrs, "need": frozenset(wanted)} if s.want else attrs
    kernel = bound.kernel
    low = s.type != "cast" and has_bfloat16(args)
    if low:  # the gradient of a bfloat16 op computes as it did
        kernel = in_float32(kernel, narrow=False)
    try:
        if trace.ACTIVE is None:
            result = kernel(xp, *args, **kwargs)
        else:  # a profiler runs: the call is an event
            result = trace.timed(s.type, kernel, xp, *args, **kwargs)
    except FleetgraphError:
        raise
    except Exception as e:
        raise bound.failure(e, args, f"{s.type} (eager)") from e
    if s.single_out:
        ((slot, dup),) = s.outs
        names = wanted.get(slot)
        if not dup and names and not low:
            return [] if result is None else [(names[0], _array(result, xp))]
        results = [result]
    else:
        results = result
    produced = []
    for (slot, dup), value in zip(s.outs, results):
        names = wanted.get(slot)
        if not names:
            continue
        for n, v in zip(names, value if dup else [value]):
            if n is not None and v is not None:
                produced.append((n, _as_dtype_of(values[n], _array(v, xp)) if low else _array(v, xp)))
    return produced


def _as_dtype_of(forward, grad):
    """A gradient computed in float32 for a bfloat16 op, as its variable's dtype (Paddle's bf16 grad
    kernels give a bfloat16 input a bfloat16 gradient, a float32 one a float32 gradient)."""
    dtype = getattr(forward, "dtype", None)
    if dtype is None or isinstance(grad, SelectedRows) or grad.dtype == dtype:
        return grad
    return grad.astype(dtype)


def _lookup(xp, name: str, node: Node, grads: dict, env: dict):
    if name in env:
        return env[name]
    if name.endswith(GRAD_SUFFIX):
        base = _key_of(name[: -len(GRAD_SUFFIX)])
        if base in grads:
            return grads[base]
        return _zeros_like(xp, node.values[base])
    return node.values[_key_of(name)]


def register_post_backward_hook(hook) -> None:
    """`hook()` runs after every backward(), once the leaves hold their gradients."""
    _post_backward_hooks.append(hook)


def remove_post_backward_hook(hook) -> None:
    if hook in _post_backward_hooks:
        _post_backward_hooks.remove(hook)
