"""The parameter-server transpiler: op-type sequences per role against golden files (golden/paddle:
PaddlePaddle 3.3.1's own output for seed 001's model, var mappings included; golden/snapshots: our
earlier output, regression snapshots), slicing, modes, split methods and bad input."""

from __future__ import annotations

import numpy as np
import pytest
from models import fit_a_line_2x, fit_a_line_fluid, mlp
from ps_helpers import (
    TWO_PSERVERS,
    check_golden,
    check_paddle_golden,
    config,
    paddle_reference_dump,
    role_dump,
    transpile,
    var_names,
)

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.ir import FleetgraphError, OpRole, Program, VarType, op_summary, program_guard, unique_name
from fleetgraph.transpiler import DistributeTranspiler, HashName
from fleetgraph.transpiler.ps_plan import slice_rows

THREE_PSERVERS = "127.0.0.1:6174,127.0.0.1:6175,127.0.0.1:6176"


def sliced_mlp(optimizer=lambda: paddle.optimizer.SGD(0.01)):
    """fc_0.w_0 is [784, 64] = 50176 elements: cut into one block per pserver."""
    return mlp(optimizer, hidden=(64,))


def sparse_embedding_model():
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        ids = fluid.layers.data(name="ids", shape=[1], dtype="int64")
        label = fluid.layers.data(name="label", shape=[1], dtype="float32")
        emb = fluid.layers.embedding(ids, size=[10000, 8], is_sparse=True)
        pred = fluid.layers.fc(emb, size=1)
        loss = fluid.layers.mean(fluid.layers.square_error_cost(pred, label))
        fluid.optimizer.SGD(0.1).minimize(loss)
    return main, startup


# -- golden files ---------------------------------------------------------------------------------


# PaddlePaddle 3.3.1 wrote these files (tests/golden/paddle/generate.py, run in a throwaway Paddle
# environment): the models in Paddle 2.x's spelling (paddle.mean is a reduce_mean; Fluid's layers.mean
# is a mean op, see test_ir.py), every role's op types and trainer 0's var mappings, compared whole
PADDLE_GOLDENS = {
    "fit_a_line_sync": (fit_a_line_2x, "fit_a_line sync", {}),
    "fit_a_line_async": (fit_a_line_2x, "fit_a_line async", {"sync_mode": False}),
    "mlp_sliced_sync": (sliced_mlp, "mlp sliced sync", {}),
    "mlp_sliced_adam": (lambda: sliced_mlp(lambda: paddle.optimizer.Adam(0.01)), "mlp sliced adam", {}),
    "mlp_sliced_momentum_3ps": (
        lambda: sliced_mlp(lambda: paddle.optimizer.Momentum(0.01)),
        "mlp sliced momentum",
        {"pservers": THREE_PSERVERS},
    ),
    "mlp_unsliced": (sliced_mlp, "mlp unsliced", {"slice_var_up": False}),
    "mlp_one_pserver": (sliced_mlp, "mlp one pserver", {"pservers": "127.0.0.1:6174"}),
    "mlp_sliced_runtime_split": (
        sliced_mlp,
        "mlp sliced runtime_split",
        {"sync_mode": False, "runtime_split_send_recv": True},
    ),
}


@pytest.mark.parametrize("name", PADDLE_GOLDENS)
def test_role_programs_match_paddle(name):
    build, label, kw = PADDLE_GOLDENS[name]
    check_paddle_golden(name, paddle_reference_dump(build, label, **kw))


# Our own earlier output, for what 3.3.1 cannot build (generate.py says why): regression snapshots
@pytest.mark.parametrize(
    "name, build, kw",
    [
        ("mlp_hashname", sliced_mlp, {"split_method": HashName}),
        ("fit_a_line_half_async", fit_a_line_fluid, {"half_async": True}),
        ("fit_a_line_geo", fit_a_line_fluid, {"geo_sgd_mode": True, "geo_sgd_need_push_nums": 4}),
        ("sparse_embedding_sync", sparse_embedding_model, {}),
    ],
)
def test_role_programs_match_golden(name, build, kw):
    check_golden(name, role_dump(build, **kw))


# -- what the programs hold -------------------------------------------------------------------------


