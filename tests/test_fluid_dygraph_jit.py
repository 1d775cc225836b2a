"""fluid.dygraph's ways to static programs (Paddle 1.8): TracedLayer, declarative,
dygraph_to_static_func, ProgramTranslator, and the Tracer that runs single ops."""

from __future__ import annotations

import numpy as np
import pytest
from dygraph_helpers import fresh_mode_and_names  # noqa: F401  (autouse)

import fleetgraph.fluid as fluid
from fleetgraph.dygraph.tensor import Tensor

dygraph = fluid.dygraph
rng = np.random.default_rng(3)


class MLP(dygraph.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = dygraph.Linear(4, 8, act="relu")
        self.fc2 = dygraph.Linear(8, 2)

    def forward(self, x):
        return self.fc2(self.fc1(x))


def test_traced_layer_gives_the_layers_outputs_and_runs_them_as_a_program(tmp_path):
    x = rng.standard_normal((3, 4)).astype("float32")
    with dygraph.guard():
        model = MLP()
        out, traced = dygraph.TracedLayer.trace(model, [dygraph.to_variable(x)])
        (static_out,) = traced([x])
        np.testing.assert_allclose(static_out, out.numpy(), rtol=1e-5)
        assert [op.type for op in traced.program.global_block().ops].count("matmul") == 2
        model.fc2.bias.set_value(np.ones([2], "float32"))  # the program reads the current parameters
        np.testing.assert_allclose(traced([x])[0], model(dygraph.to_variable(x)).numpy(), rtol=1e-5)
        traced.save_inference_model(str(tmp_path / "infer"))
        expected = model(dygraph.to_variable(x)).numpy()
        with pytest.raises(Exception, match="already ran"):
            traced.set_strategy(fluid.BuildStrategy())
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(fluid.Scope()):
        program, feeds, fetches = fluid.io.load_inference_model(str(tmp_path / "infer"), exe)
        (loaded,) = exe.run(program, feed={feeds[0]: x}, fetch_list=fetches)
    np.testing.assert_allclose(loaded, expected, rtol=1e-5)


def test_declarative_runs_a_function_as_its_program_with_the_same_values():
    @dygraph.declarative
    def clipped_sum(x):
        y = fluid.layers.reduce_sum(x)
        if y > 0:
            y = y * 2
        return y

    with dygraph.guard():
        for sign in (1.0, -1.0):
            x = dygraph.to_variable(np.full([2, 2], sign, "float32"))
            out = clipped_sum(x)
            assert isinstance(out, Tensor)
            np.testing.assert_allclose(out.numpy().reshape(-1), [8.0 if sign > 0 else -4.0])
        assert "convert_ifelse" in clipped_sum.code or "cond" in clipped_sum.code


def test_dygraph_to_static_func_builds_control_flow_outside_imperative_mode_and_runs_as_written_inside():
    @dygraph.dygraph_to_static_func
    def double_positive(x):
        if fluid.layers.reduce_sum(x) > 0:
            x = x * 2
        return x

    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        out = double_positive(fluid.data("x", [2], "float32"))
    assert "conditional_block" in [op.type for op in main.global_block().ops]
    exe = fluid.Executor(fluid.CPUPlace())
    for value, expect in (([1.0, 2.0], [2.0, 4.0]), ([-1.0, -2.0], [-1.0, -2.0])):
        (got,) = exe.run(main, feed={"x": np.array(value, "float32")}, fetch_list=[out])
        np.testing.assert_allclose(got, expect)
    with dygraph.guard():
        np.testing.assert_allclose(double_positive(dygraph.to_variable(np.ones([2], "float32"))).numpy(), [2, 2])
    assert dygraph.ProgramTranslator() is dygraph.ProgramTranslator()


def test_tracer_runs_an_op_recording_it_only_in_train_mode():
    with dygraph.guard():
        x = dygraph.to_variable(np.array([1.0, 2.0], "float32"))
        x.stop_gradient = False
        tracer = dygraph.tracer.Tracer()
        out = Tensor()
        tracer.trace_op("scale", {"X": x}, {"Out": out}, {"scale": 3.0})
        np.testing.assert_allclose(out.numpy(), [3.0, 6.0])
        out.backward()
        np.testing.assert_allclose(x.gradient(), [3.0, 3.0])
        tracer.eval_mode()
        quiet = Tensor()
        tracer.trace_op("scale", {"X": [x]}, {"Out": [quiet]}, {"scale": 3.0})
        assert quiet.stop_gradient
