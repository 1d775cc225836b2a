"""Eager execution over the op registry: an op's registered kernel runs at once on Tensors' values,
and, when gradients are on and an input needs one, the op goes on the tape as a Node (its slots'
names, attrs and the values its grad ops may read); `tape.backward` walks the Nodes."""

from __future__ import annotations

import itertools

import numpy as np

from ..executor import rng
from ..ir import FleetgraphError, KernelError, get_op_def
from ..ir.errors import fmt_shape
from ..ir.registry import COMMON_ATTRS
from ..ops.selected_rows import SelectedRows
from . import mode

_keys = itertools.count()  # tensors' tape keys and nodes' sequence numbers, one count
Tensor = None  # dygraph.tensor.Tensor, set when that module loads (it imports this one)


class _Spec:
    """An op type resolved once for eager calls: kernel, slots, default attrs and flags."""

    __slots__ = (
        "type", "opdef", "kernel", "ins", "outs", "attrs", "single_out", "random", "want", "ctx", "inplace",
        "inplace_ins", "simple", "in_slots", "out_slot",
    )  # fmt: skip

    def __init__(self, type: str) -> None:
        opdef = get_op_def(type)
        if opdef.kernel is None:
            raise FleetgraphError(f"{type}: has no kernel and cannot run eagerly")
        self.type, self.opdef, self.kernel = type, opdef, opdef.kernel
        self.ins = tuple((s.name, s.duplicable) for s in opdef.inputs)
        self.outs = tuple((s.name, s.duplicable) for s in opdef.outputs)
        self.in_slots = tuple(s.name for s in opdef.inputs)
        self.out_slot = opdef.outputs[0].name if opdef.outputs else None
        self.attrs = opdef.attrs
        self.single_out = len(opdef.outputs) == 1
        self.random, self.want, self.ctx = opdef.random, opdef.wants_outputs, opdef.needs_context
        self.inplace = set(opdef.inplace)
        self.inplace_ins = tuple(dict.fromkeys(opdef.inplace.values()))  # input slots the kernel writes into
        self.simple = (
            self.single_out
            and not (self.random or self.want or self.ctx or self.inplace)
            and not any(dup for _, dup in self.ins + self.outs)
        )


_SPECS: dict[str, _Spec] = {}


def spec(type: str) -> _Spec:
    found = _SPECS.get(type)
    if found is None:
        found = _SPECS[type] = _Spec(type)
    return found


class _Context:
    """What a kernel flagged needs_context sees eagerly: the process's communicator."""

    @property
    def comm(self):
        from ..executor.comm import process_comm

        return process_comm()

    def run_block(self, index: int) -> None:
        raise FleetgraphError("eager mode: ops with sub-blocks cannot run eagerly; build a static program")


class Node:
    """One recorded op: its type, the tape keys (engine.key) of its inputs and outputs, one tuple or
    list per slot in the op's slot order (spec.in_slots, spec.outs), its attrs, the values its grad
    ops may read, and the input tensors that need a gradient, by key."""

    __slots__ = ("seq", "type", "inputs", "outputs", "attrs", "values", "parents")

    def __init__(self, seq, type, inputs, outputs, attrs, values, parents) -> None:
        self.seq = seq  # after every key the node reads: backward runs nodes by descending seq
        self.type = type
        self.inputs = inputs
        self.outputs = outputs
        self.attrs = attrs
        self.values = values
        self.parents = parents


def merged_attrs(s: _Spec, attrs: dict | None) -> dict:
    """The op's default attrs with `attrs` over them (the defaults themselves when `attrs` only
    repeats them, as layer functions mostly do); an attr the op does not declare is an error."""
    if not attrs:
        return s.attrs
    base, same = s.attrs, True
    for k, v in attrs.items():
        if k in base:
            if same and base[k] != v:
                same = False
        elif k not in COMMON_ATTRS:
            from ..ir.errors import unknown

            raise unknown("attr", k, list(base), where=s.type)
    if same:
        return base
    return {**base, **{k: v for k, v in attrs.items() if k in base}}


def run_kernel(s: _Spec, args: list, attrs: dict, out_names: dict, rng_key: str, complete: bool = False):
    """The kernel's result for `args` (in input-slot order) with the op's attrs (`complete`: attrs
    holds exactly the op's attrs, as merged_attrs makes them)."""
    if complete:
        kwargs = dict(attrs)
    else:
        kwargs = {k: attrs[k] if k in attrs else default for k, default in s.attrs.items()}
    if s.random:
        fixed = attrs.get("fix_seed", True)
        kwargs["rng"] = rng.generator_for(attrs.get("seed", 0) if fixed else 0, rng_key)
    if s.want:
        kwargs["need"] = frozenset(slot for slot, _ in s.outs if any(n is not None for n in out_names.get(slot) or ()))
    if s.ctx:
        kwargs["ctx"] = _Context()
    try:
        return s.kernel(np, *args, **kwargs)
    except FleetgraphError:
        raise
    except Exception as e:
        shapes = ", ".join(
            f"{slot}={_describe(a)}" for (slot, _), a in zip(s.ins, args) if a is not None
        )  # fmt: skip
        raise KernelError(f"{s.type} (eager) with inputs {shapes or 'none'}: {type(e).__name__}: {e}") from e


