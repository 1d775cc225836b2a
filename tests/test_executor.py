"""The executor: feeds and fetches, plans cached per program version, scopes, and clear errors."""

from __future__ import annotations

import numpy as np
import pytest
from models import fit_a_line_2x

import fleetgraph as paddle
from fleetgraph.ir import DTypeError, FleetgraphError, KernelError, Program, ShapeError, program_guard, unique_name

XB = np.ones((4, 13), dtype="float32")
YB = np.ones((4, 1), dtype="float32")


@pytest.fixture
def fit():
    main, startup, x, y, loss = fit_a_line_2x()
    exe = paddle.static.Executor(paddle.CPUPlace())
    scope = paddle.static.Scope()
    exe.run(startup, scope=scope)
    return exe, scope, main, loss


def test_feed_of_wrong_shape_names_the_variable(fit):
    exe, scope, main, loss = fit
    with pytest.raises(ShapeError, match=r"feed 'x': expected shape \[-1, 13\] float32, got \(4, 12\) float32"):
        exe.run(main, feed={"x": np.ones((4, 12), "float32"), "y": YB}, scope=scope)


def test_feed_of_wrong_dtype_names_the_variable(fit):
    exe, scope, main, loss = fit
    with pytest.raises(DTypeError, match=r"feed 'x': expected shape \[-1, 13\] float32, got \(4, 13\) float64"):
        exe.run(main, feed={"x": np.ones((4, 13)), "y": YB}, scope=scope)


def test_feed_of_a_list_is_converted_to_the_variable_dtype(fit):
    exe, scope, main, loss = fit
    (out,) = exe.run(main, feed={"x": XB.tolist(), "y": YB.tolist()}, fetch_list=[loss], scope=scope)
    assert out.dtype == np.float32 and out.shape == (1,)


def test_feed_of_unknown_variable_lists_close_names(fit):
    exe, scope, main, loss = fit
    with pytest.raises(FleetgraphError, match="feed 'xx': no such variable in the program; did you mean 'x'"):
        exe.run(main, feed={"xx": XB, "y": YB}, scope=scope)


def test_fetch_of_missing_variable_is_one_clear_error(fit):
    exe, scope, main, loss = fit
    with pytest.raises(FleetgraphError, match="fetch 'fc_0.w_9': no such variable in the program; did you mean"):
        exe.run(main, feed={"x": XB, "y": YB}, fetch_list=["fc_0.w_9"], scope=scope)


def test_missing_feed_reports_op_and_input(fit):
    exe, scope, main, loss = fit
    with pytest.raises(KernelError, match=r"op 2 \(elementwise_sub\) in block 0 .*input 'y' has no value"):
        exe.run(main, feed={"x": XB}, scope=scope)


def test_running_main_before_startup_says_so():
    main, startup, x, y, loss = fit_a_line_2x()
    with pytest.raises(KernelError, match="'fc_0.w_0' has no value; feed it, or run the startup program first"):
        paddle.static.Executor().run(main, feed={"x": XB, "y": YB}, scope=paddle.static.Scope())


def test_exception_inside_a_kernel_names_op_and_inputs():
    main = Program()
    with program_guard(main, Program()):
        x = paddle.static.data(name="x", shape=[None, 3], dtype="float32")
        label = paddle.static.data(name="label", shape=[None, 1], dtype="int64")
        out = paddle.nn.functional.cross_entropy(x, label)
    with pytest.raises(
        KernelError,
        match=r"op 0 \(softmax_with_cross_entropy\) .* Logits='x' \[2, 3\] float32, "
        r"Label='label' \[2, 1\] int64: IndexError",
    ):
        paddle.static.Executor().run(
            main, feed={"x": np.ones((2, 3), "float32"), "label": np.array([[0], [7]], "int64")}, fetch_list=[out]
        )


def test_fetched_values_are_copies(fit):
    exe, scope, main, loss = fit
    (w_before,) = exe.run(main, feed={"x": XB, "y": YB}, fetch_list=["fc_0.w_0"], scope=scope)
    snapshot = w_before.copy()
    exe.run(main, feed={"x": XB, "y": YB}, scope=scope)
    np.testing.assert_array_equal(w_before, snapshot)


def test_plan_is_cached_until_the_program_changes(fit):
    exe, scope, main, loss = fit
    exe.run(main, feed={"x": XB, "y": YB}, scope=scope)
    plan = exe.plans.get(main)
    assert exe.plans.get(main) is plan
    with program_guard(main):
        paddle.scale(loss, 2.0)
    assert exe.plans.get(main) is not plan


def test_temporaries_do_not_leak_into_the_scope(fit):
    exe, scope, main, loss = fit
    exe.run(main, feed={"x": XB, "y": YB}, scope=scope)
    assert set(scope.vars) == {"fc_0.w_0", "fc_0.b_0", "learning_rate_0"}


def test_scope_api_reads_and_sets_tensors(fit):
    exe, scope, main, loss = fit
    tensor = scope.find_var("fc_0.b_0").get_tensor()
    tensor.set(np.array([3.0], "float32"), paddle.CPUPlace())
    assert np.array(tensor).tolist() == [3.0]
    assert scope.find_var("nope") is None
    with paddle.static.scope_guard(scope):
        assert paddle.static.global_scope() is scope


def test_random_init_is_seeded_per_program_and_distinct_per_op():
    main, startup = Program(), Program()
    startup.random_seed = 11
    with program_guard(main, startup), unique_name.guard():
        x = paddle.static.data(name="x", shape=[None, 8])
        paddle.static.nn.fc(paddle.static.nn.fc(x, 8), 8)
    values = []
    for _ in range(2):
        scope = paddle.static.Scope()
        paddle.static.Executor().run(startup, scope=scope)
        values.append((np.array(scope.vars["fc_0.w_0"]), np.array(scope.vars["fc_1.w_0"])))
    np.testing.assert_array_equal(values[0][0], values[1][0])
    assert not np.array_equal(values[0][0], values[0][1])


def test_cuda_place_without_gpu_is_a_clear_error():
    with pytest.raises(RuntimeError, match=r"CUDAPlace\(0\): .*; use CPUPlace\(\)"):  # why: tests/test_place.py
        paddle.static.Executor(paddle.CUDAPlace(0))


def test_a_fetched_single_value_indexes_and_formats_like_a_number(fit):
    """Seed 001 prints `loss[0]`, seed 003 formats `"%f" % loss`: both work on one fetched value."""
    exe, scope, main, loss = fit
    out, w = exe.run(main, feed={"x": XB, "y": YB}, fetch_list=[loss, "fc_0.w_0"], scope=scope)
    assert out.shape == (1,) and "%.4f" % out == "%.4f" % out[0] and float(out) == float(out[0])  # noqa: UP031
    assert repr(out).startswith("array(") and type(w) is np.ndarray  # larger values stay plain arrays
