"""The IR: building programs, names, printing, cloning, and the errors raised while building."""

from __future__ import annotations

import pytest
from models import fit_a_line_2x, fit_a_line_fluid, mlp

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.ir import (
    FleetgraphError,
    OpRole,
    Program,
    ShapeError,
    UnknownNameError,
    VerifyError,
    op_summary,
    program_guard,
    unique_name,
    verify,
)


def test_fit_a_line_op_sequence_matches_paddle_reference():
    """PaddlePaddle 3.3.1's for the 2.x spelling (paddle.mean: reduce_mean); Paddle 1.x and 2.x's
    Fluid layers.mean is one `mean` op (fluid/layers/nn.py's mean appends type="mean")."""
    main, startup, *_ = fit_a_line_2x()
    assert op_summary(main) == (
        "block0: mul elementwise_add elementwise_sub square reduce_mean fill_constant "
        "reduce_mean_grad square_grad elementwise_sub_grad elementwise_add_grad mul_grad "
        "sgd sgd"
    )
    assert op_summary(startup) == "block0: uniform_random fill_constant fill_constant"
    fluid_main, *_ = fit_a_line_fluid()
    assert op_summary(fluid_main) == (
        "block0: mul elementwise_add elementwise_sub square mean fill_constant "
        "mean_grad square_grad elementwise_sub_grad elementwise_add_grad mul_grad "
        "sgd sgd"
    )


def test_names_follow_paddle_conventions():
    main, _, x, y, loss = fit_a_line_2x()
    names = set(main.global_block().vars)
    assert {"fc_0.w_0", "fc_0.b_0", "fc_0.w_0@GRAD", "fc_0.b_0@GRAD", "learning_rate_0"} <= names
    assert [p.name for p in main.all_parameters()] == ["fc_0.w_0", "fc_0.b_0"]


def test_ops_carry_op_role_and_op_role_var():
    main, *_ = fit_a_line_2x()
    ops = main.global_block().ops
    roles = {op.type: op.attrs["op_role"] for op in ops}
    assert roles["mul"] == OpRole.Forward
    assert roles["reduce_mean"] == OpRole.Forward | OpRole.Loss
    assert roles["fill_constant"] == OpRole.Backward | OpRole.Loss
    assert roles["mul_grad"] == OpRole.Backward
    sgd = [op for op in ops if op.type == "sgd"]
    assert [op.attrs["op_role_var"] for op in sgd] == [["fc_0.b_0", "fc_0.b_0@GRAD"], ["fc_0.w_0", "fc_0.w_0@GRAD"]]
    assert all(op.attrs["op_role"] == OpRole.Optimize for op in sgd)
    mul_grad = next(op for op in ops if op.type == "mul_grad")
    assert mul_grad.attrs["op_role_var"] == ["fc_0.w_0", "fc_0.w_0@GRAD"]


def test_to_string_reads_like_paddle():
    main, *_ = fit_a_line_2x()
    text = main.to_string()
    assert "var x : LOD_TENSOR.shape(-1, 13).dtype(float32).stop_gradient(True)" in text
    assert "persist trainable param fc_0.w_0 : LOD_TENSOR.shape(13, 1).dtype(float32)" in text
    assert "{Out=['fc_0.tmp_0']} = mul(inputs={X=['x'], Y=['fc_0.w_0']}" in text


def test_fluid_data_prepends_batch_dimension_and_static_data_does_not():
    main = Program()
    with program_guard(main, Program()):
        a = fluid.layers.data(name="a", shape=[13])
        b = paddle.static.data(name="b", shape=[None, 13])
        c = fluid.layers.data(name="c", shape=[-1, 4], append_batch_size=True)
    assert a.shape == (-1, 13) and b.shape == (-1, 13) and c.shape == (-1, 4)
    assert a.stop_gradient and a.is_data


def test_unique_name_guard_restarts_numbering():
    with unique_name.guard():
        first = unique_name.generate("fc")
    with unique_name.guard():
        again = unique_name.generate("fc")
    assert first == again == "fc_0"
    assert paddle.utils.unique_name is fluid.unique_name


def test_clone_is_exact_and_independent():
    main, *_ = fit_a_line_2x()
    copy = main.clone()
    assert copy.to_string() == main.to_string()
    copy.global_block().ops.pop()
    assert len(copy.global_block().ops) == len(main.global_block().ops) - 1


def test_clone_for_test_keeps_forward_ops_and_sets_is_test():
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = paddle.static.data(name="x", shape=[None, 4])
        h = fluid.layers.dropout(fluid.layers.fc(x, size=3), dropout_prob=0.5)
        loss = paddle.mean(h)
        test_prog = main.clone(for_test=True)
        paddle.optimizer.SGD(0.1).minimize(loss)
    after = main.clone(for_test=True)
    assert op_summary(after) == op_summary(test_prog) == "block0: mul elementwise_add dropout reduce_mean"
    assert next(op for op in after.global_block().ops if op.type == "dropout").attrs["is_test"] is True


