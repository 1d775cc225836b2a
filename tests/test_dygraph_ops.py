"""The op registry harness run eagerly: every op case of tests/op_cases (without LoD, randomness or
communication) gives the static executor's outputs when its kernel runs eagerly, and every
differentiable case the static gradients when `backward()` walks the tape."""

from __future__ import annotations

import numpy as np
import pytest
from op_cases import CASES, NOT_EAGER, Case
from test_op_registry import _build, _rows

from fleetgraph.dygraph import engine, opfunc
from fleetgraph.dygraph.tensor import Tensor
from fleetgraph.ir import registered_ops
from fleetgraph.ops.lod_tensor import LoDTensor
from fleetgraph.transpiler import gradients


def _eager_ok(case: Case) -> bool:
    opdef = registered_ops()[case.op_type]
    values = [v for vs in case.inputs.values() for v in (vs if isinstance(vs, list) else [vs])]
    lod = any(isinstance(v, LoDTensor) for v in values)
    listed = case.op_type in NOT_EAGER  # its family says why it has no eager path
    return not (listed or lod or opdef.random or opdef.side_effect or opdef.needs_context or opdef.takes_lod)


CASES_EAGER = [c for cs in CASES.values() for c in cs if _eager_ok(c)]
GRAD_EAGER = [c for c in CASES_EAGER if registered_ops()[c.op_type].differentiable]


def _eager(case: Case, requires_grad: bool):
    ins = {}
    for slot, value in case.inputs.items():
        values = value if isinstance(value, list) else [value]
        arrays = [np.asarray(v) for v in values]
        ins[slot] = [
            Tensor(a, stop_gradient=not requires_grad or slot in case.no_grad or a.dtype.kind != "f") for a in arrays
        ]
    outs = {slot: [Tensor(name=f"{slot.lower()}_out_{i}") for i in range(n)] for slot, n in case.outputs.items()}
    engine.run_op(case.op_type, ins, outs, case.attrs)
    return ins, outs


@pytest.mark.parametrize("case", CASES_EAGER, ids=[c.id for c in CASES_EAGER])
def test_eager_forward_equals_the_static_run(case: Case):
    prog, _, _, feed, static_outs = _build(case)
    _, outs = _eager(case, requires_grad=False)
    for slot, names in static_outs.items():
        for name, t in zip(names, outs[slot]):
            want = _rows(prog, feed, [name])[0]
            np.testing.assert_allclose(t.numpy(), want, rtol=1e-12, atol=0, err_msg=f"{case.id} {slot}")


@pytest.mark.parametrize("case", GRAD_EAGER, ids=[c.id for c in GRAD_EAGER])
def test_eager_backward_equals_the_static_gradients(case: Case):
    prog, block, op, feed, static_outs = _build(case)
    loss_slots = case.loss_outputs or tuple(static_outs)
    rng = np.random.default_rng(1)
    names = [n for s in loss_slots for n in static_outs[s]]
    values = dict(zip(names, _rows(prog, feed, names)))
    weights = {n: rng.uniform(0.5, 1.5, size=values[n].shape) for n in names}
    # static: loss = sum_n sum(out_n * w_n), its gradients by append_backward's machinery
    terms = []
    for n in names:
        w = block.create_var(n + "_w", block.var(n).shape, "float64", is_data=True, stop_gradient=True)
        prod = block.create_var(n + "_prod", dtype="float64")
        block.append_op("elementwise_mul", {"X": [n], "Y": [w.name]}, {"Out": [prod.name]})
        total = block.create_var(n + "_sum", dtype="float64")
        block.append_op("reduce_sum", {"X": [prod.name]}, {"Out": [total.name]}, {"reduce_all": True})
        terms.append(total.name)
    loss = block.create_var("loss", (1,), "float64")
    block.append_op("sum", {"X": terms}, {"Out": [loss.name]})
    wrt = [
        (slot, i, n)
        for slot, ns in op.inputs.items()
        if slot not in case.no_grad
        for i, n in enumerate(ns)
        if np.asarray(feed[n]).dtype.kind == "f"
    ]
    grads = gradients([loss], [block.var(n) for _, _, n in wrt])
    want = _rows(prog, {**feed, **{n + "_w": w for n, w in weights.items()}}, [g.name for g in grads])
    # eager: the same loss from the same ops, then backward()
    ins, outs = _eager(case, requires_grad=True)
    totals = []
    by_name = {t.name: t for ts in outs.values() for t in ts}
    for n in names:
        prod, total = Tensor(), Tensor()
        engine.run_op("elementwise_mul", {"X": [by_name[n]], "Y": [Tensor(weights[n])]}, {"Out": [prod]})
        engine.run_op("reduce_sum", {"X": [prod]}, {"Out": [total]}, {"reduce_all": True})
        totals.append(total)
    eager_loss = Tensor()
    engine.run_op("sum", {"X": totals}, {"Out": [eager_loss]})
    eager_loss.backward()
    for (slot, i, name), expected in zip(wrt, want):
        got = ins[slot][i].grad
        assert got is not None, f"{case.id}: no gradient for input {slot}[{i}]"
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-10, atol=1e-12, err_msg=f"{case.id} d/d {name}")


def _one_per_slot(case: Case) -> bool:
    s = engine.spec(case.op_type)
    values = case.inputs.values()
    return s.simple and len(case.inputs) == len(s.ins) and not any(isinstance(v, list) for v in values)


SIMPLE_EAGER = [c for c in CASES_EAGER if _one_per_slot(c)]


@pytest.mark.parametrize("case", SIMPLE_EAGER, ids=[c.id for c in SIMPLE_EAGER])
def test_op_function_gives_run_ops_output_and_gradients(case: Case):
    """The fast path (opfunc: attrs resolved once, no slot dicts) runs the same kernel and records a
    node that backward reads as run_op's: equal outputs and equal gradients of every input."""
    differentiable = registered_ops()[case.op_type].differentiable
    slots = [slot for slot, _ in engine.spec(case.op_type).ins]

    def inputs():
        arrays = [np.asarray(case.inputs[slot]) for slot in slots]
        grad = [differentiable and slot not in case.no_grad and a.dtype.kind == "f" for slot, a in zip(slots, arrays)]
        return [Tensor(a.copy(), stop_gradient=not g) for a, g in zip(arrays, grad)]

    general_ins, fast_ins = inputs(), inputs()
    general, out_slot = Tensor(), engine.spec(case.op_type).outs[0][0]
    engine.run_op(case.op_type, {slot: [t] for slot, t in zip(slots, general_ins)}, {out_slot: [general]}, case.attrs)
    fast = opfunc.op_function(case.op_type, case.attrs)(*fast_ins)
    np.testing.assert_array_equal(fast.numpy(), general.numpy(), err_msg=case.id)
    assert fast.stop_gradient == general.stop_gradient
    if general.stop_gradient:
        return
    seed = np.random.default_rng(2).uniform(0.5, 1.5, size=np.shape(general.value)).astype(general.value.dtype)
    general.backward(seed)
    fast.backward(seed)
    for slot, g, f in zip(slots, general_ins, fast_ins):
        if g.stop_gradient:
            assert f.grad is None
        else:
            np.testing.assert_array_equal(f.grad.numpy(), g.grad.numpy(), err_msg=f"{case.id} d/d {slot}")
