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
