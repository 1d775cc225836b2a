"""Paddle 2.0's smaller namespaces: paddle.jit's conversion switches and logging, paddle.utils'
helpers and paddle.static's program-level functions, in dynamic and static mode."""

from __future__ import annotations

import logging

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
