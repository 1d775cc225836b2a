"""fluid.dygraph.StaticModelRunner (Paddle 1.8): a saved inference model loaded as a Layer gives the
program's outputs, trains its loaded parameters, and switches dropout and batch_norm by train/eval."""

from __future__ import annotations

import numpy as np
import pytest
from dygraph_helpers import fresh_mode_and_names  # noqa: F401  (autouse)

import fleetgraph.fluid as fluid

dygraph = fluid.dygraph
rng = np.random.default_rng(2)


def _save_model(path: str) -> np.ndarray:
    """An MLP with batch_norm and dropout saved as an inference model; its outputs on a batch."""
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.data("img", [None, 4])
        h = fluid.layers.batch_norm(fluid.layers.fc(x, 8, act="relu"), is_test=True)
        h = fluid.layers.dropout(h, 0.5, is_test=True)
        y = fluid.layers.fc(h, 3, act="softmax")
    exe = fluid.Executor(fluid.CPUPlace())
    batch = rng.standard_normal((5, 4)).astype("float32")
    with fluid.scope_guard(fluid.Scope()):
        exe.run(startup)
        fluid.io.save_inference_model(path, ["img"], [y], exe, main)
        (out,) = exe.run(main, feed={"img": batch}, fetch_list=[y])
    return batch, out


def test_loaded_model_in_eval_gives_the_programs_outputs(tmp_path):
    batch, expect = _save_model(str(tmp_path))
    with dygraph.guard():
        runner = dygraph.StaticModelRunner(str(tmp_path))
        runner.eval()
        np.testing.assert_allclose(runner(batch).numpy(), expect, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(runner(dygraph.to_variable(batch)).numpy(), expect, rtol=1e-5, atol=1e-6)
        names = [p.name for p in runner.parameters()]
        assert "fc_0.w_0@LOADED" in names and all(n.endswith("@LOADED") for n in names)
        with pytest.raises(TypeError, match="numpy array or a Tensor"):
            runner([1.0])


def test_loaded_model_trains_its_parameters_in_train_mode(tmp_path):
    batch, _ = _save_model(str(tmp_path))
    label = dygraph.to_variable(rng.integers(0, 3, (5, 1)).astype("int64"))
    with dygraph.guard():
        runner = dygraph.StaticModelRunner(str(tmp_path))
        assert runner.training

        def loss_of():
            return fluid.layers.mean(fluid.layers.cross_entropy(runner(batch), label))

        runner.eval()
        before = float(loss_of())
        runner.train()
        sgd = fluid.optimizer.SGD(0.5, parameter_list=runner.parameters())
        for _ in range(8):
            loss = loss_of()
            loss.backward()
            sgd.minimize(loss)
            runner.clear_gradients()
        runner.eval()
        assert float(loss_of()) < before
        moving = [p for p in runner.parameters() if p.stop_gradient]
        assert len(moving) == 2  # batch_norm's running mean and variance: written by the op, never trained
