"""`run_check`: a new install trains a tiny model on one place and on two, and says whether it works."""

from __future__ import annotations

import logging

import numpy as np


def _build(data_parallel: bool):
    from .. import layers, optimizer
    from ..executor import CPUPlace, Executor, Scope, scope_guard
    from ..initializer import Constant
    from ..ir import Program, program_guard, unique_name
    from ..param_attr import ParamAttr
    from ..static import CompiledProgram
    from ..transpiler.backward import append_backward

    main, startup, scope = Program(), Program(), Scope()
    with scope_guard(scope), program_guard(main, startup), unique_name.guard():
        inp = layers.data(name="inp", shape=[2, 2], append_batch_size=False, dtype="float32")
        out = layers.fc(inp, size=3, param_attr=ParamAttr(initializer=Constant(0.1)), bias_attr=False)
        loss = layers.reduce_sum(out)
        exe = Executor(CPUPlace())
        if not data_parallel:
            weight, grad = append_backward(loss)[0]
            exe.run(startup)
            return exe.run(main, feed={"inp": _INPUT}, fetch_list=[loss, grad])
        optimizer.SGD(learning_rate=0.01).minimize(loss)
        exe.run(startup)
        compiled = CompiledProgram(main).with_data_parallel(loss_name=loss.name, places=[CPUPlace(), CPUPlace()])
        return exe.run(compiled, feed={"inp": np.concatenate([_INPUT, _INPUT])}, fetch_list=[loss])


_INPUT = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)


def run_check() -> None:
    """Run a forward and backward pass on one CPU place and a data-parallel step on two, checking the
    values against NumPy, and print what works (Paddle's messages), as `fluid.install_check.run_check`."""
    print("Running Verify Fluid Program ... ")
    loss, grad = _build(data_parallel=False)
    # out = inp @ W with W all 0.1: the sum is 0.1 * 3 * sum(inp); d sum / dW[i, j] = column sum i of inp
    expected_grad = np.repeat(_INPUT.sum(axis=0)[:, None], 3, axis=1)
    if not np.allclose(loss, 0.3 * _INPUT.sum(), rtol=1e-5) or not np.allclose(grad, expected_grad, rtol=1e-5):
        raise RuntimeError(
            f"run_check: a one-layer model gave loss {loss} and gradient {grad}; expected "
            f"{0.3 * _INPUT.sum()} and {expected_grad.tolist()}: this install computes wrong values"
        )
    print("Your Paddle Fluid works well on SINGLE GPU or CPU.")
    try:
        _build(data_parallel=True)
    except Exception as e:  # report, as Paddle's: one place works, several do not
        logging.warning("Your Paddle Fluid has some problem with multiple places: %s: %s", type(e).__name__, e)
        return
    print("Your Paddle Fluid works well on MUTIPLE GPU or CPU.")
    print("Your Paddle Fluid is installed successfully! Let's start deep Learning with Paddle Fluid now")