def test_sync_gradients_carry_the_trainer_suffix_and_pserver_sums_them():
    t = transpile(fit_a_line_fluid, trainer_id=1)
    send = [op for op in t.get_trainer_program().global_block().ops if op.type == "send"]
    assert [op.attrs["send_varnames"] for op in send] == [["fc_0.b_0@GRAD.trainer_1"], ["fc_0.w_0@GRAD.trainer_1"]]
    assert [op.attrs["epmap"] for op in send] == [["127.0.0.1:6174"], ["127.0.0.1:6175"]]
    pserver = t.get_pserver_program("127.0.0.1:6175")
    serv = pserver.global_block().ops[0]
    assert serv.attrs["Fanin"] == 2 and serv.attrs["distributed_mode"] == 0
    assert serv.attrs["optimize_blocks"] == [1] and serv.attrs["grad_to_block_id"] == ["fc_0.w_0@GRAD:1"]
    sum_op, scale, sgd = pserver.block(1).ops
    assert sum_op.input("X") == ["fc_0.w_0@GRAD.trainer_0", "fc_0.w_0@GRAD.trainer_1"]
    assert scale.attrs["scale"] == 0.5
    assert sgd.input("Param") == ["fc_0.w_0"] and sgd.input("Grad") == ["fc_0.w_0@GRAD"]


def test_async_sends_unsuffixed_gradients_without_barriers():
    main, startup = fit_a_line_fluid()[:2]
    t = DistributeTranspiler(config(sync_mode=False, runtime_split_send_recv=True))
    t.transpile(0, program=main, pservers=TWO_PSERVERS, trainers=2, startup_program=startup)
    ops = t.get_trainer_program().global_block().ops
    assert not {"send_barrier", "fetch_barrier"} & {op.type for op in ops}
    assert "fc_0.w_0@GRAD" in var_names(t.get_trainer_program())
    assert t.get_pserver_program("127.0.0.1:6174").global_block().ops[0].attrs["distributed_mode"] == 1


def test_sliced_parameter_is_split_sent_received_and_concatenated():
    t = transpile(sliced_mlp)
    assert [(b.name, b.rows, b.endpoint) for b in t.plan.param("fc_0.w_0").blocks] == [
        ("fc_0.w_0.block0", 392, "127.0.0.1:6175"),
        ("fc_0.w_0.block1", 392, "127.0.0.1:6174"),
    ]
    block = t.get_trainer_program().global_block()
    split = next(op for op in block.ops if op.type == "split_byref")
    assert split.attrs["sections"] == [392, 392]
    assert split.output("Out") == ["fc_0.w_0@GRAD.block0.trainer_0", "fc_0.w_0@GRAD.block1.trainer_0"]
    concat = block.ops[-1]
    assert concat.type == "concat" and concat.input("X") == ["fc_0.w_0.block0", "fc_0.w_0.block1"]
    pserver = t.get_pserver_program("127.0.0.1:6174").global_block()
    assert pserver.var("fc_0.w_0.block1").shape == (392, 64) and pserver.var("fc_0.w_0.block1").persistable


def test_optimizer_state_is_sliced_with_its_parameter():
    t = transpile(lambda: sliced_mlp(lambda: paddle.optimizer.Adam(0.01)))
    main, startup = t.get_pserver_programs("127.0.0.1:6175")
    ops = [op for b in main.blocks for op in b.ops]
    adam = next(op for op in ops if op.type == "adam" and op.input("Param") == ["fc_0.w_0.block0"])
    assert adam.input("Moment1") == ["fc_0.w_0_moment1_0.block0"]
    assert main.global_block().var("fc_0.w_0_moment1_0.block0").shape == (392, 64)
    assert adam.input("Beta1Pow") == ["fc_0.w_0_beta1_pow_acc_0"]  # [1]: copied, not cut
    inits = {op.output("Out")[0]: op for op in startup.global_block().ops}
    # a random init draws the whole parameter (as one process would) and keeps the block's rows
    assert inits["fc_0.w_0"].type == "uniform_random" and inits["fc_0.w_0"].attrs["shape"] == [784, 64]
    cut = inits["fc_0.w_0.block0"]
    assert cut.type == "slice" and (cut.attrs["starts"], cut.attrs["ends"]) == ([0], [392])
    assert not startup.global_block().var("fc_0.w_0").persistable
    # a constant init is simply cut to the block's shape
    assert inits["fc_0.w_0_moment1_0.block0"].attrs["shape"] == [392, 64]
    assert "fc_0.w_0.block1" not in inits  # the other pserver's block


