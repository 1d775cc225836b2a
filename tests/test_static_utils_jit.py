"""Paddle 2.0's smaller namespaces: paddle.jit's conversion switches and logging, paddle.utils'
helpers and paddle.static's program-level functions, in dynamic and static mode."""

from __future__ import annotations

import json
import logging
import sys

import numpy as np
import pytest
from dygraph_helpers import fresh_mode_and_names  # noqa: F401  (autouse)

import fleetgraph as paddle
from fleetgraph.jit import ProgramTranslator, logging_utils


@pytest.fixture
def quiet_translator():
    yield
    paddle.jit.set_verbosity(None)
    paddle.jit.set_code_level(None)


def _branchy(x):
    if paddle.mean(x) < 0:
        return x - 1
    return x + 1


def test_not_to_static_function_runs_as_written_inside_to_static():
    @paddle.jit.not_to_static
    def minus_one(x):
        return x - 1

    @paddle.jit.to_static
    def func(x):
        if paddle.mean(x) < 0:
            out = minus_one(x)
        else:
            out = x + 1
        return out

    np.testing.assert_allclose(func(paddle.ones([1, 2], dtype="float32")).numpy(), [[2.0, 2.0]])
    np.testing.assert_allclose(func(-paddle.ones([1, 2], dtype="float32")).numpy(), [[-2.0, -2.0]])


def test_not_to_static_function_is_left_unconverted_by_the_translator():
    marked = paddle.jit.not_to_static(_branchy)
    assert marked is _branchy
    assert ProgramTranslator().get_func(marked) is _branchy
    assert "convert_ifelse" in ProgramTranslator().get_code(_branchy)


def test_set_verbosity_and_code_level_log_the_conversion(caplog, quiet_translator):
    def doubled(x):
        if paddle.mean(x) > 0:
            x = x * 2
        return x

    paddle.jit.set_verbosity(1)
    paddle.jit.set_code_level()
    with caplog.at_level(logging.INFO, logger="Dynamic-to-Static"):
        ProgramTranslator().get_func(doubled)
    text = caplog.text
    assert "(Level 1) Convert callable object: convert" in text and "doubled" in text
    assert "the transformed code:" in text and "convert_ifelse" in text


def test_set_verbosity_wins_over_the_environment(monkeypatch, quiet_translator):
    paddle.jit.set_verbosity(None)
    monkeypatch.setenv("TRANSLATOR_VERBOSITY", "3")
    assert logging_utils.get_verbosity() == 3
    paddle.jit.set_verbosity(1)
    assert logging_utils.get_verbosity() == 1
    with pytest.raises(NotImplementedError, match="set_code_level: level 2"):
        paddle.jit.set_code_level(2)
    with pytest.raises(TypeError):
        paddle.jit.set_verbosity("1")


def _sgd_steps(steps: int):
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [None, 4], "float32")
        loss = paddle.fluid.layers.mean(paddle.static.nn.fc(x, 3))
        paddle.optimizer.SGD(0.1).minimize(loss)
    exe, scope = paddle.static.Executor(paddle.CPUPlace()), paddle.static.Scope()
    exe.run(startup, scope=scope)
    return lambda: exe.run(main, feed={"x": np.ones((2, 4), np.float32)}, scope=scope)


def test_profiler_records_the_batches_of_its_range(tmp_path, capsys):
    paddle.enable_static()
    step = _sgd_steps(1)
    path = tmp_path / "profile.json"
    options = paddle.utils.ProfilerOptions({"state": "CPU", "sorted_key": "calls", "batch_range": [2, 4]})
    options.options["profile_path"] = str(path)
    assert options["timeline_path"] is None and options["batch_range"] == [2, 4]
    with paddle.utils.Profiler(options=options) as prof:
        assert paddle.utils.get_profiler() is prof
        for _ in range(6):
            step()
            prof.record_step()
    out = capsys.readouterr().out
    assert "Sorted by number of calls in descending order" in out
    events = [e for e in json.loads(path.read_text())["traceEvents"] if e.get("name") == "mul"]
    assert len(events) == 2  # batches 3 and 4: recording starts after batch 2, stops after batch 4
    with pytest.raises(NotImplementedError, match="timeline_path"):
        paddle.utils.ProfilerOptions({"timeline_path": "/somewhere"})


