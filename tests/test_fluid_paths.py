"""The module paths and small APIs Fluid scripts reach for, each doing what Paddle's does."""

from __future__ import annotations

import numpy as np
import pytest

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.ir import Program, ShapeError, program_guard, unique_name


def _run(build, feed=None):
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        fetch = build()
    exe = fluid.Executor()
    scope = paddle.static.Scope()
    exe.run(startup, scope=scope)
    return exe.run(main, feed=feed or {}, fetch_list=list(fetch), scope=scope)


def test_fluid_framework_holds_the_program_classes():
    from fleetgraph.fluid.framework import (
        Parameter,
        Program,
        Variable,
        default_main_program,
        in_dygraph_mode,
        program_guard,
    )

    assert Program is paddle.static.Program and Variable is paddle.static.Variable and Parameter
    assert callable(default_main_program) and callable(program_guard) and in_dygraph_mode() is False


def test_ps_dispatchers_have_paddles_surface():
    from fleetgraph.fluid.transpiler.distribute_transpiler import DistributeTranspiler
    from fleetgraph.fluid.transpiler.ps_dispatcher import HashName, RoundRobin

    assert DistributeTranspiler is fluid.DistributeTranspiler
    rr = RoundRobin(["a:1", "b:1", "c:1"])
    assert rr.eps == ["a:1", "b:1", "c:1"]
    assert rr.dispatch(["w", "b"]) == ["a:1", "b:1"] and rr.dispatch(["v"]) == ["c:1"]  # the turn carries over
    rr.reset()
    assert rr.dispatch(["w"]) == ["a:1"]
    hashed = HashName(["a:1", "b:1"]).dispatch(["fc_0.w_0", "fc_0.b_0"])
    assert hashed == HashName(["a:1", "b:1"]).dispatch(["fc_0.w_0", "fc_0.b_0"]) and set(hashed) <= {"a:1", "b:1"}


def test_fluid_collective_fleet_names():
    from fleetgraph.fluid.incubate.fleet.base.role_maker import UserDefinedCollectiveRoleMaker
    from fleetgraph.fluid.incubate.fleet.collective import CollectiveOptimizer, DistributedStrategy, fleet

    role = UserDefinedCollectiveRoleMaker(current_id=1, worker_endpoints=["127.0.0.1:6170", "127.0.0.1:6171"])
    assert (role.worker_index(), role.worker_num(), role.current_endpoint()) == (1, 2, "127.0.0.1:6171")
    assert role._is_collective
    fleet.init(UserDefinedCollectiveRoleMaker(0, ["127.0.0.1:6170"]))
    opt = CollectiveOptimizer(fluid.optimizer.SGD(0.1), DistributedStrategy())
    assert opt.inner_opt.get_lr() == 0.1


def test_assign_of_an_array_holds_it_in_an_assign_value_op():
    values = np.array([[1.5, -2.0], [0.25, 4.0]], dtype="float32")
    (out, ints, scalar) = _run(
        lambda: (fluid.layers.assign(values), fluid.layers.assign(np.arange(3)), fluid.layers.assign(2.5))
    )
    np.testing.assert_array_equal(out, values)
    assert ints.dtype == np.int64 and ints.tolist() == [0, 1, 2]
    assert scalar.dtype == np.float32 and float(scalar) == 2.5
    with pytest.raises(TypeError, match="a complex128 array cannot be held"):
        _run(lambda: (fluid.layers.assign(np.array([1j])),))


def test_fill_constant_batch_size_like_takes_the_batch_of_its_input():
    x = np.zeros((5, 3), "float32")

    def build():
        data = fluid.data(name="x", shape=[None, 3])
        return (fluid.layers.fill_constant_batch_size_like(data, [-1, 2], "int64", 7),)

    (out,) = _run(build, {"x": x})
    assert out.shape == (5, 2) and out.dtype == np.int64 and (out == 7).all()


def test_variable_slicing_is_one_slice_op_that_drops_int_axes():
    x = np.arange(24, dtype="float32").reshape(2, 4, 3)

    def build():
        data = fluid.data(name="x", shape=[None, 4, 3])
        return data[:, 0:2], data[1], data[..., -1], data[0, 1:, :2]

    got = _run(build, {"x": x})
    for value, want in zip(got, (x[:, 0:2], x[1], x[..., -1], x[0, 1:, :2])):
        np.testing.assert_array_equal(value, want)
    (stepped,) = _run(lambda: (fluid.data(name="y", shape=[4])[::2],), {"y": np.arange(4, dtype="float32")})
    np.testing.assert_array_equal(stepped, [0.0, 2.0])  # a step builds one strided_slice op


def test_a_gradient_flows_through_a_slice():
    x = np.arange(6, dtype="float32").reshape(2, 3)

    def build():
        data = fluid.data(name="x", shape=[2, 3])
        data.stop_gradient = False
        loss = fluid.layers.reduce_sum(data[:, 1:] * 2.0)
        return fluid.gradients(loss, [data])

    (grad,) = _run(build, {"x": x})
    np.testing.assert_array_equal(grad, [[0, 2, 2], [0, 2, 2]])


def test_prune_with_input_keeps_what_the_targets_need_from_the_feeds():
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = fluid.data(name="x", shape=[None, 3])
        hidden = fluid.layers.fc(x, 4)
        out = fluid.layers.fc(hidden, 2)
        fluid.layers.mean(out)
    pruned = main._prune_with_input([hidden.name], [out])
    assert [op.type for op in pruned.global_block().ops] == ["mul", "elementwise_add"]
    assert [op.idx for op in main.global_block().ops] == list(range(len(main.global_block().ops)))


def test_fluid_layers_data_takes_any_shape_its_ops_can_run_while_fluid_data_checks():
    """Paddle 1.x checks feeds only of fluid.data (need_check_feed); layers.data's go as they are."""
    x = np.ones((2, 1, 3), "float32")
    (out,) = _run(lambda: (fluid.layers.scale(fluid.layers.data(name="x", shape=[3]), 2.0),), {"x": x})
    assert out.shape == (2, 1, 3) and (out == 2).all()
    with pytest.raises(ShapeError, match="feed 'y': expected shape"):
        _run(lambda: (fluid.layers.scale(fluid.data(name="y", shape=[None, 3]), 2.0),), {"y": x})
    main, startup = Program(), Program()
    with program_guard(main, startup):
        fluid.data(name="z", shape=[None, 3])
    assert main.clone().global_block().var("z").need_check_feed
