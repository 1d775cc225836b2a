"""insert_allreduce and collective_startup: where the communication ops go, what they carry, and
that the passes are pure, deterministic and checked."""

from __future__ import annotations

import pytest
from models import fit_a_line_2x, mlp

import fleetgraph as paddle
from fleetgraph.ir import (
    FleetgraphError,
    OpRole,
    Program,
    op_summary,
    program_guard,
    program_to_json,
    unique_name,
    verify,
)
from fleetgraph.transpiler.collective import collective_startup, insert_allreduce

ENDPOINTS = ["127.0.0.1:6170", "127.0.0.1:6171"]


def _mlp():
    return mlp(lambda: paddle.optimizer.SGD(learning_rate=0.1), hidden=(8, 4))


def _models():
    return {"fit_a_line": fit_a_line_2x()[:2], "mlp": _mlp()[:2]}


def _pairs(program: Program) -> list[tuple[str, str]]:
    """(param, grad) pairs as backward tagged them on the gradients' last producers."""
    return [
        (op.attrs["op_role_var"][0], op.attrs["op_role_var"][1])
        for op in program.global_block().ops
        if op.attrs["op_role"] == OpRole.Backward and op.attrs["op_role_var"]
    ]


def _types(program: Program) -> list[str]:
    return [op.type for op in program.global_block().ops]


def test_fit_a_line_reduces_each_grad_after_its_producer_and_syncs_before_sgd():
    main, _ = _models()["fit_a_line"]
    assert op_summary(insert_allreduce(main, nranks=2)) == (
        "block0: mul elementwise_add elementwise_sub square reduce_mean fill_constant reduce_mean_grad square_grad "
        "elementwise_sub_grad elementwise_add_grad c_sync_calc_stream c_allreduce_sum "
        "mul_grad c_sync_calc_stream c_allreduce_sum c_sync_comm_stream scale scale sgd sgd"
    )


@pytest.mark.parametrize("model", ["fit_a_line", "mlp"])
def test_each_grad_is_all_reduced_right_after_its_last_producer_and_scaled_after_the_comm_sync(model):
    main, _ = _models()[model]
    result = insert_allreduce(main, nranks=4, ring_id=1)
    ops = result.global_block().ops
    comm_sync = _types(result).index("c_sync_comm_stream")
    scales = ops[comm_sync + 1 : comm_sync + 1 + len(_pairs(main))]
    for (param, grad), scale in zip(_pairs(main), scales, strict=True):
        producer = max(i for i, op in enumerate(ops) if grad in op.output_arg_names and not _inserted(op))
        sync, reduce = ops[producer + 1 : producer + 3]
        assert [sync.type, reduce.type, scale.type] == ["c_sync_calc_stream", "c_allreduce_sum", "scale"]
        for op in (sync, reduce, scale):
            assert op.input("X") == [grad] and op.output("Out") == [grad]
            assert op.attrs["op_role"] == OpRole.Backward and op.attrs["op_role_var"] == [param, grad]
        assert reduce.attrs["ring_id"] == 1 and reduce.attrs["use_calc_stream"] is False  # asynchronous
        assert scale.attrs["scale"] == 0.25 and scale.attrs["bias"] == 0.0
    assert sum(op.type == "c_allreduce_sum" for op in ops) == len(_pairs(main))


def _inserted(op) -> bool:
    return op.type.startswith("c_") or op.type == "scale"


def test_a_gradient_read_before_the_comm_sync_is_scaled_right_before_that_read():
    main, _ = _models()["fit_a_line"]
    block = main.global_block()
    first_optimize = next(i for i, op in enumerate(block.ops) if op.attrs["op_role"] & OpRole.Optimize)
    block.create_var("peek", [1], "float32")
    block._insert_op(first_optimize, "scale", {"X": ["fc_0.b_0@GRAD"]}, {"Out": ["peek"]}, {"op_role": 1})
    ops = insert_allreduce(main, nranks=2).global_block().ops
    peek = next(i for i, op in enumerate(ops) if op.output_arg_names == ["peek"])
    assert (ops[peek - 1].type, ops[peek - 1].input("X"), ops[peek - 1].attrs["scale"]) == (
        "scale",
        ["fc_0.b_0@GRAD"],
        0.5,
    )
    assert ops[peek + 1].type == "c_sync_comm_stream"
    after_sync = [(op.type, op.input("X")) for op in ops[peek + 2 : peek + 3]]
    assert after_sync == [("scale", ["fc_0.w_0@GRAD"])]  # the other gradient: after the sync, as usual


@pytest.mark.parametrize("model", ["fit_a_line", "mlp"])
def test_optimize_ops_stay_and_come_after_one_comm_sync_over_all_grads(model):
    main, _ = _models()[model]
    result = insert_allreduce(main, nranks=2)
    ops = result.global_block().ops
    before = [op.to_string() for op in main.global_block().ops if op.attrs["op_role"] & OpRole.Optimize]
    after = [op.to_string() for op in ops if op.attrs["op_role"] & OpRole.Optimize]
    assert after == before
    first_sgd = _types(result).index("sgd")
    sync = ops[first_sgd - 1 - len(_pairs(main))]  # then each gradient's scale
    assert sync.type == "c_sync_comm_stream" and _types(result).count("c_sync_comm_stream") == 1
    assert sync.input("X") == sync.output("Out") == [g for _, g in _pairs(main)]
    assert sync.attrs["op_role"] == OpRole.Backward
    last_reduce = max(i for i, t in enumerate(_types(result)) if t == "c_allreduce_sum")
    assert last_reduce < first_sgd


