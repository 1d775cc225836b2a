"""paddle.distributed.split as Paddle 2.0 has it: a two-rank Fleet job (one, shared by the tests) trains
a parallel embedding, column- and row-parallel linears and equals one process training the unsplit
model; each rank holds the parts of the weights Paddle's layout gives it; bad arguments get Paddle's
errors; the collectives it appends differentiate as Paddle's do."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from dist_helpers import SCRIPTS, run_collective_job
from dist_scripts import model_parallel_split as job

import fleetgraph as paddle
import fleetgraph.distributed.fleet as fleet
from fleetgraph.ir import FleetgraphError, Program, ShapeError, get_op_def, program_guard, unique_name
from fleetgraph.transpiler import insert_allreduce

STEPS = 4


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    """The two ranks' saved parameters and losses (npz) and program facts (json), from one job."""
    out = tmp_path_factory.mktemp("split")
    run_collective_job([os.path.join(SCRIPTS, "model_parallel_split.py"), "--out", str(out), "--steps", str(STEPS)])
    return [(np.load(out / f"rank{r}.npz"), json.loads((out / f"rank{r}.json").read_text())) for r in (0, 1)]


def _unsplit_run():
    """One process, the unsplit model: losses and trained parameters by role. The row-parallel
    linear's bias is added once per rank before the sum, so here it counts twice."""
    paddle.enable_static()
    w = {k: paddle.ParamAttr(initializer=paddle.nn.initializer.Assign(v)) for k, v in job.full_weights().items()}
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        ids = paddle.static.data("ids", [job.BATCH, 2], "int64")
        y = paddle.static.data("y", [job.BATCH, 1], "float32")
        emb = paddle.nn.Embedding(job.VOCAB, job.DIM, weight_attr=w["emb"])(ids)
        h = paddle.nn.Linear(2 * job.DIM, job.HIDDEN, w["col1_w"], w["col1_b"])(paddle.reshape(emb, [job.BATCH, -1]))
        row = paddle.nn.Linear(job.HIDDEN, job.ROWS, w["row_w"], bias_attr=False)
        row_b = paddle.static.create_parameter([job.ROWS], "float32", attr=w["row_b"])
        r = row(paddle.tanh(h)) + 2.0 * row_b
        c = paddle.nn.Linear(job.ROWS, job.COLS, w["col2_w"], w["col2_b"])(r)
        out = paddle.nn.Linear(job.COLS, 1, w["fc_w"], w["fc_b"])(paddle.tanh(c))
        loss = paddle.mean(paddle.square(out - y))
        paddle.optimizer.SGD(job.LR).minimize(loss)
    exe, scope = paddle.static.Executor(paddle.CPUPlace()), paddle.static.Scope()
    exe.run(startup, scope=scope)
    losses = [float(exe.run(main, feed=f, fetch_list=[loss], scope=scope)[0]) for f in job.batches(STEPS)]
    names = [p.name for p in main.all_parameters()]
    roles = ["emb", "col1_w", "col1_b", "row_w", "row_b", "col2_w", "col2_b", "fc_w", "fc_b"]
    return np.array(losses), {role: np.array(scope.vars[name]) for role, name in zip(sorted(roles, key=_order), names)}


def _order(role):
    """The unsplit program creates the row-parallel weight before its separate bias, as the split one."""
    return ["emb", "col1_w", "col1_b", "row_w", "row_b", "col2_w", "col2_b", "fc_w", "fc_b"].index(role)


def test_two_ranks_train_as_one_process_training_the_unsplit_model(ranks):
    losses, want = _unsplit_run()
    (r0, _), (r1, _) = ranks
    for got in (r0, r1):
        np.testing.assert_allclose(got["losses"], losses, rtol=1e-5)
    gathered = {
        "emb": np.concatenate([r0["emb"][:4], r1["emb"][:3]]),  # without each rank's padding row
        "col1_w": np.concatenate([r0["col1_w"], r1["col1_w"]], axis=1),
        "col1_b": np.concatenate([r0["col1_b"], r1["col1_b"]]),
        "row_w": np.concatenate([r0["row_w"], r1["row_w"]], axis=0),
        "col2_w": np.concatenate([r0["col2_w"], r1["col2_w"]], axis=1),
        "col2_b": np.concatenate([r0["col2_b"], r1["col2_b"]]),
    }
    for role in ("row_b", "fc_w", "fc_b"):  # replicated: the same on both ranks
        np.testing.assert_array_equal(r0[role], r1[role], err_msg=role)
        gathered[role] = r0[role]
    assert losses[-1] < losses[0]
    for role, value in want.items():
        np.testing.assert_allclose(gathered[role], value, rtol=1e-5, atol=1e-6, err_msg=role)


