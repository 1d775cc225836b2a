"""Every registered op, property by property: it has a kernel, a gradient, an eager path and an ONNX
export rule, or it is listed below with the reason it has none; a listed name that is no registered
op fails, so the lists cannot go stale."""

from __future__ import annotations

import op_cases
import pytest

import fleetgraph.ops  # noqa: F401  (registers every op family)
from fleetgraph.dygraph import engine
from fleetgraph.ir import registered_ops
from fleetgraph.onnx.emitter import EXPORTERS
from fleetgraph.onnx.export import export  # noqa: F401  (its import fills EXPORTERS)

OPS = sorted(registered_ops())
OPTIMIZERS = ("sgd", "momentum", "adam", "adagrad", "rmsprop", "adamax", "adadelta", "decayed_adagrad", "ftrl", "lamb")
COLLECTIVES = ("c_allreduce_sum", "c_broadcast", "c_sync_calc_stream", "c_sync_comm_stream", "c_comm_init")
PSERVER_TRAFFIC = (
    "send", "recv", "send_barrier", "fetch_barrier", "listen_and_serv", "split_byref", "split_selected_rows",
)  # fmt: skip
PSERVER_TABLES = ("distributed_lookup_table", "fake_init", "lookup_sparse_table_init")
READERS = ("create_py_reader", "create_double_buffer_reader", "read")
RANDOM_INITS = ("uniform_random", "gaussian_random", "truncated_gaussian_random")
GRADIENT_PLUMBING = ("merge_selected_rows", "get_tensor_from_selected_rows", "coalesce_tensor")

# The executor and the eager engine both refuse an op without a kernel; every op has one today.
NO_KERNEL: dict[str, str] = {}

# Forward ops without a grad maker: backward (transpiler/backward.py) calls the maker of each op
# on the path from the loss to the parameters, and these are never on that path.
NOT_DIFFERENTIABLE: dict[str, str] = {
    **dict.fromkeys(
        ("less_than", "less_equal", "greater_than", "greater_equal", "equal", "not_equal"),
        "a comparison: its boolean output has no gradient",
    ),
    "increment": "a step counter (integer state)",
    "sequence_mask": "a 0/1 mask of integer lengths: piecewise constant, and Paddle registers no grad for it",
    "sequence_enumerate": "windows of integer ids, and Paddle registers no grad for it",
    "fill_zeros_like": "reads only its input's shape: the output is zeros whatever the values",
    **dict.fromkeys(("accuracy", "auc"), "a metric over labels and ranks: piecewise constant"),
    "clip_by_norm": "gradient clipping (clip.py): it runs on gradients, after backward",
    **dict.fromkeys(GRADIENT_PLUMBING, "packs or merges gradients after backward, for clipping or all-reduce"),
    **dict.fromkeys(OPTIMIZERS, "an optimizer update: it runs after backward, on gradients"),
    "average_accumulates": "ModelAverage's window sums of the parameters, after the optimizer",
    **dict.fromkeys(
        COLLECTIVES[1:], "communication: the transpilers put it in startup or on gradients after backward"
    ),  # c_allreduce_sum differentiates: paddle.distributed.split all-reduces activations
    **dict.fromkeys(PSERVER_TRAFFIC, "parameter-server traffic: the distribute transpiler adds it after backward"),
    "distributed_lookup_table": "a prefetch from the pservers; its table's gradient is sent as sparse rows",
    **dict.fromkeys(("fake_init", "lookup_sparse_table_init"), "a pserver-side table initialiser"),
    **dict.fromkeys(READERS, "a reader: it hands over data"),
    **dict.fromkeys(
        ("fill_constant", "assign_value", "fill_constant_batch_size_like", *RANDOM_INITS),
        "makes a constant, an initial value or a random draw: no differentiable input",
    ),
}

# Ops the eager engine (dygraph/engine.py) cannot run although they have a kernel. Communication
# runs eagerly: the engine hands needs_context kernels the process's communicator.
NOT_EAGER: dict[str, str] = {
    "listen_and_serv": "serves the pserver's optimize sub-blocks, and eager mode has no blocks to run",
    **dict.fromkeys(READERS, "a reader: its input is a DataLoader's queue (or a reader) in the scope, not a Tensor"),
}

