"""Gradient clipping as an optimizer's grad_clip: one step equals NumPy's clipped update; a parameter
with need_clip=False keeps its gradient; a sparse gradient clips as its dense form."""

from __future__ import annotations

import numpy as np
import pytest

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.ir import OpRole, Program, program_guard, unique_name
from fleetgraph.ops.selected_rows import SelectedRows

RNG = np.random.default_rng(3)
X = RNG.normal(size=(8, 13)).astype("float32")
Y = (RNG.normal(size=(8, 1)) * 5).astype("float32")


def _step(grad_clip, need_clip_b=True, lr=0.1):
    """fit_a_line's (w, b) before and after one SGD step with grad_clip, and the NumPy gradients."""
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = paddle.static.data(name="x", shape=[None, 13], dtype="float32")
        y = paddle.static.data(name="y", shape=[None, 1], dtype="float32")
        b_attr = paddle.ParamAttr(name="b", need_clip=need_clip_b)
        pred = paddle.static.nn.fc(x, size=1, weight_attr=paddle.ParamAttr(name="w"), bias_attr=b_attr)
        loss = paddle.mean(paddle.nn.functional.square_error_cost(pred, y))
        ops, _ = paddle.optimizer.SGD(learning_rate=lr, grad_clip=grad_clip).minimize(loss)
    scope = paddle.static.Scope()
    exe = paddle.static.Executor()
    exe.run(startup, scope=scope)
    w, b = np.array(scope.vars["w"], np.float64), np.array(scope.vars["b"], np.float64)
    exe.run(main, feed={"x": X, "y": Y}, scope=scope)
    r = X @ w + b - Y
    grads = 2 * X.T @ r / len(X), np.array([2 * r.mean()])
    return (w, b), grads, (np.array(scope.vars["w"]), np.array(scope.vars["b"])), ops


def test_clip_by_value_clips_every_element():
    (w, b), (gw, gb), (w1, b1), _ = _step(paddle.nn.ClipGradByValue(max=0.3, min=-0.2))
    assert (np.abs(gw) > 0.3).any()  # the clip bites
    np.testing.assert_allclose(w1, w - 0.1 * np.clip(gw, -0.2, 0.3), atol=1e-6)
    np.testing.assert_allclose(b1, b - 0.1 * np.clip(gb, -0.2, 0.3), atol=1e-6)


def test_clip_by_norm_scales_each_gradient_to_its_own_norm():
    (w, b), (gw, gb), (w1, b1), _ = _step(fluid.clip.GradientClipByNorm(clip_norm=0.5))
    assert np.linalg.norm(gw) > 0.5 and np.linalg.norm(gb) > 0.5
    np.testing.assert_allclose(w1, w - 0.1 * gw * 0.5 / np.linalg.norm(gw), atol=1e-6)
    np.testing.assert_allclose(b1, b - 0.1 * gb * 0.5 / np.linalg.norm(gb), atol=1e-6)


def test_clip_by_global_norm_scales_all_gradients_by_their_joint_norm():
    (w, b), (gw, gb), (w1, b1), ops = _step(fluid.clip.GradientClipByGlobalNorm(clip_norm=1.0))
    norm = np.sqrt((gw**2).sum() + (gb**2).sum())
    assert norm > 1.0
    np.testing.assert_allclose(w1, w - 0.1 * gw / norm, atol=1e-6)
    np.testing.assert_allclose(b1, b - 0.1 * gb / norm, atol=1e-6)
    # clipping first (Paddle's ops), then the updates; minimize returns them all, each an optimize op
    types = [op.type for op in ops]
    assert types[:9] == ["square", "reduce_sum", "square", "reduce_sum", "sum", "sqrt", "fill_constant"] + [
        "elementwise_max",
        "elementwise_div",
    ]
    assert types[9:] == ["elementwise_mul", "elementwise_mul", "sgd", "sgd"]
    assert all(op.attrs["op_role"] & OpRole.Optimize for op in ops)