def test_each_rank_holds_the_parts_paddles_layout_gives_it(ranks):
    (r0, info0), (r1, _) = ranks
    shapes = {"emb": [(5, 4), (4, 4)], "col1_w": [(8, 3)] * 2, "col1_b": [(3,)] * 2, "row_w": [(3, 5)] * 2,
              "row_b": [(5,)] * 2, "col2_w": [(5, 2)] * 2, "col2_b": [(2,)] * 2}  # fmt: skip
    for role, (s0, s1) in shapes.items():
        assert (r0[role].shape, r1[role].shape) == (s0, s1), role
    # the padding row (the last) looks up zeros, so it gets no gradient and keeps its initial value
    np.testing.assert_array_equal(r0["emb"][4], job.full_weights()["pad"][0])
    np.testing.assert_array_equal(r1["emb"][3], job.full_weights()["pad"][1])
    names = info0["names"]
    assert names["col1_w"] == "linear_0.w_0" and names["emb"] == "embedding_0.w_0"  # nn.Linear's, nn.Embedding's
    # the shards stay each rank's own: rank 0 broadcasts only the replicated parameters
    assert sorted(info0["broadcast"]) == sorted(names[r] for r in ("row_b", "fc_w", "fc_b"))


def test_the_job_all_reduces_activations_and_gathers_outputs_as_paddle_2_0(ranks):
    _, info = ranks[0]
    ops = info["ops"]
    forward = ops[: ops.index("fill_constant")]
    assert forward[:5] == ["unsqueeze2", "shard_index", "squeeze2", "lookup_table_v2", "c_allreduce_sum"]
    assert forward.count("c_allreduce_sum") == 2  # the embedding's and the row-parallel linear's
    assert forward[forward.index("c_allgather") :][:3] == ["c_allgather", "split", "concat"]
    assert ops.count("c_reducescatter") == 1  # c_allgather's gradient
    # no shard's gradient is all-reduced: only the activations' and the replicated parameters' bucket
    shards = {info["names"][r] + "@GRAD" for r in ("emb", "col1_w", "col1_b", "row_w", "col2_w", "col2_b")}
    assert not shards & set(info["reduced"])


def test_num_partitions_other_than_the_jobs_size_is_refused(ranks):
    for n in ("1", "3"):
        assert "num_partitions; expected the job's 2 trainers" in ranks[0][1]["refusals"][n]
        assert ranks[0][1]["refusals"][n].endswith(f"got {n}")


# -- bad arguments, in this process (a job of one) ----------------------------------------------------------


@pytest.fixture
def one_rank():
    paddle.enable_static()
    fleet.init(is_collective=True)
    with program_guard(Program(), Program()), unique_name.guard():
        yield paddle.static.data("x", [2, 4], "float32")


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"size": (4,)}, AssertionError, "Number of elements in size of paddle.distributed.split must be two"),
        ({"size": 4}, AssertionError, "The type of size for paddle.distributed.split must be list or tuple"),
        ({"operation": "conv"}, AssertionError, r"must be one of \['linear', 'embedding'\]; got 'conv'"),
        ({"operation": 1}, AssertionError, "The type of operation for paddle.distributed.split must be str"),
        ({"axis": 2}, ValueError, "The value of axis must be 0 or 1, but the value given is 2"),
        ({"operation": "embedding", "axis": 1}, AssertionError, "split the weight of embedding along the first axis"),
        ({"size": (6, 6), "axis": 0}, AssertionError, r"width \(4\) of the input x must be equal to the height \(6\)"),
        ({"num_partitions": 2}, ValueError, "num_partitions; expected the job's 1 trainers"),
    ],
)  # fmt: skip
def test_bad_arguments_get_paddles_errors(one_rank, kwargs, error, match):
    args = {"size": (4, 6), "operation": "linear", "axis": 1, "num_partitions": 1, **kwargs}
    with pytest.raises(error, match=match):
        paddle.distributed.split(one_rank, **args)


