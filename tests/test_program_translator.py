"""fluid.dygraph.ProgramTranslator (Paddle 1.8): get_output, get_func, get_program, get_code,
enable and save_inference_model, after Paddle 1.8.5's dygraph_to_static/test_program_translator.py
and the methods' documented examples."""

from __future__ import annotations

import numpy as np
import pytest
from dygraph_helpers import fresh_mode_and_names  # noqa: F401  (autouse)

import fleetgraph.fluid as fluid
from fleetgraph import jit
from fleetgraph.fluid.dygraph.dygraph_to_static import ProgramTranslator
from fleetgraph.ir import FleetgraphError
from fleetgraph.jit import dy2static

rng = np.random.RandomState(0)
X = rng.randn(30, 10, 32).astype("float32")
WEIGHT = rng.randn(32, 64).astype("float32")


def simple_func(x, weight_numpy):
    x = fluid.dygraph.to_variable(x)
    w = fluid.dygraph.to_variable(weight_numpy)
    y = fluid.layers.matmul(x, w)
    z = fluid.layers.mean(y)
    return z


def func_with_if(x):
    x = fluid.dygraph.to_variable(x)
    if fluid.layers.mean(x) > 0:
        x_v = x - 1
    else:
        x_v = x + 1
    return x_v


def scaled_pair(x, factor, offset=0.0):
    return fluid.layers.scale(x, factor, offset), fluid.layers.reduce_sum(x)


@pytest.fixture(autouse=True)
def translator():
    """The translator, enabled, with nothing translated yet; enabled again after."""
    translator = ProgramTranslator()
    translator.enable(True)
    dy2static.ProgramTranslator.last_translated = None
    yield translator
    translator.enable(True)


def test_get_output_enabled_and_disabled_agree(translator):
    with fluid.dygraph.guard():
        static_output = translator.get_output(simple_func, X, WEIGHT)
    translator.enable(False)
    with fluid.dygraph.guard():
        dygraph_output = translator.get_output(simple_func, X, WEIGHT)
    assert isinstance(static_output, fluid.dygraph.base.Tensor)
    np.testing.assert_allclose(static_output.numpy(), dygraph_output.numpy(), atol=1e-4)
    np.testing.assert_allclose(static_output.numpy(), [np.mean(X @ WEIGHT)], rtol=1e-4)


def test_get_output_takes_the_branch_of_each_input():
    """The documented example (ones give [[0, 0]]), and the other branch."""
    translator = ProgramTranslator()
    with fluid.dygraph.guard():
        np.testing.assert_array_equal(translator.get_output(func_with_if, np.ones([1, 2], "float32")).numpy(), [[0, 0]])
        negative = np.full([1, 2], -3.0, "float32")
        np.testing.assert_array_equal(translator.get_output(func_with_if, negative).numpy(), [[-2, -2]])


def test_get_output_keeps_python_arguments_and_gives_a_list_for_several_outputs(translator):
    x = np.arange(6, dtype="float32").reshape(2, 3)
    with fluid.dygraph.guard():
        scaled, total = translator.get_output(scaled_pair, fluid.dygraph.to_variable(x), 2.0, offset=1.0)
    np.testing.assert_allclose(scaled.numpy(), x * 2.0 + 1.0)
    np.testing.assert_allclose(total.numpy(), [15.0])


def test_get_func_converts_while_enabled_and_is_the_function_while_disabled(translator):
    with fluid.dygraph.guard():
        static_func = translator.get_func(simple_func)
        assert callable(static_func) and static_func is not simple_func
        assert isinstance(static_func(X, WEIGHT), fluid.Variable)
    translator.enable(False)
    with fluid.dygraph.guard():
        dygraph_func = translator.get_func(simple_func)
        assert dygraph_func is simple_func
        assert isinstance(dygraph_func(X, WEIGHT), fluid.dygraph.base.Tensor)