# Ops export (onnx/export.py) refuses: it prunes to the inference program, then needs a rule per op.
_TRAINING = "training only: export prunes the program to inference (ir/prune.py)"
_ONE_PROCESS = "an ONNX model runs in one process"
NOT_EXPORTED: dict[str, str] = {
    **dict.fromkeys(
        ("sequence_concat", "sequence_expand", "sequence_reshape"),
        "changes its sequences' LoD; export carries a LoD only unchanged from input to output (_carry_lod)",
    ),
    **dict.fromkeys(
        ("sequence_softmax", "sequence_reverse"),
        "no ONNX exporter yet: it works per sequence, and the LoD's offsets are not a graph input of the model",
    ),
    "sequence_mask": "no ONNX exporter yet (it would be Range, Less and Cast on the lengths)",
    **dict.fromkeys(
        ("sequence_pad", "sequence_unpad"),
        "no ONNX exporter yet: it moves rows between a LoD and a padded batch, and the LoD's offsets are "
        "not a graph input of the model",
    ),
    "sequence_expand_as": "no ONNX exporter yet: its repeats come from Y's LoD offsets, which are not a graph input",
    "sequence_enumerate": "no ONNX exporter yet: its windows stop at the LoD's offsets, which are not a graph input",
    "auc": "a metric with host-side state (histograms across batches)",
    "clip_by_norm": "gradient clipping: " + _TRAINING,
    **dict.fromkeys(GRADIENT_PLUMBING, "gradient plumbing: " + _TRAINING),
    **dict.fromkeys(OPTIMIZERS, "an optimizer update: " + _TRAINING),
    "average_accumulates": "ModelAverage's window sums: " + _TRAINING,
    **dict.fromkeys(RANDOM_INITS, "a random initialiser: parameters are exported as initializers"),
    **dict.fromkeys(COLLECTIVES, "communication: " + _ONE_PROCESS),
    **dict.fromkeys(PSERVER_TRAFFIC, "parameter-server traffic: " + _ONE_PROCESS),
    **dict.fromkeys(PSERVER_TABLES, "a table on the pservers: " + _ONE_PROCESS + ", its tables as initializers"),
    **dict.fromkeys(READERS, "a reader: an ONNX model takes its feeds as inputs"),
}

# Each op family's own reasons, declared beside its cases in tests/op_cases; a name in both places
# would make one reason silently win, so it fails instead.
for _mine, _family in (
    (NOT_DIFFERENTIABLE, op_cases.NOT_DIFFERENTIABLE),
    (NOT_EAGER, op_cases.NOT_EAGER),
    (NOT_EXPORTED, op_cases.NOT_EXPORTED),
):
    assert not set(_mine) & set(_family), f"listed twice: {sorted(set(_mine) & set(_family))}"
    _mine.update(_family)


def _is_grad_op(op_type: str) -> bool:
    return op_type.endswith("_grad") and op_type[: -len("_grad")] in registered_ops()


def _listed_reason(listing: dict[str, str], op_type: str, what: str) -> str:
    reason = listing.get(op_type)
    if reason is None:
        pytest.fail(f"{op_type}: has no {what}; expected one, or an entry with the reason in this file's list")
    assert reason.strip(), f"{op_type}: listed without {what} but with an empty reason"
    return reason


@pytest.mark.parametrize("op_type", OPS)
def test_op_has_a_kernel_or_a_reason(op_type: str):
    if registered_ops()[op_type].kernel is None:
        _listed_reason(NO_KERNEL, op_type, "kernel")
    else:
        assert op_type not in NO_KERNEL, f"{op_type}: listed in NO_KERNEL but has a kernel"


@pytest.mark.parametrize("op_type", OPS)
def test_op_has_a_gradient_or_a_reason(op_type: str):
    opdef = registered_ops()[op_type]
    if _is_grad_op(op_type):
        return  # it is the gradient: test_op_registry checks each maker's grad op is registered
    if opdef.differentiable:
        assert op_type not in NOT_DIFFERENTIABLE, f"{op_type}: listed in NOT_DIFFERENTIABLE but has a grad maker"
    else:
        _listed_reason(NOT_DIFFERENTIABLE, op_type, "grad maker")


@pytest.mark.parametrize("op_type", OPS)
def test_op_runs_eagerly_or_has_a_reason(op_type: str):
    if op_type in NOT_EAGER:
        _listed_reason(NOT_EAGER, op_type, "eager path")
        return
    if op_type in NO_KERNEL:
        return  # the engine refuses it for the reason NO_KERNEL gives
    spec = engine.spec(op_type)  # what engine.run_op resolves an op type to
    assert spec.bound.kernel is registered_ops()[op_type].kernel


@pytest.mark.parametrize("op_type", OPS)
def test_op_exports_to_onnx_or_has_a_reason(op_type: str):
    if _is_grad_op(op_type):
        return  # export prunes to the inference program (ir/prune.py): no gradient op reaches a rule
    if op_type in EXPORTERS:
        assert op_type not in NOT_EXPORTED, f"{op_type}: listed in NOT_EXPORTED but has an ONNX rule"
    else:
        _listed_reason(NOT_EXPORTED, op_type, "ONNX export rule")


@pytest.mark.parametrize(
    "listing", [NO_KERNEL, NOT_DIFFERENTIABLE, NOT_EAGER, NOT_EXPORTED], ids=["kernel", "grad", "eager", "onnx"]
)
def test_every_listed_op_is_registered(listing: dict[str, str]):
    stale = sorted(set(listing) - set(registered_ops()))
    assert not stale, f"listed ops that are not registered: {stale}"
