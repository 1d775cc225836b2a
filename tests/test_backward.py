"""append_backward: gradient ops in reverse order, accumulation with sum, stop_gradient and no_grad_set."""

from __future__ import annotations

import numpy as np

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.ir import Program, op_summary, program_guard, unique_name
from fleetgraph.transpiler import append_backward, gradients


def _program():
    main, startup = Program(), Program()
    return main, startup, program_guard(main, startup)


def test_a_variable_used_twice_has_its_gradients_summed():
    main, startup, guard = _program()
    with guard, unique_name.guard():
        x = paddle.static.data(name="x", shape=[None, 3])
        h = paddle.static.nn.fc(x, 3)
        loss = paddle.mean(paddle.add(paddle.square(h), h))
        pairs = append_backward(loss)
    types = [op.type for op in main.global_block().ops]
    sum_op = next(op for op in main.global_block().ops if op.type == "sum")
    assert sum_op.output("Out") == ["fc_0.tmp_1@GRAD"]
    assert sum_op.input("X") == ["fc_0.tmp_1@GRAD", "fc_0.tmp_1@GRAD@RENAME@block0@0"]
    assert types.index("sum") < types.index("elementwise_add_grad", types.index("square_grad"))
    assert [p.name for p, g in pairs] == ["fc_0.w_0", "fc_0.b_0"]


def test_summed_gradient_matches_numpy():
    main, startup, guard = _program()
    with guard:
        x = paddle.static.data(name="x", shape=[2, 3])
        x.stop_gradient = False
        loss = paddle.sum(paddle.multiply(x, x) + x)
        (g,) = gradients([loss], [x])
    data = np.arange(6, dtype="float32").reshape(2, 3)
    (out,) = paddle.static.Executor().run(main, feed={"x": data}, fetch_list=[g], scope=paddle.static.Scope())
    np.testing.assert_allclose(out, 2 * data + 1)


def _grad_through(build) -> tuple[np.ndarray, np.ndarray]:
    """d sum(build(x)) / dx for x = [[-2, -1, 0.5], [1, 2, -3]], and x."""
    main, startup, guard = _program()
    with guard:
        x = paddle.static.data(name="x", shape=[2, 3])
        x.stop_gradient = False
        (g,) = gradients([paddle.sum(build(x))], [x])
    data = np.array([[-2, -1, 0.5], [1, 2, -3]], "float32")
    (out,) = paddle.static.Executor().run(main, feed={"x": data}, fetch_list=[g], scope=paddle.static.Scope())
    return out, data


def test_sign_passes_a_zero_gradient_as_paddles_scale_by_zero():
    out, data = _grad_through(lambda x: paddle.multiply(paddle.sign(x), x))  # |x|: sign(x) d x + 0
    np.testing.assert_array_equal(out, np.sign(data))


def test_a_comparison_on_the_path_passes_no_gradient_back():
    """less_than has no gradient in Paddle either: d/dx of (x < 0) * x is only the product's x side."""

    def below_zero_times_x(x):
        below = fluid.layers.less_than(x, fluid.layers.fill_constant([1], "float32", 0.0))
        return paddle.multiply(fluid.layers.cast(below, "float32"), x)

    out, data = _grad_through(below_zero_times_x)
    np.testing.assert_array_equal(out, (data < 0).astype("float32"))


def test_stop_gradient_input_gets_no_gradient_op_work():
    main, startup, guard = _program()
    with guard, unique_name.guard():
        x = paddle.static.data(name="x", shape=[None, 3])
        loss = paddle.mean(paddle.static.nn.fc(x, 2))
        append_backward(loss)
    mul_grad = next(op for op in main.global_block().ops if op.type == "mul_grad")
    assert "X@GRAD" not in mul_grad.outputs
    assert not main.global_block().has_var("x@GRAD")