def _describe(value) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_describe(v) for v in value) + "]"
    return f"{fmt_shape(np.shape(value))} {getattr(value, 'dtype', type(value).__name__)}"


def run_op(type: str, inputs: dict, outputs: dict, attrs: dict | None = None) -> dict:
    """Run op `type` on Tensors now: `inputs` and `outputs` map slots to lists of Tensors (outputs
    are filled in). The op goes on the tape when gradients are on and an input needs one."""
    s = _SPECS.get(type) or spec(type)
    attrs = merged_attrs(s, attrs) if attrs else s.attrs
    if s.inplace_ins:
        _unshare(s, inputs)
    args = []
    for slot, dup in s.ins:
        ts = inputs.get(slot)
        if not ts:
            args.append(None)
        elif dup:
            args.append([t.value for t in ts])
        else:
            args.append(ts[0].value)
    if s.random or s.want or s.ctx:
        first = next((ts for ts in outputs.values() if ts), None) if s.random else None
        result = run_kernel(s, args, attrs, outputs, first[0].name if first else "", complete=True)
    else:  # the common case, kept short: it is paid on every eager call
        try:
            result = s.kernel(np, *args, **attrs)
        except FleetgraphError:
            raise
        except Exception:
            result = run_kernel(s, args, attrs, outputs, "", complete=True)  # raises, naming the op
    if s.single_out:
        ts = outputs.get(s.outs[0][0])
        if ts:
            if s.outs[0][1]:
                for t, v in zip(ts, result):
                    t.value = _array(v)
            else:
                ts[0].value = result if result.__class__ is np.ndarray else _array(result)
    else:
        for (slot, dup), value in zip(s.outs, result):
            ts = outputs.get(slot)
            if not ts:
                continue
            if dup:
                for t, v in zip(ts, value):
                    t.value = _array(v)
            else:
                ts[0].value = _array(value)
    _record(s, inputs, outputs, attrs)
    return outputs


def _unshare(s: _Spec, inputs: dict) -> None:
    """An in-place kernel (an optimizer's update) writes into its input's array: a tensor that needs a
    gradient (a parameter) gets a fresh copy first, so the forward values a recorded node saved of it
    (a graph kept with retain_graph=True) stay those of the forward."""
    for slot in s.inplace_ins:
        for t in inputs.get(slot) or ():
            if t is not None and not t.stop_gradient and isinstance(t.value, np.ndarray):
                t.value = t.value.copy()


def _array(value):
    if type(value) is np.ndarray or isinstance(value, (np.ndarray, SelectedRows)):
        return value
    return np.asarray(value)


def key(t) -> int:
    """What the tape calls a tensor: unique per tensor object (names need not be: two models built
    in separate unique_name guards have parameters of one name)."""
    k = t._key
    if k is None:
        k = t._key = next(_keys)
    return k


def record1(s: _Spec, x, out, attrs: dict) -> None:
    """`_record` of a simple op of one input (which needs a gradient), with gradients on: the same
    Node as run_op's, built without loops."""
    kx = x._key or key(x)
    ko = out._key = next(_keys)
    out._node = Node(ko, s.type, ((kx,),), ((ko,),), attrs, {kx: x.value, ko: out.value}, {kx: x})
    out.stop_gradient = False


def record2(s: _Spec, x, y, out, attrs: dict) -> None:
    """record1 for a simple op of two inputs, one of which at least needs a gradient."""
    kx, ky = x._key or key(x), y._key or key(y)
    ko = out._key = next(_keys)
    parents = {}
    if not x.stop_gradient:
        parents[kx] = x
    if not y.stop_gradient:
        parents[ky] = y
    values = {kx: x.value, ky: y.value, ko: out.value}
    out._node = Node(ko, s.type, ((kx,), (ky,)), ((ko,),), attrs, values, parents)
    out.stop_gradient = False


def record_simple(s: _Spec, tensors, out, attrs: dict) -> None:
    """record1 for a simple op of any number of inputs."""
    values, in_names, parents = {}, [], {}
    for t in tensors:
        k = t._key or key(t)
        in_names.append((k,))
        values[k] = t.value
        if not t.stop_gradient:
            parents[k] = t
    k = key(out)
    values[k] = out.value
    out._node = Node(k, s.type, tuple(in_names), ((k,),), attrs, values, parents)
    out.stop_gradient = False


def _record(s: _Spec, inputs: dict, outputs: dict, attrs: dict) -> None:
    parents = None
    if s.opdef.grad is not None and mode._state.grad:
        for ts in inputs.values():
            for t in ts:
                if t is not None and not t.stop_gradient:
                    if parents is None:
                        parents = {}
                    parents[key(t)] = t
    if parents is None:
        for slot, ts in outputs.items():
            if slot not in s.inplace:
                for t in ts:
                    t.stop_gradient = True
        return
    values = {}
    in_names = []
    for slot in s.in_slots:
        names = []
        for t in inputs.get(slot) or ():
            name = key(t)
            names.append(name)
            values[name] = t.value
        in_names.append(names)
    out_names = []
    node = Node(next(_keys), s.type, in_names, out_names, attrs, values, parents)
    for slot, _ in s.outs:
        names = []
        inplace = slot in s.inplace
        for t in outputs.get(slot) or ():
            name = key(t)
            names.append(name)
            values[name] = t.value
            if not inplace:
                t.stop_gradient = False
                t._node = node
        out_names.append(names)