def test_sparse_gradient_is_split_as_selected_rows():
    t = transpile(sparse_embedding_model)
    block = t.get_trainer_program().global_block()
    split = next(op for op in block.ops if op.type == "split_selected_rows")
    assert split.attrs["height_sections"] == [5000, 5000]
    assert all(block.var(n).type == VarType.SELECTED_ROWS for n in split.output("Out"))
    send = next(op for op in block.ops if op.type == "send" and op.input("X") == split.output("Out"))
    assert send.attrs["is_sparse"]
    grad = t.get_pserver_program("127.0.0.1:6175").global_block().var("embedding_0.w_0@GRAD.block1")
    assert grad.type == VarType.SELECTED_ROWS


def test_half_async_merges_sends_and_geo_keeps_local_optimizer():
    half = transpile(fit_a_line_fluid, half_async=True)
    sends = [op for op in half.get_trainer_program().global_block().ops if op.type == "send"]
    assert all(op.attrs["merge_add"] for op in sends)
    assert half.get_pserver_program("127.0.0.1:6174").global_block().ops[0].attrs["distributed_mode"] == 2
    geo = transpile(fit_a_line_fluid, geo_sgd_mode=True, geo_sgd_need_push_nums=4)
    ops = geo.get_trainer_program().global_block().ops
    assert [op.type for op in ops[-4:]] == ["sgd", "sgd", "send", "send"]
    assert ops[-1].input("X") == ["fc_0.w_0"] and ops[-1].attrs["send_varnames"] == ["fc_0.w_0.delta"]
    assert ops[-1].attrs["k_steps"] == 4
    serv = geo.get_pserver_program("127.0.0.1:6175")
    scale, add = serv.block(1).ops
    assert scale.attrs["scale"] == 0.5 and add.input("X") == ["fc_0.w_0", "fc_0.w_0.delta"]
    assert serv.global_block().ops[0].attrs["distributed_mode"] == 3


def test_roundrobin_and_hashname_place_blocks_differently_but_deterministically():
    rr = transpile(sliced_mlp, pservers=THREE_PSERVERS).plan
    hn = transpile(sliced_mlp, pservers=THREE_PSERVERS, split_method=HashName).plan
    assert [b.endpoint for p in rr.params for b in p.blocks][:3] == THREE_PSERVERS.split(",")
    placement = lambda plan: {b.name: b.endpoint for p in plan.params for b in p.blocks}  # noqa: E731
    assert placement(rr) != placement(hn)
    assert placement(hn) == placement(transpile(sliced_mlp, pservers=THREE_PSERVERS, split_method=HashName).plan)


def test_slice_rows_follows_paddle_slice_variable():
    assert slice_rows((784, 64), 2, 8192) == [392, 392]
    assert slice_rows((784, 64), 3, 8192) == [262, 262, 260]
    assert slice_rows((100, 10), 4, 8192) == [100]  # 1000 elements: one block
    assert slice_rows((20000,), 3, 8192) == [10000, 10000]  # at least min_block_size each
    assert slice_rows((13, 1), 2, 8192) == [13]


def test_plan_prints_blocks_and_bytes_per_pserver():
    text = str(transpile(sliced_mlp).plan)
    assert "DistPlan: sync, 2 trainers, 2 pservers" in text
    assert "pserver 127.0.0.1:6175: sends 98.0 KiB/step to it" in text
    assert "fc_0.w_0.block0: rows 0:392 of fc_0.w_0 [784, 64] -> [392, 64] float32" in text


