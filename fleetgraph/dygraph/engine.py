"""Eager execution over the op registry: an op's registered kernel runs at once on Tensors' values,
and, when gradients are on and an input needs one, the op goes on the tape as a Node (its slots'
names, attrs and the values its grad ops may read); `tape.backward` walks the Nodes."""

from __future__ import annotations

import itertools

import numpy as np

from ..executor import trace
from ..ir import FleetgraphError, get_op_def
from ..ir.registry import COMMON_ATTRS
from ..ops._xp import copy, is_array
from ..ops.bound import BoundKernel, in_float32
from ..ops.selected_rows import SelectedRows
from . import mode

_keys = itertools.count()  # tensors' tape keys and nodes' sequence numbers, one count
Tensor = None  # dygraph.tensor.Tensor, set when that module loads (it imports this one)


class _Spec:
    """An op type resolved once for eager calls: slots, default attrs, flags, and its kernel bound
    to the default attrs (`bound`); `bind` makes one for other attrs or for one call's outputs."""

    __slots__ = (
        "type", "opdef", "ins", "outs", "attrs", "single_out", "random", "want", "ctx", "inplace",
        "inplace_ins", "simple", "in_slots", "out_slot", "bound", "records", "out_inplace",
    )  # fmt: skip

    def __init__(self, type: str) -> None:
        opdef = get_op_def(type)
        if opdef.kernel is None:
            raise FleetgraphError(f"{type}: has no kernel and cannot run eagerly")
        self.type, self.opdef = type, opdef
        self.ins = tuple((s.name, s.duplicable) for s in opdef.inputs)
        self.outs = tuple((s.name, s.duplicable) for s in opdef.outputs)
        self.in_slots = tuple(s.name for s in opdef.inputs)
        self.out_slot = opdef.outputs[0].name if opdef.outputs else None
        self.attrs = opdef.attrs
        self.single_out = len(opdef.outputs) == 1
        self.random, self.want, self.ctx = opdef.random, opdef.wants_outputs, opdef.needs_context
        self.inplace = set(opdef.inplace)
        self.inplace_ins = tuple(dict.fromkeys(opdef.inplace.values()))  # input slots the kernel writes into
        self.out_inplace = tuple(s.name in opdef.inplace for s in opdef.outputs)
        self.records = opdef.grad is not None  # an op without a gradient never goes on the tape
        self.simple = (
            self.single_out
            and not (self.random or self.want or self.ctx or self.inplace)
            and not any(dup for _, dup in self.ins + self.outs)
        )
        self.bound = self.bind(self.attrs)

    def bind(self, attrs: dict, outputs: dict | None = None, rng_key: str = "") -> BoundKernel:
        """The kernel bound to `attrs` (complete, as merged_attrs makes them); for an op that skips
        unread outputs, `outputs` (slot -> Tensors or names, None where unread) say which are read."""
        need = None
        if self.want and outputs is not None:
            need = frozenset(slot for slot, _ in self.outs if any(t is not None for t in outputs.get(slot) or ()))
        bound = BoundKernel(self.opdef, attrs, need=need, rng_key=rng_key, complete=True)
        if self.ctx:
            bound.set_context(_Context())
        return bound


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


def run_op(type: str, inputs: dict, outputs: dict, attrs: dict | None = None) -> dict:
    """Run op `type` on Tensors now: `inputs` and `outputs` map slots to lists of Tensors (outputs
    are filled in). The op goes on the tape when gradients are on and an input needs one. Inside an
    auto_cast region its inputs are cast first (recorded too), and a bfloat16 op computes as
    ops.bound.in_float32 says."""
    s = _SPECS.get(type) or spec(type)
    attrs = merged_attrs(s, attrs) if attrs else s.attrs
    low = False
    if mode.amp_region.policy is not None:  # an auto_cast region: inputs cast as its policy says (autocast.py)
        inputs, low = mode.amp_region.policy.cast_inputs(s, inputs)
    if s.inplace_ins:
        _unshare(s, inputs, mode.eager_place.xp)
    args = []
    for slot, dup in s.ins:
        ts = inputs.get(slot)
        if not ts:
            args.append(None)
        elif dup:
            args.append([t.value for t in ts])
        else:
            args.append(ts[0].value)
    if s.random or s.want or s.ctx:  # bound per call: the outputs read, the stream keyed by the first
        first = next((ts for ts in outputs.values() if ts), None) if s.random else None
        bound = s.bind(attrs, outputs, first[0].name if first else "")
        kwargs = bound.kwargs
    else:  # the kernel's keyword arguments are the attrs themselves
        bound, kwargs = s.bound, attrs
    xp = mode.eager_place.xp
    kernel = in_float32(bound.kernel, s.out_inplace) if low else bound.kernel
    try:
        if trace.ACTIVE is None:
            result = kernel(xp, *args, **kwargs)
        else:  # a profiler runs: the call is an event
            result = trace.timed(type, kernel, xp, *args, **kwargs)
    except FleetgraphError:
        raise
    except Exception as e:
        raise bound.failure(e, args, f"{type} (eager)") from e
    if s.single_out:
        ts = outputs.get(s.outs[0][0])
        if ts:
            if s.outs[0][1]:
                for t, v in zip(ts, result):
                    t.value = _array(v, xp)
            else:
                ts[0].value = result if result.__class__ is np.ndarray and xp is np else _array(result, xp)
    else:
        for (slot, dup), value in zip(s.outs, result):
            ts = outputs.get(slot)
            if not ts:
                continue
            if dup:
                for t, v in zip(ts, value):
                    t.value = _array(v, xp)
            else:
                ts[0].value = _array(value, xp)
    outs = [outputs.get(slot) or () for slot, _ in s.outs]
    if not (s.records and mode._state.grad and record(s, [inputs.get(slot) or () for slot in s.in_slots], outs, attrs)):
        for inplace, ts in zip(s.out_inplace, outs):  # nothing needs their gradient
            if not inplace:
                for t in ts:
                    t.stop_gradient = True
    return outputs


