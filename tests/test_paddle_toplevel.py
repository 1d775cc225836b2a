"""Paddle 2.0's top-level device queries, random-state helpers and printing options as its CPU build
gives them; paddle.grad, paddle.create_parameter; the names fleetgraph lacks say why."""

from __future__ import annotations

import numpy as np
import pytest

import fleetgraph as paddle
from fleetgraph import absent


def test_device_queries_and_cuda_random_state_of_a_cpu_build():
    assert paddle.is_compiled_with_xpu() is False and paddle.get_cudnn_version() is None
    state = paddle.get_cuda_rng_state()
    assert state == []
    paddle.set_cuda_rng_state(state)
    with pytest.raises(ValueError, match="cuda device count"):
        paddle.set_cuda_rng_state([object()])
    with pytest.raises(ValueError, match="CUDAPinnedPlace"):
        paddle.CUDAPinnedPlace()


def test_set_printoptions_changes_how_tensors_print():
    paddle.disable_static()
    t = paddle.to_tensor(np.array([1.123456789, 2.0, 3.0], np.float32))
    try:
        paddle.set_printoptions(precision=2)
        assert "1.12" in repr(t) and "1.1234" not in repr(t)
        paddle.set_printoptions(sci_mode=True)
        assert "1.12e+00" in repr(t)
        paddle.set_printoptions(threshold=2, edgeitems=1, sci_mode=False)
        assert "..." in repr(paddle.to_tensor(np.arange(10.0)))
    finally:
        from fleetgraph.dygraph import tensor

        tensor._PRINT_OPTIONS.clear()
    with pytest.raises(TypeError, match="precision"):
        paddle.set_printoptions(precision=1.5)


def test_grad_and_create_parameter():
    paddle.disable_static()
    x = paddle.to_tensor(np.array([1.0, 2.0, 3.0], np.float32), stop_gradient=False)
    (dx,) = paddle.grad([(x * x).sum()], [x])
    np.testing.assert_allclose(dx.numpy(), [2.0, 4.0, 6.0])
    w = paddle.create_parameter([2, 3], "float32", default_initializer=paddle.nn.initializer.Constant(0.5))
    np.testing.assert_allclose(w.numpy(), np.full((2, 3), 0.5))
    paddle.monkey_patch_math_varbase()
    paddle.monkey_patch_variable()


def test_names_fleetgraph_lacks_say_why():
    for name, reason in (("XPUPlace", "Kunlun"), ("real", "complex")):
        with pytest.raises(absent.NotInFleetgraph, match=reason):
            getattr(paddle, name)