def test_facade_writes_trainer_startup_in_place_and_leaves_main_alone():
    main, startup = fit_a_line_fluid()[:2]
    before = op_summary(main)
    t = DistributeTranspiler()
    t.transpile(0, program=main, pservers=TWO_PSERVERS, trainers=2, startup_program=startup)
    assert op_summary(main) == before
    assert op_summary(startup) == "block0: uniform_random fill_constant recv recv fetch_barrier"
    assert t.get_trainer_startup_program() is startup
    # the pservers still start from the original init ops
    assert op_summary(t.get_startup_program("127.0.0.1:6175")) == "block0: uniform_random fill_constant"


# -- bad input -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "pservers, message",
    [
        ("127.0.0.1", "pservers '127.0.0.1' is malformed: '127.0.0.1' is not ip:port; expected 'ip:port"),
        ("127.0.0.1:6174,:6175", "malformed: ':6175' is not ip:port"),
        ("127.0.0.1:99999", "malformed: '127.0.0.1:99999' has port '99999', expected one in 1..65535"),
        ("127.0.0.1:6174:6174", "malformed: '127.0.0.1:6174:6174' has a ':' in its host '127.0.0.1:6174'"),
        ("", "pservers '' is empty"),
        ("127.0.0.1:6174,127.0.0.1:6174", "lists an endpoint twice"),
    ],
)
def test_malformed_pservers_are_rejected(pservers, message):
    with pytest.raises(FleetgraphError, match=message):
        transpile(fit_a_line_fluid, pservers=pservers)


def test_trainer_id_out_of_range_is_rejected():
    with pytest.raises(FleetgraphError, match="trainer_id 2 is out of range; expected 0 <= trainer_id < 2"):
        transpile(fit_a_line_fluid, trainer_id=2)


def test_unknown_pserver_endpoint_is_rejected_with_close_match():
    t = transpile(fit_a_line_fluid)
    with pytest.raises(FleetgraphError, match="'127.0.0.1:6176' is not one of the pservers .*did you mean"):
        t.get_pserver_program("127.0.0.1:6176")


def test_program_without_optimize_ops_is_rejected():
    main, startup = Program(), Program()
    with program_guard(main, startup):
        x = paddle.static.data(name="x", shape=[None, 3])
        paddle.mean(paddle.static.nn.fc(x, 1))
    with pytest.raises(
        FleetgraphError,
        match="the program has no optimize ops; expected a program after "
        r"optimizer.minimize\(loss\)",
    ):
        DistributeTranspiler().transpile(0, program=main, pservers=TWO_PSERVERS, trainers=2, startup_program=startup)


def test_sync_mode_has_one_source_of_truth():
    main, startup = fit_a_line_fluid()[:2]
    t = DistributeTranspiler(config(sync_mode=False))
    with pytest.raises(FleetgraphError, match="sync_mode=True but config.sync_mode=False; expected them to agree"):
        t.transpile(0, program=main, pservers=TWO_PSERVERS, trainers=2, sync_mode=True, startup_program=startup)
    with pytest.raises(FleetgraphError, match="config.geo_sgd_mode needs sync_mode=False"):
        transpile(fit_a_line_fluid, sync_mode=True, geo_sgd_mode=True)
    assert transpile(fit_a_line_fluid, half_async=True).mode == 2  # unset sync_mode follows the config
    # Paddle 1.8: sync_mode=False alone is half-async (distributed_mode 2), async takes runtime_split_send_recv
    assert transpile(fit_a_line_fluid, sync_mode=False).mode == 2
    with pytest.raises(ValueError, match="runtime_split_send_recv=True needs config.sync_mode = False first"):
        config(runtime_split_send_recv=True)
    with pytest.raises(ValueError, match="set runtime_split_send_recv to False first"):
        config(sync_mode=False, runtime_split_send_recv=True).sync_mode = True


def test_getters_before_transpile_say_so():
    with pytest.raises(FleetgraphError, match=r"call transpile\(\) first"):
        DistributeTranspiler().get_trainer_program()