def test_no_grad_set_and_parameter_list_limit_the_gradients():
    main, startup, guard = _program()
    with guard, unique_name.guard():
        x = paddle.static.data(name="x", shape=[None, 3])
        h = paddle.static.nn.fc(x, 3)
        loss = paddle.mean(paddle.static.nn.fc(h, 1))
        pairs = append_backward(loss, parameter_list=["fc_1.w_0"])
    assert [p.name for p, _ in pairs] == ["fc_1.w_0"]
    # nothing below fc_1 needs a gradient, so fc_0's ops get none
    assert "mul_grad" in op_summary(main) and op_summary(main).count("mul_grad") == 1

    main, startup, guard = _program()
    with guard, unique_name.guard():
        x = paddle.static.data(name="x", shape=[None, 3])
        h = paddle.static.nn.fc(x, 3)
        loss = paddle.mean(paddle.static.nn.fc(h, 1))
        pairs = append_backward(loss, no_grad_set={"fc_0.tmp_1"})
    assert [p.name for p, _ in pairs] == ["fc_1.w_0", "fc_1.b_0"]


def test_non_trainable_parameter_gets_no_gradient():
    main, startup, guard = _program()
    with guard, unique_name.guard():
        x = paddle.static.data(name="x", shape=[None, 3])
        frozen = fluid.layers.fc(x, 3, param_attr=fluid.ParamAttr(trainable=False))
        loss = paddle.mean(fluid.layers.fc(frozen, 1))
        pairs = append_backward(loss)
    assert [p.name for p, _ in pairs] == ["fc_0.b_0", "fc_1.w_0", "fc_1.b_0"]


def test_unused_output_of_a_multi_output_op_gets_zero_gradient():
    main, startup, guard = _program()
    with guard:
        x = paddle.static.data(name="x", shape=[4, 6])
        x.stop_gradient = False
        a, b, c = paddle.split(x, 3, axis=1)
        loss = paddle.sum(a) + paddle.sum(paddle.square(c))
        (g,) = gradients([loss], [x])
    assert "fill_zeros_like" in op_summary(main)
    data = np.arange(24, dtype="float32").reshape(4, 6)
    (out,) = paddle.static.Executor().run(main, feed={"x": data}, fetch_list=[g], scope=paddle.static.Scope())
    np.testing.assert_allclose(out, np.concatenate([np.ones((4, 2)), np.zeros((4, 2)), 2 * data[:, 4:]], axis=1))


def test_backward_leaves_forward_ops_untouched():
    main, startup, guard = _program()
    with guard, unique_name.guard():
        x = paddle.static.data(name="x", shape=[None, 3])
        loss = paddle.mean(paddle.static.nn.fc(x, 1))
        before = [op.to_string() for op in main.global_block().ops]
        append_backward(loss)
    after = [op.to_string() for op in main.global_block().ops[: len(before)]]
    # only the loss op gains the Loss role bit
    assert [a for a, b in zip(after, before) if a != b] == [after[-1]]


def test_a_loss_built_in_a_sub_block_gets_its_gradients_in_a_new_block_as_paddle_does():
    # Paddle 2.6.2 on this program: block 1 (parent 0) holds the forward ops; block 2 (parent 0,
    # forward block 1) holds fill_constant, the grad ops and both sgd ops, and is left current.
    main, startup, guard = _program()
    with guard, unique_name.guard():
        x = fluid.layers.data(name="x", shape=[4], dtype="float32")
        main._create_block()
        loss = fluid.layers.mean(fluid.layers.fc(input=x, size=2))
        optimize_ops, pairs = fluid.optimizer.SGD(learning_rate=0.1).minimize(loss)
        assert main.current_block().idx == 2
        main._rollback()
    assert main.current_block().idx == 0
    assert [(b.idx, b.parent_idx, b.forward_block_idx) for b in main.blocks] == [(0, -1, -1), (1, 0, -1), (2, 0, 1)]
    assert [op.type for op in main.block(1).ops] == ["mul", "elementwise_add", "mean"]
    grad_block = main.block(2)
    assert [op.type for op in grad_block.ops] == [
        "fill_constant", "mean_grad", "elementwise_add_grad", "mul_grad", "sgd", "sgd",
    ]  # fmt: skip
    assert [op.type for op in optimize_ops] == ["sgd", "sgd"]
    assert {g.name for _, g in pairs} == {"fc_0.w_0@GRAD", "fc_0.b_0@GRAD"}
    assert all(grad_block.has_var(g.name) for _, g in pairs)
    assert not grad_block.has_var("fc_0.w_0")  # forward variables are seen through the forward block
    assert grad_block.var_recursive("fc_0.tmp_0") is main.block(1).var("fc_0.tmp_0")