def _unshare(s: _Spec, inputs: dict, xp) -> None:
    """An in-place kernel (an optimizer's update) writes into its input's array: a tensor that needs a
    gradient (a parameter) gets a fresh copy first, so the forward values a recorded node saved of it
    (a graph kept with retain_graph=True) stay those of the forward."""
    for slot in s.inplace_ins:
        for t in inputs.get(slot) or ():
            if t is not None and not t.stop_gradient and is_array(xp, t.value):
                t.value = copy(xp, t.value)


def _array(value, xp):
    """A kernel's result as a Tensor holds it: an array of the module (a NumPy scalar or a Python
    number made one)."""
    if xp is np:  # the common case, kept to two checks: it is paid on every eager op
        return value if isinstance(value, (np.ndarray, SelectedRows)) else np.asarray(value)
    return value if isinstance(value, SelectedRows) or is_array(xp, value) else xp.asarray(value)


def key(t) -> int:
    """What the tape calls a tensor: unique per tensor object (names need not be: two models built
    in separate unique_name guards have parameters of one name)."""
    k = t._key
    if k is None:
        k = t._key = next(_keys)
    return k


def record(s: _Spec, inputs, outputs, attrs: dict, one_each: bool = False) -> bool:
    """The one tape recorder: put the op on the tape as a Node when an input needs a gradient, and
    say whether it did; the caller has checked that gradients are on and that the op has one
    (spec.records). `inputs` and `outputs` hold one sequence of Tensors per slot, in the op's slot
    order (spec.in_slots, spec.outs), or with `one_each` (what the eager op functions pass) the
    Tensors themselves, one per input slot, and the one output Tensor: paid on every recorded op,
    that form builds the same Node without a sequence per slot."""
    if one_each and len(inputs) == 2:  # most recorded ops (x * w): the same Node, without a loop
        x, y = inputs
        kx, ky = x._key, y._key
        if kx is None:
            kx = x._key = next(_keys)
        if ky is None:
            ky = y._key = next(_keys)
        if x.stop_gradient:
            if y.stop_gradient:
                return False
            parents = {ky: y}
        else:
            parents = {kx: x} if y.stop_gradient else {kx: x, ky: y}
        k = outputs._key = next(_keys)  # a fresh output: its key is the node's sequence number
        values = {kx: x.value, ky: y.value, k: outputs.value}
        outputs._node = Node(k, s.type, ((kx,), (ky,)), ((k,),), attrs, values, parents)
        outputs.stop_gradient = False
        return True
    values, in_keys, parents = {}, [], None
    if one_each:
        for t in inputs:
            k = t._key
            if k is None:
                k = t._key = next(_keys)
            in_keys.append((k,))
            values[k] = t.value
            if not t.stop_gradient:
                if parents is None:
                    parents = {k: t}
                else:
                    parents[k] = t
        if parents is None:
            return False
        seq = next(_keys)  # after every key the node reads
        k = outputs._key
        if k is None:
            k = outputs._key = seq
        values[k] = outputs.value
        outputs._node = Node(seq, s.type, in_keys, ((k,),), attrs, values, parents)
        outputs.stop_gradient = False
        return True
    for ts in inputs:
        keys = []
        for t in ts:
            k = t._key
            if k is None:
                k = t._key = next(_keys)
            keys.append(k)
            values[k] = t.value
            if not t.stop_gradient:
                if parents is None:
                    parents = {k: t}
                else:
                    parents[k] = t
        in_keys.append(keys)
    if parents is None:
        return False
    out_keys = []
    node = Node(next(_keys), s.type, in_keys, out_keys, attrs, values, parents)
    for inplace, ts in zip(s.out_inplace, outputs):
        keys = []
        for t in ts:
            k = t._key
            if k is None:
                k = t._key = next(_keys)
            keys.append(k)
            values[k] = t.value
            if not inplace:
                t.stop_gradient = False
                t._node = node
        out_keys.append(keys)
    return True