def test_transpiled_trainer_program_still_computes_the_same_forward():
    """Dropping optimize ops and adding sends leaves the forward values alone (no network needed
    for the forward part: run the ops before the first send)."""
    main, startup, x, y, loss = fit_a_line_fluid()
    t = DistributeTranspiler()
    t.transpile(0, program=main, pservers=TWO_PSERVERS, trainers=2, startup_program=startup.clone())
    forward = t.get_trainer_program().clone()
    block = forward.global_block()
    block.ops = block.ops[: [op.type for op in block.ops].index("send")]
    scope = paddle.static.Scope()
    exe = paddle.static.Executor()
    exe.run(startup, scope=scope)
    feed = {"x": np.ones((3, 13), "float32"), "y": np.zeros((3, 1), "float32")}
    (ours,) = exe.run(forward, feed=feed, fetch_list=[loss.name], scope=scope)
    (want,) = exe.run(main.clone(for_test=True), feed=feed, fetch_list=[loss.name], scope=scope)
    np.testing.assert_array_equal(ours, want)


def test_hashname_never_puts_two_blocks_of_a_parameter_on_one_pserver():
    """Regression: crc32 sent both blocks of fc_0.w_0 to one pserver, where they shared Adam's
    unsliced beta-power state and updated it twice per step."""
    for pservers in (TWO_PSERVERS, THREE_PSERVERS):
        plan = transpile(
            lambda: sliced_mlp(lambda: paddle.optimizer.Adam(0.01)), pservers=pservers, split_method=HashName
        ).plan
        for p in plan.params:
            assert len({b.endpoint for b in p.blocks}) == len(p.blocks), p.param


def _mlp_with(optimizer_factory):
    return lambda: mlp(optimizer_factory, hidden=(8,), seed=1)


def test_async_clip_ops_stay_on_the_trainer_which_sends_the_clipped_gradient():
    """As Paddle's transpiler leaves them; sync mode clips the averaged gradient on the pservers
    (test_clip.py)."""
    clip = lambda: paddle.optimizer.SGD(0.1, grad_clip=paddle.nn.ClipGradByGlobalNorm(1.0))  # noqa: E731
    t = transpile(_mlp_with(clip), sync_mode=False)
    trainer = t.get_trainer_program().global_block()
    clip_ops = [op for op in trainer.ops if "/gradient_clip/" in op.attrs.get("op_namescope", "/")]
    assert [op.type for op in clip_ops][-4:] == ["elementwise_mul"] * 4
    assert all(op.attrs["op_role"] == int(OpRole.Backward) for op in clip_ops)
    clipped = {op.output("Out")[0] for op in clip_ops if op.type == "elementwise_mul"}
    sent = {n for op in trainer.ops if op.type in ("send", "split_byref") for n in op.input("X")}
    assert clipped <= sent  # every gradient goes out clipped
    for ep in TWO_PSERVERS.split(","):
        main, _ = t.get_pserver_programs(ep)
        assert not [op for b in main.blocks for op in b.ops if "/gradient_clip/" in op.attrs.get("op_namescope", "/")]


def test_a_decay_schedule_runs_on_every_pserver_first_of_its_optimize_blocks():
    decay = lambda: paddle.optimizer.SGD(paddle.fluid.layers.exponential_decay(0.1, 10, 0.5))  # noqa: E731
    t = transpile(_mlp_with(decay), sync_mode=True)
    trainer_ops = [op.type for op in t.get_trainer_program().global_block().ops]
    assert "increment" not in trainer_ops and "elementwise_pow" not in trainer_ops
    for ep in TWO_PSERVERS.split(","):
        main, startup = t.get_pserver_programs(ep)
        serve = main.global_block().ops[0]
        lr_block = serve.attrs["lr_decay_block_id"]
        assert serve.attrs["optimize_blocks"][0] == lr_block
        assert [op.type for op in main.block(lr_block).ops][:2] == ["increment", "cast"]
        assert "@LR_DECAY_COUNTER@" in [n for op in startup.global_block().ops for n in op.output_arg_names]


def test_a_pserver_that_holds_no_parameter_gets_an_empty_optimize_block_as_paddles():
    t = transpile(fit_a_line_fluid, pservers="127.0.0.1:6174,127.0.0.1:6175,127.0.0.1:6176", sync_mode=True)
    main, _ = t.get_pserver_programs("127.0.0.1:6176")
    assert op_summary(main).splitlines() == ["block0: listen_and_serv", "block1: "]
    assert main.global_block().ops[0].attrs["optimize_blocks"] == [1]
