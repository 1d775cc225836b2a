"""Walks the op registry: every op runs against a NumPy oracle, and every differentiable op's gradient
matches central finite differences in float64. An op without a case fails here. An input given as a
LoDTensor is fed to a variable with as many LoD levels; outputs are compared on their rows, and on
their LoD where the reference gives one. A tensor array input is written element by element, an
output read back concatenated (see _build)."""

from __future__ import annotations

import numpy as np
import pytest
from op_cases import CASES, Case
from op_cases import COVERED_ELSEWHERE as FAMILY_COVERED

import fleetgraph.ops  # noqa: F401  (registers the ops)
from fleetgraph.executor import Executor, Scope
from fleetgraph.ir import Program, registered_ops
from fleetgraph.ir.program import VarType
from fleetgraph.ops.lod_tensor import LoDTensor
from fleetgraph.transpiler import gradients

# Ops checked elsewhere, with the test that covers them.
COVERED_ELSEWHERE = {
    "uniform_random": "test_ops_misc.py::test_random_ops_are_seeded_and_in_range",
    "gaussian_random": "test_ops_misc.py::test_random_ops_are_seeded_and_in_range",
    "truncated_gaussian_random": "test_ops_misc.py::test_random_ops_are_seeded_and_in_range",
    "split_selected_rows": "test_ps_ops.py::test_split_selected_rows_renumbers_rows_per_block",
    "sgd": "test_optimizers.py (one step against a NumPy update)",
    "momentum": "test_optimizers.py (one step against a NumPy update)",
    "adam": "test_optimizers.py (one step against a NumPy update)",
    "adagrad": "test_optimizers.py (one step against a NumPy update)",
    "rmsprop": "test_optimizers.py::test_three_steps_match_numpy",
    "adamax": "test_optimizers.py::test_three_steps_match_numpy",
    "adadelta": "test_optimizers.py::test_three_steps_match_numpy",
    "decayed_adagrad": "test_optimizers.py::test_three_steps_match_numpy",
    "ftrl": "test_optimizers.py::test_three_steps_match_numpy",
    "lamb": "test_optimizers.py::test_three_steps_match_numpy",
    "average_accumulates": "test_optimizers.py::test_model_average_applies_the_window_average_as_paddles_kernel*",
    "fake_init": "test_sparse_table.py::test_fake_init_gives_a_shape_without_memory",
    "lookup_sparse_table_init": "test_sparse_table.py::test_a_lazy_table_grows_rows_equal_to_the_dense_init",
    **FAMILY_COVERED,
}

ALL_CASES = [c for cases in CASES.values() for c in cases]


def _forward_ops():
    return {
        t: d
        for t, d in registered_ops().items()
        if not t.endswith("_grad") and d.kernel is not None and not d.side_effect
    }


def test_every_forward_op_has_a_case():
    missing = sorted(t for t in _forward_ops() if t not in CASES and t not in COVERED_ELSEWHERE)
    assert not missing, f"ops without a case in tests/op_cases: {missing}"


def test_every_differentiable_op_has_a_gradient_case():
    missing = sorted(
        t for t, d in registered_ops().items() if d.differentiable and t not in CASES and t not in FAMILY_COVERED
    )
    assert not missing, f"differentiable ops without a gradient case: {missing}"


def test_every_grad_op_is_registered_with_a_kernel():
    ops = registered_ops()
    for t, d in ops.items():
        if d.differentiable and hasattr(d.grad, "inputs"):
            assert t + "_grad" in ops and ops[t + "_grad"].kernel is not None, t


def _input_names(case: Case) -> dict[str, list[str]]:
    """The fed variables of each input slot (an array's elements, a rank table's ranked tensor)."""
    return {
        slot: [f"{slot.lower()}_{i}" for i in range(len(value) if isinstance(value, list) else 1)]
        for slot, value in case.inputs.items()
    }


def _is_array(case: Case, slot: str) -> bool:
    """A list in a slot that takes one variable is a tensor array, not a list of variables."""
    return isinstance(case.inputs[slot], list) and not registered_ops()[case.op_type].input_slot(slot).duplicable


def _index_var(block, k: int) -> str:
    """A one-element int64 variable holding `k`: an array subscript."""
    name = f"index_{k}"
    if not block.has_var(name):
        block.create_var(name, (1,), "int64", stop_gradient=True)
        block.append_op("fill_constant", {}, {"Out": [name]}, {"shape": [1], "dtype": "int64", "value": float(k)})
    return name


def _written_array(block, slot: str, elements: list[str]) -> str:
    """A tensor array holding the fed `elements`, written one by one as a program builds it."""
    name = f"{slot.lower()}_array"
    block.create_var(name, dtype="float64", type=VarType.LOD_TENSOR_ARRAY)
    for k, element in enumerate(elements):
        block.append_op("write_to_array", {"X": [element], "I": [_index_var(block, k)]}, {"Out": [name]})
    return name


def _read_back(block, array: str) -> str:
    """The output `array`'s elements concatenated along rows (tensor_array_to_tensor): one variable
    that fetches as a tensor, and one op whose gradient writes the whole array's gradient."""
    out = block.create_var(f"{array}_rows", dtype="float64").name
    index = block.create_var(f"{array}_sizes", dtype="int32", stop_gradient=True).name
    block.append_op("tensor_array_to_tensor", {"X": [array]}, {"Out": [out], "OutIndex": [index]}, {"axis": 0})
    return out


def _expected(case: Case, op) -> dict:
    """The reference's outputs; an array output's elements concatenated along rows, as read back."""
    want = case.reference(**case.inputs, **{k: op.attrs[k] for k in registered_ops()[case.op_type].attrs})
    for slot, value in want.items():
        if op.block.var(op.output(slot)[0]).type == VarType.LOD_TENSOR_ARRAY:
            want[slot] = np.concatenate([np.asarray(e) for e in value])
    return want