def test_a_global_norm_below_the_limit_leaves_the_gradients():
    (w, b), (gw, gb), (w1, b1), _ = _step(paddle.nn.ClipGradByGlobalNorm(clip_norm=1e6))
    np.testing.assert_allclose(w1, w - 0.1 * gw, atol=1e-6)


def test_a_parameter_with_need_clip_false_keeps_its_gradient_and_stays_out_of_the_norm():
    (w, b), (gw, gb), (w1, b1), _ = _step(paddle.nn.ClipGradByGlobalNorm(clip_norm=1.0), need_clip_b=False)
    norm = np.linalg.norm(gw)
    np.testing.assert_allclose(w1, w - 0.1 * gw / norm, atol=1e-6)
    np.testing.assert_allclose(b1, b - 0.1 * gb, atol=1e-6)


@pytest.mark.parametrize("clip", ["value", "norm", "global_norm"])
def test_a_sparse_gradient_clips_as_its_dense_form(clip):
    make = {
        "value": lambda: fluid.clip.GradientClipByValue(0.01),
        "norm": lambda: fluid.clip.GradientClipByNorm(0.05),
        "global_norm": lambda: fluid.clip.GradientClipByGlobalNorm(0.05),
    }[clip]

    def train(is_sparse):
        main, startup = Program(), Program()
        main.random_seed = startup.random_seed = 2
        with program_guard(main, startup), unique_name.guard():
            ids = fluid.layers.data(name="ids", shape=[1], dtype="int64")
            y = fluid.layers.data(name="y", shape=[1])
            emb = fluid.layers.embedding(ids, size=[20, 4], is_sparse=is_sparse, param_attr=fluid.ParamAttr(name="t"))
            loss = fluid.layers.mean(fluid.layers.square_error_cost(fluid.layers.fc(emb, size=1), y))
            fluid.optimizer.SGD(0.5, grad_clip=make()).minimize(loss)
        scope = paddle.static.Scope()
        exe = fluid.Executor()
        exe.run(startup, scope=scope)
        for step in range(3):
            feed = {
                "ids": np.array([[1], [3], [3], [7 + step]]),
                "y": np.array([[1.0], [2.0], [0.5], [3.0]], "float32"),
            }
            exe.run(main, feed=feed, scope=scope)
        return np.array(scope.vars["t"])

    np.testing.assert_allclose(train(True), train(False), atol=1e-6)


def test_clip_of_a_sparse_gradient_merges_its_rows():
    from fleetgraph.ops.clip import _clip

    sr = _clip(np, SelectedRows(np.array([2, 0, 2]), np.array([[0.4], [0.1], [0.3]]), 4), min=-0.5, max=0.5)
    assert sr.rows.tolist() == [0, 2] and sr.value.ravel().tolist() == [0.1, 0.5]


def test_grad_clip_of_the_wrong_type_is_one_clear_error():
    with pytest.raises(TypeError, match="grad_clip expected ClipGradByValue, ClipGradByNorm or ClipGradByGlobalNorm"):
        paddle.optimizer.SGD(0.1, grad_clip=1.0)
    with pytest.raises(paddle.FleetgraphError, match="clip_norm expected a positive float"):
        paddle.nn.ClipGradByGlobalNorm(clip_norm=-1)


# -- under the parameter-server transpiler (the runtime's equality with one process: test_ps_runtime) --


def _mlp_with(grad_clip):
    def build():
        from models import mlp

        return mlp(lambda: fluid.optimizer.Momentum(0.05, 0.9, grad_clip=grad_clip), hidden=(32,), seed=11)[:2]

    return build