def test_split_is_refused_in_dynamic_mode_and_before_fleet_init(monkeypatch):
    paddle.disable_static()
    try:
        with pytest.raises(ValueError, match="cannot be used in dynamic graph mode"):
            paddle.distributed.split(paddle.to_tensor(np.ones((2, 4), "float32")), (4, 6), "linear", axis=1)
    finally:
        paddle.enable_static()
    monkeypatch.setattr(fleet.fleet, "_role_maker", None)
    with program_guard(Program(), Program()):
        x = paddle.static.data("x", [2, 4], "float32")
        with pytest.raises(AssertionError, match=r"you must call fleet.init\(\) firstly"):
            paddle.distributed.split(x, (4, 6), "linear", axis=1)


def test_a_job_of_one_builds_the_whole_layer(one_rank):
    out = paddle.distributed.split(one_rank, (4, 6), "linear", axis=0, num_partitions=1)
    block = one_rank.block
    weight = block.program.all_parameters()[0]
    assert out.shape == (2, 6) and weight.shape == (4, 6) and weight.is_distributed
    assert [op.type for op in block.ops][-1] == "c_allreduce_sum"
    assert block.ops[-1].attrs["use_calc_stream"]
    with pytest.raises(ShapeError, match="c_allgather: nranks; expected >= 2"):  # Paddle 2.0's InferShape too
        paddle.distributed.split(one_rank, (4, 6), "linear", axis=1, num_partitions=1)


# -- the collectives' gradients, as Paddle's grad makers write them ------------------------------------------


def _all_reduced_linear() -> tuple[Program, str]:
    """A linear layer whose output is all-reduced in place, trained by SGD; the output's name."""
    paddle.enable_static()
    main = Program()
    with program_guard(main, Program()), unique_name.guard():
        out = paddle.nn.Linear(3, 2)(paddle.static.data("x", [4, 3], "float32"))
        paddle.distributed.all_reduce(out)
        paddle.optimizer.SGD(0.1).minimize(paddle.mean(out))
    return main, out.name


def test_c_allreduce_sums_gradient_is_the_all_reduced_output_gradient():
    main, out = _all_reduced_linear()
    grads = [op for op in main.global_block().ops if op.type == "c_allreduce_sum" and op.attrs["op_role"]]
    assert len(grads) == 1 and grads[0].input("X") == grads[0].output("Out") == [out + "@GRAD"]
    assert grads[0].attrs["use_calc_stream"] and grads[0].attrs["ring_id"] == 0
    forward = next(op for op in main.global_block().ops if op.type == "c_allreduce_sum")
    forward.attrs["use_model_parallel"] = True  # Paddle 2.1's attr: the gradient passes through (c_identity)
    (desc,) = get_op_def("c_allreduce_sum").grad(forward)
    assert desc["type"] == "assign" and desc["inputs"]["X"] == desc["outputs"]["Out"] == [out + "@GRAD"]


def test_c_allgather_and_c_reducescatter_are_each_others_gradient():
    paddle.enable_static()
    main = Program()
    with program_guard(main, Program()):
        block = main.global_block()
        x = paddle.static.data("x", [4, 3], "float32")
        for op_type, rows in (("c_allgather", 8), ("c_reducescatter", 2)):
            out = block.create_var(f"{op_type}_out", dtype="float32")
            op = block.append_op(op_type, {"X": [x.name]}, {"Out": [out.name]}, {"nranks": 2, "ring_id": 0})
            assert out.shape == (rows, 3)
            (desc,) = get_op_def(op_type).grad(op)
            other = "c_reducescatter" if op_type == "c_allgather" else "c_allgather"
            assert desc["type"] == other and desc["inputs"] == {"X": [out.name + "@GRAD"]}
            assert desc["outputs"] == {"Out": ["x@GRAD"]} and desc["attrs"]["nranks"] == 2
        with pytest.raises(ShapeError, match="nranks; expected >= 2"):
            block.append_op("c_allgather", {"X": [x.name]}, {"Out": [block.create_var("g1").name]}, {"nranks": 1})
        with pytest.raises(ShapeError, match=r"expected dim 0 divisible by nranks \(3\)"):
            block.append_op("c_reducescatter", {"X": [x.name]}, {"Out": [block.create_var("s3").name]}, {"nranks": 3})


def test_the_transpiler_keeps_model_parallel_all_reduces_and_refuses_a_second_pass():
    main, out = _all_reduced_linear()
    once = insert_allreduce(main, nranks=2)
    reduced = [op.input("X")[0] for op in once.global_block().ops if op.type == "c_allreduce_sum"]
    assert reduced == [out, out + "@GRAD", "linear_0.b_0@GRAD", "linear_0.w_0@GRAD"]
    with pytest.raises(FleetgraphError, match="already all-reduces gradient"):
        insert_allreduce(once, nranks=2)