def _build(case: Case):
    """A program holding the op under test, its inputs as data variables (with LoD where given):
    an array input is written element by element, a RankTable input is lod_rank_table of its
    tensor, and an array output is read back concatenated."""
    prog = Program()
    block = prog.global_block()
    feed, ins = {}, {}
    for slot, names in _input_names(case).items():
        value = case.inputs[slot]
        for name, v in zip(names, value if isinstance(value, list) else [value]):
            rows = np.asarray(v)
            block.create_var(
                name,
                rows.shape,
                rows.dtype.name,
                lod_level=len(v.levels) if isinstance(v, LoDTensor) else 0,
                is_data=True,
                stop_gradient=slot in case.no_grad or rows.dtype.kind != "f",
            )
            feed[name] = v if isinstance(v, LoDTensor) else rows
        if _is_array(case, slot):
            names = [_written_array(block, slot, names)]
        elif slot == "RankTable":
            table = block.create_var("rank_table", type=VarType.LOD_RANK_TABLE).name
            block.append_op("lod_rank_table", {"X": names}, {"Out": [table]}, {"level": 0})
            names = [table]
        ins[slot] = names
    outs = {
        slot: [block.create_var(f"{slot.lower()}_out_{i}", dtype="float64").name for i in range(n)]
        for slot, n in case.outputs.items()
    }
    op = block.append_op(case.op_type, ins, outs, case.attrs)
    for slot, names in outs.items():
        if block.var(names[0]).type == VarType.LOD_TENSOR_ARRAY:
            outs[slot] = [_read_back(block, names[0])]
    return prog, block, op, feed, outs


def _run(prog, feed, fetch) -> list[LoDTensor]:
    """The fetched values as LoDTensors: rows in `.data`, LoD (if any) in `.levels`."""
    return Executor().run(prog, feed=feed, fetch_list=fetch, scope=Scope(), return_numpy=False)


def _rows(prog, feed, fetch) -> list[np.ndarray]:
    return [v.data for v in _run(prog, feed, fetch)]


def _with_rows(value, rows):
    """A fed value with other rows: a LoDTensor keeps its LoD."""
    return value.with_data(rows) if isinstance(value, LoDTensor) else rows


@pytest.mark.parametrize("case", ALL_CASES, ids=[c.id for c in ALL_CASES])
def test_forward_matches_numpy(case: Case):
    prog, _, op, feed, outs = _build(case)
    if case.reference is None:
        pytest.fail(f"{case.id}: a case needs a NumPy reference")
    for slot, expected in _expected(case, op).items():
        names = outs[slot]
        got = _run(prog, feed, names)
        expected = expected if isinstance(expected, list) else [expected]
        for g, e in zip(got, expected):
            if isinstance(e, LoDTensor):
                assert g.lod() == e.lod(), f"{case.id} {slot}: LoD {g.lod()}, expected {e.lod()}"
            np.testing.assert_allclose(
                g.data, np.asarray(e), rtol=case.rtol, atol=case.atol, err_msg=f"{case.id} {slot}"
            )


GRAD_CASES = [c for c in ALL_CASES if registered_ops()[c.op_type].differentiable]


@pytest.mark.parametrize("case", GRAD_CASES, ids=[c.id for c in GRAD_CASES])
def test_gradient_matches_central_differences(case: Case):
    prog, block, op, feed, outs = _build(case)
    loss_slots = case.loss_outputs or tuple(outs)
    loss_vars = [n for s in loss_slots for n in outs[s]]
    rng = np.random.default_rng(1)
    values = dict(zip(loss_vars, _rows(prog, feed, loss_vars)))
    weights = {}
    terms = []
    for n in loss_vars:
        w = block.create_var(n + "_w", block.var(n).shape, "float64", is_data=True, stop_gradient=True)
        weights[w.name] = rng.uniform(0.5, 1.5, size=values[n].shape)
        prod = block.create_var(n + "_prod", dtype="float64")
        block.append_op("elementwise_mul", {"X": [n], "Y": [w.name]}, {"Out": [prod.name]})
        total = block.create_var(n + "_sum", dtype="float64")
        block.append_op("reduce_sum", {"X": [prod.name]}, {"Out": [total.name]}, {"reduce_all": True})
        terms.append(total.name)
    loss = block.create_var("loss", (1,), "float64")
    block.append_op("sum", {"X": terms}, {"Out": [loss.name]})
    feed = {**feed, **weights}
    wrt = [
        n
        for slot, names in _input_names(case).items()
        if slot not in case.no_grad
        for n in names
        if np.asarray(feed[n]).dtype.kind == "f"
    ]
    grads = gradients([loss], [block.var(n) for n in wrt])
    analytic = _rows(prog, feed, [g.name for g in grads])

    def loss_at(f):
        return float(_rows(prog, f, [loss.name])[0][0])

    eps = 1e-6
    for name, got in zip(wrt, analytic):
        x = np.array(feed[name], dtype=np.float64)
        numeric = np.zeros_like(x)
        for idx in np.ndindex(x.shape):
            plus, minus = x.copy(), x.copy()
            plus[idx] += eps
            minus[idx] -= eps
            plus, minus = _with_rows(feed[name], plus), _with_rows(feed[name], minus)
            numeric[idx] = (loss_at({**feed, name: plus}) - loss_at({**feed, name: minus})) / (2 * eps)
        np.testing.assert_allclose(got, numeric, rtol=1e-5, atol=1e-6, err_msg=f"{case.id}: d loss / d {name}")