def test_sync_pservers_clip_the_averaged_gradient_and_trainers_send_the_scale():
    from ps_helpers import transpile

    from fleetgraph.ir import op_summary

    t = transpile(_mlp_with(paddle.nn.ClipGradByGlobalNorm(0.5)), trainer_id=1)
    trainer = op_summary(t.get_trainer_program())
    assert "square" not in trainer and "elementwise_mul" not in trainer  # the trainers send unclipped gradients
    assert "send_barrier reduce_sum sqrt fill_constant elementwise_max elementwise_div send recv" in trainer
    barrier = next(op for op in t.get_trainer_program().global_block().ops if op.type == "send_barrier")
    assert barrier.output("Out") == ["@CLIP_SQUARES@"]
    scale_send = next(op for op in t.get_trainer_program().global_block().ops if "@CLIP_SCALE@" in op.input_arg_names)
    assert scale_send.attrs["send_varnames"] == ["@CLIP_SCALE@.trainer_1"] * 2
    for ep in ("127.0.0.1:6174", "127.0.0.1:6175"):
        main, _ = t.get_pserver_programs(ep)
        serv = main.global_block().ops[0]
        clip_block = main.block(serv.attrs["clip_block_id"])
        types = [op.type for op in clip_block.ops]
        assert types[-1] == "concat" and "square" in types and "sum" in types  # averaged, then squared
        for idx in serv.attrs["optimize_blocks"]:
            ops = main.block(idx).ops
            assert [op.type for op in ops] == ["elementwise_mul", "momentum"]  # no average left here
            assert ops[0].input("Y") == ["@CLIP_SCALE@"] and ops[1].input("Grad") == ops[0].output("Out")


def test_by_norm_takes_one_norm_per_parameter_and_by_value_clips_on_the_pservers():
    from ps_helpers import transpile

    from fleetgraph.ir import op_summary

    t = transpile(_mlp_with(paddle.nn.ClipGradByNorm(0.3)))
    assert t.plan.clip.groups == tuple((p.param,) for p in t.plan.params)
    main, _ = t.get_pserver_programs("127.0.0.1:6174")
    first = main.block(main.global_block().ops[0].attrs["optimize_blocks"][0])
    assert [op.type for op in first.ops] == ["slice", "elementwise_mul", "momentum"]  # its group's scale
    t = transpile(_mlp_with(paddle.nn.ClipGradByValue(0.02)))
    assert "send_barrier recv" in op_summary(t.get_trainer_program())  # nothing to put together
    main, _ = t.get_pserver_programs("127.0.0.1:6174")
    assert main.global_block().ops[0].attrs["clip_block_id"] == -1
    assert "sum scale clip momentum" in op_summary(main)


def test_a_parameter_with_need_clip_false_is_averaged_and_updated_on_its_pserver_unscaled():
    from ps_helpers import transpile

    def build():
        main, startup = Program(), Program()
        with program_guard(main, startup), unique_name.guard():
            x = paddle.static.data(name="x", shape=[None, 13], dtype="float32")
            y = paddle.static.data(name="y", shape=[None, 1], dtype="float32")
            b_attr = paddle.ParamAttr(name="b", need_clip=False)
            pred = paddle.static.nn.fc(x, size=1, weight_attr=paddle.ParamAttr(name="w"), bias_attr=b_attr)
            loss = paddle.mean(paddle.nn.functional.square_error_cost(pred, y))
            paddle.optimizer.SGD(0.1, grad_clip=paddle.nn.ClipGradByGlobalNorm(0.5)).minimize(loss)
        return main, startup

    t = transpile(build)
    assert "clip: 1 averaged gradients on the pservers, by their global norm to 0.5" in str(t.plan)
    blocks = {}
    for ep in ("127.0.0.1:6174", "127.0.0.1:6175"):
        main, _ = t.get_pserver_programs(ep)
        for entry in main.global_block().ops[0].attrs["grad_to_block_id"]:
            grad, idx = entry.rsplit(":", 1)
            blocks[grad] = [op.type for op in main.block(int(idx)).ops]
    assert blocks == {"w@GRAD": ["elementwise_mul", "sgd"], "b@GRAD": ["sum", "scale", "sgd"]}