def test_get_program_gives_programs_feeds_and_fetches_that_run(translator):
    main, startup, inputs, outputs = translator.get_program(simple_func, X, WEIGHT)
    assert isinstance(main, fluid.Program) and isinstance(startup, fluid.Program)
    assert [v.name for v in inputs] == ["feed_0", "feed_1"]
    assert [list(v.shape) for v in inputs] == [[30, 10, 32], [32, 64]]
    assert len(outputs) == 1 and all(isinstance(v, fluid.Variable) for v in inputs + outputs)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    (value,) = exe.run(main, feed={"feed_0": X, "feed_1": WEIGHT}, fetch_list=outputs)
    np.testing.assert_allclose(value, [np.mean(X @ WEIGHT)], rtol=1e-4)
    translator.enable(False)
    with fluid.dygraph.guard():
        assert isinstance(translator.get_program(simple_func, X, WEIGHT), fluid.dygraph.base.Tensor)


def test_get_program_names_a_tensor_feed_after_the_tensor(translator):
    with fluid.dygraph.guard():
        x = fluid.dygraph.to_variable(np.ones([2, 3], "float32"), name="image")
        _, _, inputs, outputs = translator.get_program(scaled_pair, x, 3.0)
    assert [v.name for v in inputs] == ["image"] and len(outputs) == 2


def test_get_code_is_the_converted_source():
    code = ProgramTranslator().get_code(func_with_if)
    assert isinstance(code, str) and "def func_with_if(x)" in code and "convert_ifelse" in code


def test_one_translator_and_one_switch_with_paddle_jit(translator):
    assert ProgramTranslator() is translator is ProgramTranslator.get_instance() is fluid.dygraph.ProgramTranslator()
    jit.ProgramTranslator().enable(False)
    assert not translator.enable_to_static
    translator.enable(True)
    assert jit.ProgramTranslator().enable_to_static
    with pytest.raises(TypeError):
        translator.enable(1)


def test_save_inference_model_saves_the_program_translated_last(translator, tmp_path):
    x = np.arange(6, dtype="float32").reshape(2, 3)
    with fluid.dygraph.guard():
        scaled, _ = translator.get_output(scaled_pair, x, 2.0)
    translator.save_inference_model(str(tmp_path), fetch=[0])
    exe = fluid.Executor(fluid.CPUPlace())
    program, feed_names, fetch_vars = fluid.io.load_inference_model(str(tmp_path), exe)
    assert len(feed_names) == 1 and len(fetch_vars) == 1
    (value,) = exe.run(program, feed={feed_names[0]: x}, fetch_list=fetch_vars)
    np.testing.assert_allclose(value, scaled.numpy())


def test_save_inference_model_saves_what_declarative_translated(translator, tmp_path):
    """Paddle's documented use: a @declarative function runs, then the translator saves its program."""

    @fluid.dygraph.declarative
    def double(x):
        return fluid.layers.scale(x, 2.0)

    x = np.arange(6, dtype="float32").reshape(2, 3)
    with fluid.dygraph.guard():
        expected = double(fluid.dygraph.to_variable(x)).numpy()
    translator.save_inference_model(str(tmp_path))
    exe = fluid.Executor(fluid.CPUPlace())
    program, feed_names, fetch_vars = fluid.io.load_inference_model(str(tmp_path), exe)
    (value,) = exe.run(program, feed={feed_names[0]: x}, fetch_list=fetch_vars)
    np.testing.assert_allclose(value, expected)


def test_save_inference_model_needs_a_translated_program(translator, tmp_path):
    with pytest.raises(FleetgraphError, match="no program translated yet"):
        translator.save_inference_model(str(tmp_path))


def test_a_function_that_creates_parameters_is_refused(translator):
    def with_fc(x):
        return fluid.layers.fc(x, size=4)

    with pytest.raises(ValueError, match="created the parameters"):
        translator.get_program(with_fc, np.ones([2, 3], "float32"))


def test_a_layers_method_is_not_translated_here(translator):
    with fluid.dygraph.guard():
        linear = fluid.dygraph.Linear(3, 2)
        x = np.ones([1, 3], "float32")
        with pytest.raises(NotImplementedError, match="declarative"):
            translator.get_output(linear.forward, x)
        with pytest.raises(NotImplementedError, match="declarative"):
            translator.get_output(type(linear).forward, linear, x)