def test_one_rank_needs_no_communication():
    main, startup = _models()["mlp"]
    assert program_to_json(insert_allreduce(main, nranks=1)) == program_to_json(main)
    one = collective_startup(startup, nranks=1, rank=0, endpoints=ENDPOINTS[:1])
    assert program_to_json(one) == program_to_json(startup)


def test_passes_leave_their_input_alone_and_are_deterministic():
    main, startup = _models()["mlp"]
    main_json, startup_json = program_to_json(main), program_to_json(startup)
    runs = [
        (
            insert_allreduce(main, nranks=2),
            collective_startup(startup, nranks=2, rank=1, endpoints=ENDPOINTS),
        )
        for _ in range(2)
    ]
    assert program_to_json(main) == main_json and program_to_json(startup) == startup_json
    assert [program_to_json(p) for p in runs[0]] == [program_to_json(p) for p in runs[1]]
    for program in runs[0]:
        verify(program)


@pytest.mark.parametrize("model", ["fit_a_line", "mlp"])
def test_startup_inits_the_communicator_then_broadcasts_every_parameter(model):
    _, startup = _models()[model]
    result = collective_startup(startup, nranks=2, rank=1, endpoints=ENDPOINTS, ring_id=0)
    ops = result.global_block().ops
    params = [p.name for p in startup.global_block().all_parameters()]
    init = ops[0]
    assert init.type == "c_comm_init"
    assert {k: init.attrs[k] for k in ("nranks", "rank", "ring_id", "endpoints")} == {
        "nranks": 2,
        "rank": 1,
        "ring_id": 0,
        "endpoints": ENDPOINTS,
    }
    n_init = len(startup.global_block().ops)
    assert [op.to_string() for op in ops[1 : 1 + n_init]] == [op.to_string() for op in startup.global_block().ops]
    broadcasts = ops[1 + n_init : -1]
    assert [op.type for op in broadcasts] == ["c_broadcast"] * len(params)
    assert [op.input("X") for op in broadcasts] == [[p] for p in params]
    assert all(op.output("Out") == op.input("X") and op.attrs["root"] == 0 for op in broadcasts)
    assert ops[-1].type == "c_sync_comm_stream" and ops[-1].input("X") == params


@pytest.mark.parametrize("nranks", [0, -2, 2.0, True, "2"])
def test_bad_nranks_is_rejected(nranks):
    main, startup = _models()["fit_a_line"]
    with pytest.raises(FleetgraphError, match=r"insert_allreduce: nranks; expected an int >= 1, got"):
        insert_allreduce(main, nranks=nranks)
    with pytest.raises(FleetgraphError, match=r"collective_startup: nranks; expected an int >= 1"):
        collective_startup(startup, nranks=nranks, rank=0, endpoints=ENDPOINTS)


@pytest.mark.parametrize(
    "rank, endpoints, message",
    [
        (2, ENDPOINTS, r"rank; expected an int in \[0, 2\), got 2"),
        (-1, ENDPOINTS, r"rank; expected an int in \[0, 2\), got -1"),
        (0, ENDPOINTS[:1], r"endpoints; expected one 'ip:port' per rank \(2\), got 1"),
        (0, ["127.0.0.1:6170", "127.0.0.1"], r"endpoint; expected 'ip:port', got '127.0.0.1'"),
        (0, [ENDPOINTS[0]] * 2, r"expected distinct endpoints"),
    ],
)
def test_bad_rank_or_endpoints_are_rejected(rank, endpoints, message):
    _, startup = _models()["fit_a_line"]
    with pytest.raises(FleetgraphError, match=message):
        collective_startup(startup, nranks=2, rank=rank, endpoints=endpoints)


def test_program_without_optimizer_is_rejected():
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = paddle.static.data(name="x", shape=[None, 3])
        paddle.mean(paddle.static.nn.fc(x, 1))
    with pytest.raises(FleetgraphError, match=r"no \(param, grad\) pairs; call optimizer.minimize\(loss\) first"):
        insert_allreduce(main, nranks=2)


def test_transpiling_an_all_reduced_program_again_is_rejected():
    main, _ = _models()["fit_a_line"]
    with pytest.raises(FleetgraphError, match="already all-reduces"):
        insert_allreduce(insert_allreduce(main, nranks=2), nranks=2)


def test_facade_collective_mode_fuses_and_rewrites_the_startup_in_place():
    from fleetgraph.transpiler import DistributeTranspiler, DistributeTranspilerConfig

    main, startup, *_ = mlp(lambda: paddle.optimizer.Momentum(0.1), hidden=(32,))
    config = DistributeTranspilerConfig()
    config.mode, config.fuse_all_reduce_ops = "collective", True
    t = DistributeTranspiler(config)
    t.transpile(
        1,
        program=main,
        trainers="127.0.0.1:6170,127.0.0.1:6171",
        current_endpoint="127.0.0.1:6171",
        startup_program=startup,
    )
    types = op_summary(t.get_trainer_program())
    assert types.count("c_allreduce_sum") == 1 and types.count("coalesce_tensor") == 1
    assert op_summary(startup).startswith("block0: c_comm_init") and op_summary(startup).count("c_broadcast") == 4
    assert str(t.plan).splitlines() == [
        "CollectivePlan: 2 ranks, this is rank 1 (127.0.0.1:6171)",
        "  bucket 0: 4 gradients, 0.1 MiB float32",
    ]
    with pytest.raises(FleetgraphError, match="current_endpoint '127.0.0.1:6170' is not rank 1's endpoint"):
        DistributeTranspiler(config).transpile(
            1,
            program=main,
            trainers="127.0.0.1:6170,127.0.0.1:6171",
            current_endpoint="127.0.0.1:6170",
            startup_program=startup,
        )
    with pytest.raises(FleetgraphError, match="pserver programs exist only in mode 'pserver'"):
        t.get_pserver_program("127.0.0.1:6170")
