"""Eager op functions: an op type's kernel, slots and attrs resolved once into a plain function of
Tensors, the fast path that Tensor operators and functional calls take (engine.run_op is the general
path; both run the op's registered kernel and record the same tape Node)."""

from __future__ import annotations

import numpy as np

from ..executor import trace
from ..ir import FleetgraphError
from . import engine, mode

_FUNCS: dict[str, object] = {}  # op type -> its function with the op's default attrs (False: not simple)


def op_function(type: str, attrs: dict | None = None, static=None):
    """`f(*tensors, attrs=...)`: op `type` run on one Tensor per input slot (in the op's slot order),
    returning its one output Tensor. `attrs` are merged over the op's defaults (and checked) here, once,
    into the op's bound kernel, whose kernel and keyword arguments the function calls; a call may pass
    `attrs=` a complete attr dict of its own (every attr the op declares) instead.
    Only simple ops have one: one output, no duplicable slot, no randomness, no in-place write.
    Inside an auto_cast region it takes the general path (engine.run_op), which casts the inputs.

    `static(*inputs, name)`, for ops of one or two inputs: what `f(*inputs, name)` does instead when
    an input holds no value (a static Variable): the dispatch's path, so one function serves both
    modes for the price of the attribute read the kernel call makes anyway."""
    s = engine.spec(type)
    if not s.simple:
        raise FleetgraphError(f"{type}: has no eager op function; expected a one-output op without randomness")
    fixed = engine.merged_attrs(s, attrs) if attrs else s.attrs
    bound = s.bound if fixed is s.attrs else s.bind(fixed)
    kernel, fixed, where, records = bound.kernel, bound.kwargs, f"{type} (eager)", s.records
    state, device, new, ndarray = mode._state, mode.eager_place, object.__new__, np.ndarray
    amp = mode.amp_region
    tensor, wrap, record = engine.Tensor, engine._array, engine.record

    if len(s.ins) == 1:

        def run1(x, name=None, attrs=fixed):
            try:
                value = x.value
            except AttributeError:
                if static is None:
                    raise
                return static(x, name)
            if amp.policy is not None:
                return amp_call(s, (x,), attrs)
            xp = device.xp
            try:
                if trace.ACTIVE is None:
                    result = kernel(xp, value, **attrs)
                else:  # a profiler runs: the call is an event
                    result = trace.timed(type, kernel, xp, value, **attrs)
            except FleetgraphError:
                raise
            except Exception as e:
                raise bound.failure(e, [value], where) from e
            out = new(tensor)
            out.value = result if result.__class__ is ndarray and xp is np else wrap(result, xp)
            if x.stop_gradient or not records or not state.grad:
                return out
            record(s, (x,), out, attrs, True)
            return out

        return run1
    if len(s.ins) == 2:

        def run2(x, y, name=None, attrs=fixed):
            try:
                a, b = x.value, y.value
            except AttributeError:
                if static is None:
                    raise
                return static(x, y, name)
            if amp.policy is not None:
                return amp_call(s, (x, y), attrs)
            xp = device.xp
            try:
                if trace.ACTIVE is None:
                    result = kernel(xp, a, b, **attrs)
                else:  # a profiler runs: the call is an event
                    result = trace.timed(type, kernel, xp, a, b, **attrs)
            except FleetgraphError:
                raise
            except Exception as e:
                raise bound.failure(e, [a, b], where) from e
            out = new(tensor)
            out.value = result if result.__class__ is ndarray and xp is np else wrap(result, xp)
            if (x.stop_gradient and y.stop_gradient) or not records or not state.grad:
                return out
            record(s, (x, y), out, attrs, True)
            return out

        return run2

    def run(*tensors, attrs=fixed):
        if len(tensors) != len(s.ins):
            raise FleetgraphError(f"{type}: expected {len(s.ins)} input tensors, got {len(tensors)}")
        if amp.policy is not None:
            return amp_call(s, tensors, attrs)
        values = [t.value for t in tensors]
        xp = device.xp
        try:
            if trace.ACTIVE is None:
                result = kernel(xp, *values, **attrs)
            else:  # a profiler runs: the call is an event
                result = trace.timed(type, kernel, xp, *values, **attrs)
        except FleetgraphError:
            raise
        except Exception as e:
            raise bound.failure(e, values, where) from e
        out = new(tensor)
        out.value = result if result.__class__ is ndarray and xp is np else wrap(result, xp)
        if records and state.grad and not all(t.stop_gradient for t in tensors):
            record(s, tensors, out, attrs, True)
        return out

    return run


def amp_call(s, tensors, attrs: dict):
    """An op function's call inside an auto_cast region: the general path, which casts the inputs
    as the region's policy says (engine.run_op)."""
    out = engine.Tensor()
    engine.run_op(s.type, {slot: [t] for (slot, _), t in zip(s.ins, tensors)}, {s.out_slot: [out]}, attrs)
    return out


def default_function(type: str):
    """The op function of `type` with its default attrs, made once; None when the op is not simple."""
    fn = _FUNCS.get(type)
    if fn is None:
        fn = _FUNCS[type] = op_function(type) if engine.spec(type).simple else False
    return fn or None


def try_call(type: str, inputs: dict, attrs: dict | None):
    """bind's first try: the output Tensor when `inputs` (slot -> [one value]) are Tensors filling
    exactly the op's slots and the op is simple; None otherwise (static inputs, lists, other shapes)."""
    first = next(iter(inputs.values()))
    if first.__class__ is not list or not first or not isinstance(first[0], engine.Tensor):
        return None  # a static op (which may have no kernel at all): nothing to try
    fn = _FUNCS.get(type)
    if fn is None:
        fn = default_function(type) or False
    if fn is False:
        return None
    s = engine._SPECS[type]
    if len(inputs) != len(s.ins):
        return None
    tensors = []
    for slot, _ in s.ins:
        vs = inputs.get(slot)
        if vs.__class__ is not list or len(vs) != 1 or not isinstance(vs[0], engine.Tensor):
            return None
        tensors.append(vs[0])
    if attrs:
        return fn(*tensors, attrs=engine.merged_attrs(s, attrs))
    return fn(*tensors)