def test_deprecated_adds_paddles_notice_to_the_docstring():
    @paddle.utils.deprecated(update_to="paddle.add", since="2.0.0", reason="renamed")
    def old_add(x, y):
        """Add."""
        return x + y

    assert old_add.__doc__.startswith('\n\nWarning: API "')
    assert 'old_add" is deprecated since 2.0.0, and will be removed in future versions.' in old_add.__doc__
    assert 'Please use "paddle.add" instead.\n reason: renamed\nAdd.' in old_add.__doc__
    assert old_add(1, 2) == 3
    with pytest.raises(ValueError, match="must start with"):
        paddle.utils.deprecated(update_to="numpy.add")


def test_try_import_names_the_package_to_install(monkeypatch):
    assert paddle.utils.try_import("json").dumps([1]) == "[1]"
    with pytest.raises(ImportError, match=r"pip install no_such_module_fg"):
        paddle.utils.try_import("no_such_module_fg.sub")
    monkeypatch.setitem(sys.modules, "cv2", None)  # as if opencv were not installed
    with pytest.raises(ImportError, match=r"pip install opencv-python"):
        paddle.utils.try_import("cv2")


def test_require_version_and_run_check(capsys):
    paddle.utils.require_version("1.8.0", "2.0.0")
    with pytest.raises(Exception, match="VersionError"):
        paddle.utils.require_version("2.1")
    paddle.utils.run_check()
    assert "works well on SINGLE GPU or CPU" in capsys.readouterr().out


def _fc_model():
    """A static fc model with its startup run in the global scope: (main, x, out, exe)."""
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup), paddle.utils.unique_name.guard():
        x = paddle.static.data("x", [None, 4], "float32")
        hidden = paddle.static.nn.fc(x, 3)
        out = paddle.fluid.layers.reduce_sum(hidden, dim=1)
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    return main, x, out, exe


_FEED = np.arange(8, dtype="float32").reshape(2, 4)


def test_serialized_program_and_persistables_round_trip_through_a_file(tmp_path):
    main, x, out, exe = _fc_model()
    (expected,) = exe.run(main, feed={"x": _FEED}, fetch_list=[out])
    program_bytes = paddle.static.serialize_program([x], [out], program=main)
    params_bytes = paddle.static.serialize_persistables([x], [out], exe, program=main)
    assert isinstance(program_bytes, bytes) and isinstance(params_bytes, bytes)
    paddle.static.save_to_file(str(tmp_path / "model.json"), program_bytes)
    paddle.static.save_to_file(str(tmp_path / "params.npz"), params_bytes)
    program = paddle.static.deserialize_program(paddle.static.load_from_file(str(tmp_path / "model.json")))
    assert [op.type for op in program.global_block().ops] == ["mul", "elementwise_add", "reduce_sum"]
    with paddle.static.scope_guard(paddle.static.Scope()):
        paddle.static.deserialize_persistables(program, paddle.static.load_from_file(str(tmp_path / "params.npz")), exe)
        (got,) = exe.run(program, feed={"x": _FEED}, fetch_list=[out.name])
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    with pytest.raises(ValueError, match="'content' type should be bytes"):
        paddle.static.save_to_file(str(tmp_path / "x"), "text")


def test_deserialize_persistables_refuses_a_parameter_of_another_shape():
    main, x, out, exe = _fc_model()
    data = paddle.static.serialize_persistables([x], [out], exe, program=main)
    other = paddle.static.Program()
    with paddle.static.program_guard(other, paddle.static.Program()), paddle.utils.unique_name.guard():
        paddle.static.nn.fc(paddle.static.data("x", [None, 5], "float32"), 3)
    with pytest.raises(RuntimeError, match="Shape mismatch, program needs a parameter with shape"):
        paddle.static.deserialize_persistables(other, data, exe)
    with pytest.raises(ValueError, match="Paddle's protobuf programs do not load here"):
        paddle.static.deserialize_program(b"\x0a\x8f\x01protobuf")