def test_unknown_op_type_lists_close_matches():
    with pytest.raises(UnknownNameError, match="unknown op type 'elementwise_ad'; did you mean 'elementwise_add'"):
        Program().global_block().append_op("elementwise_ad")


def test_unknown_attr_and_slot_are_rejected_when_building():
    block = Program().global_block()
    block.create_var("x", [2, 3])
    block.create_var("y", [2, 3])
    with pytest.raises(UnknownNameError, match="scale: unknown attr 'scal'; did you mean 'scale'"):
        block.append_op("scale", {"X": ["x"]}, {"Out": ["y"]}, {"scal": 2.0})
    with pytest.raises(UnknownNameError, match="scale: unknown input slot 'Input'"):
        block.append_op("scale", {"Input": ["x"]}, {"Out": ["y"]})
    with pytest.raises(UnknownNameError, match="unknown variable 'z'"):
        block.append_op("scale", {"X": ["z"]}, {"Out": ["y"]})


def test_shape_mismatch_is_raised_at_build_time_naming_op_and_variables():
    main = Program()
    with program_guard(main, Program()):
        x = paddle.static.data(name="x", shape=[None, 13])
        w = paddle.static.data(name="w", shape=[12, 1])
        with pytest.raises(
            ShapeError,
            match=r"mul: X 'x' \[-1, 13\] flattens to width 13 but Y 'w' \[12, 1\] "
            r"has height 12",
        ):
            fluid.layers.mul(x, w)
        a = paddle.static.data(name="a", shape=[None, 3])
        b = paddle.static.data(name="b", shape=[None, 4])
        with pytest.raises(
            ShapeError,
            match=r"elementwise_add: cannot broadcast Y 'b' and X 'a': \[-1, 4\] into "
            r"\[-1, 3\]",
        ):
            paddle.add(a, b)


def test_dtype_mismatch_is_raised_at_build_time():
    main = Program()
    with program_guard(main, Program()):
        a = paddle.static.data(name="a", shape=[3], dtype="float32")
        b = paddle.static.data(name="b", shape=[3], dtype="int64")
        with pytest.raises(ShapeError, match="X 'a' is float32 but Y 'b' is int64"):
            paddle.add(a, b)


def test_loss_must_depend_on_a_parameter():
    main = Program()
    with program_guard(main, Program()):
        x = paddle.static.data(name="x", shape=[None, 3])
        with pytest.raises(FleetgraphError, match="does not depend on any trainable variable"):
            paddle.optimizer.SGD(0.1).minimize(paddle.mean(x))


def test_verify_passes_on_built_programs():
    for build in (fit_a_line_2x, fit_a_line_fluid):
        main, startup, *_ = build()
        verify(main)
        verify(startup)
    main, startup, *_ = mlp(lambda: paddle.optimizer.Adam(0.001), hidden=(8,))
    verify(main)


def test_verify_rejects_a_read_before_write_and_shows_the_ops_around_it():
    main, *_ = fit_a_line_2x()
    ops = main.global_block().ops
    ops[0], ops[1] = ops[1], ops[0]  # elementwise_add now reads fc_0.tmp_0 before mul writes it
    with pytest.raises(VerifyError) as err:
        verify(main)
    message = str(err.value)
    assert "block 0 op 0 (elementwise_add): input X reads 'fc_0.tmp_0' before any op writes it" in message
    assert ">> 0: {Out=['fc_0.tmp_1']} = elementwise_add" in message


def test_verify_rejects_bad_attr_types_and_unknown_ops():
    main, *_ = fit_a_line_2x()
    main.global_block().ops[0].attrs["x_num_col_dims"] = "1"
    with pytest.raises(VerifyError, match="attr 'x_num_col_dims': expected int, got str '1'"):
        verify(main)
    main, *_ = fit_a_line_2x()
    main.global_block().ops[0].type = "mull"
    with pytest.raises(VerifyError, match="unknown op type; did you mean 'mul'"):
        verify(main)


def test_program_version_changes_with_every_edit():
    main, *_ = fit_a_line_2x()
    v = main._version
    main.global_block().create_var("extra", [1])
    assert main._version > v


def test_endpoints_are_host_colon_port_with_ipv6_in_brackets():
    from fleetgraph.ir.endpoints import endpoint_problem

    assert [endpoint_problem(e) for e in ("127.0.0.1:6174", "node1:6170", "[::1]:6174")] == ["", "", ""]
    assert endpoint_problem("127.0.0.1:6174:6174").startswith("has a ':' in its host '127.0.0.1:6174'")
    assert endpoint_problem("::1:6174").startswith("has a ':' in its host '::1'")
    assert endpoint_problem("[zz]:5") == "names [zz], which is not an IPv6 address"
    assert endpoint_problem("h:0") == "has port '0', expected one in 1..65535"
    assert endpoint_problem("h:70000") == "has port '70000', expected one in 1..65535"
    assert endpoint_problem("h") == "is not ip:port"