def test_serialize_is_static_only():
    with pytest.raises(AssertionError, match="'serialize_program\\(\\)' is only supported in static graph mode"):
        paddle.static.serialize_program([], [])


def test_save_vars_load_vars_and_program_state(tmp_path):
    main, x, out, exe = _fc_model()
    (expected,) = exe.run(main, feed={"x": _FEED}, fetch_list=[out])
    params = [v for v in main.list_vars() if isinstance(v, paddle.static.Parameter)]
    paddle.static.save_vars(exe, str(tmp_path / "vars"), main, vars=params)
    paddle.static.save(main, str(tmp_path / "model"))
    scope = paddle.static.global_scope()
    for p in params:
        scope.vars[p.name] = np.zeros(p.shape, "float32")
    paddle.static.load_vars(exe, str(tmp_path / "vars"), main, vars=params)
    np.testing.assert_allclose(exe.run(main, feed={"x": _FEED}, fetch_list=[out])[0], expected, rtol=1e-6)
    state = paddle.static.load_program_state(str(tmp_path / "model"))
    assert sorted(state) == sorted(p.name for p in params)
    for p in params:
        scope.vars[p.name] = np.zeros(p.shape, "float32")
    paddle.static.set_program_state(main, state)
    np.testing.assert_allclose(exe.run(main, feed={"x": _FEED}, fetch_list=[out])[0], expected, rtol=1e-6)


def test_static_program_building_helpers():
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        counter = paddle.static.create_global_var([1], 3.0, "float32", persistable=True, name="counter")
        weight = paddle.static.create_parameter(
            [2, 2], "float32", default_initializer=paddle.fluid.initializer.Constant(0.5)
        )
        with paddle.static.device_guard("cpu"):
            total = paddle.fluid.layers.elementwise_add(paddle.fluid.layers.reduce_sum(weight), counter)
        doubled = main.global_block().create_var(name="doubled", shape=[1], dtype="float32")
        paddle.static.py_func(lambda t: np.asarray(t) * 2, total, doubled)
    assert main.global_block().ops[-2].attr("op_device") == "cpu"
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    got_total, got_doubled = exe.run(main, fetch_list=[total, doubled])
    np.testing.assert_allclose(got_total, [5.0]) and np.testing.assert_allclose(got_doubled, [10.0])
    assert isinstance(paddle.static.WeightNormParamAttr(dim=0), paddle.ParamAttr)
    assert paddle.static.InputSpec([None, 4], "float32", "x").shape == [-1, 4]


def test_accelerator_places_say_why_they_are_unavailable():
    with pytest.raises(AssertionError, match="Not compiled with XPU"):
        paddle.static.xpu_places()
    with pytest.raises(Exception, match="CUDAPlace"):
        paddle.static.cuda_places([0])


@pytest.mark.parametrize(
    "name",
    "bilinear_tensor_product conv2d_transpose conv3d conv3d_transpose create_parameter data_norm group_norm "
    "instance_norm layer_norm prelu py_func row_conv spectral_norm".split(),
)
def test_static_nn_reexports_the_fluid_layer(name):
    assert getattr(paddle.static.nn, name) is getattr(paddle.fluid.layers, name)


def test_static_nn_layer_norm_and_prelu_compute_paddles_values():
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [2, 4], "float32")
        normed = paddle.static.nn.layer_norm(x, begin_norm_axis=1)
        act = paddle.static.nn.prelu(x - 3.0, mode="all")  # alpha starts at 0.25
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    got_norm, got_act = exe.run(main, feed={"x": _FEED}, fetch_list=[normed, act])
    ref = (_FEED - _FEED.mean(1, keepdims=True)) / np.sqrt(_FEED.var(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(got_norm, ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_act, np.where(_FEED > 3, _FEED - 3, 0.25 * (_FEED - 3)), rtol=1e-6)
