"""paddle.jit: a dynamic Layer traced into a static Program gives the dynamic run's outputs, and
saves and loads as an inference model."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from dygraph_helpers import fresh_mode_and_names  # noqa: F401  (autouse)

import fleetgraph as paddle

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "dist_scripts"))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "examples", "resnet"))


def _pictures(n=2, size=32):
    return paddle.to_tensor(np.random.default_rng(0).normal(size=(n, 3, size, size)).astype("float32"))


@pytest.mark.parametrize("module", ["resnet_dygraph", "examples_resnet50"])
def test_to_static_resnet_program_gives_the_dynamic_outputs(module):
    if module == "examples_resnet50":  # the seed's ResNet-50 (examples/resnet/resnet_dygraph.py)
        import importlib.util

        path = os.path.join(os.path.dirname(HERE), "examples", "resnet", "resnet_dygraph.py")
        spec = importlib.util.spec_from_file_location("examples_resnet_dygraph", path)
        resnet = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(resnet)
        model = resnet.ResNet(layers=50, class_dim=10)
    else:
        import resnet_dygraph

        model = resnet_dygraph.ResNet(class_dim=10)
    x = _pictures(n=1 if module == "examples_resnet50" else 2)
    model.eval()
    dynamic = model(x).numpy()
    paddle.jit.to_static(model)
    static = model(x)
    np.testing.assert_allclose(static.numpy(), dynamic, rtol=1e-6, atol=1e-6)
    program = model._static_function.main_program
    types = [op.type for op in program.global_block().ops]
    assert types[0] == "conv2d" and "batch_norm" in types and types[-1] == "elementwise_add"
    assert all(op.type != "c_allreduce_sum" for op in program.global_block().ops)


def test_a_traced_layer_reads_the_parameters_current_values():
    fc = paddle.nn.Linear(3, 2)
    paddle.jit.to_static(fc)
    x = paddle.to_tensor(np.ones((1, 3), "float32"))
    fc(x)
    fc.weight.set_value(np.zeros((3, 2), "float32"))
    np.testing.assert_allclose(fc(x).numpy(), fc.bias.numpy()[None, :], rtol=1e-6)


class _ShiftedLinear(paddle.nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.fc = paddle.nn.Linear(2, 2)

    def forward(self, x):
        return self.fc(x) + paddle.fluid.layers.fill_constant([1], "float32", 1.5)


def test_a_traced_forward_builds_its_input_less_ops_into_the_program():
    """to_static's trace runs inside the Layer call's eager guard: a fill_constant in forward must
    still become an op of the program, not an eager Tensor beside static Variables."""
    net = _ShiftedLinear()
    x = paddle.to_tensor([[1.0, 2.0]])
    dynamic = net(x).numpy()
    paddle.jit.to_static(net)
    np.testing.assert_allclose(net(x).numpy(), dynamic, rtol=1e-6)
    assert "fill_constant" in [op.type for op in net._static_function.main_program.global_block().ops]


def test_jit_save_and_load_round_trip(tmp_path):
    import resnet_dygraph

    model = resnet_dygraph.ResNet(class_dim=5)
    model.eval()
    x = _pictures()
    want = model(x).numpy()
    path = str(tmp_path / "inference" / "resnet")
    paddle.jit.save(model, path, input_spec=[paddle.jit.InputSpec([None, 3, 32, 32], "float32")])
    assert os.path.exists(path + ".json")
    loaded = paddle.jit.load(path)
    np.testing.assert_allclose(loaded(x).numpy(), want, rtol=1e-6, atol=1e-6)


def test_a_traced_resnet_exports_to_onnx_and_runs_there_as_in_dynamic_mode():
    ort = pytest.importorskip("onnxruntime")
    import resnet_dygraph

    from fleetgraph import onnx as fg_onnx

    model = resnet_dygraph.ResNet(class_dim=5)
    model.eval()
    x = _pictures()
    want = model(x).numpy()
    traced = paddle.jit.trace(model, [paddle.jit.InputSpec([None, 3, 32, 32], "float32")])
    proto = fg_onnx.export(traced.program, traced.feed_names, traced.fetch_vars, traced.scope().vars)
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    (got,) = session.run(None, {traced.feed_names[0]: x.numpy()})
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_to_static_refuses_a_lambda():
    with pytest.raises(paddle.FleetgraphError, match="expected a paddle.nn.Layer"):
        paddle.jit.to_static(lambda x: x)


def test_two_parameters_of_one_name_trace_to_two_program_parameters(tmp_path):
    """Two halves built in separate unique_name guards both have `linear_0.w_0`: the traced program
    gives each its own parameter (before, the second read the first's values) and the output, run
    and saved with jit.save, is the eager one."""
    from fleetgraph.ir import unique_name

    with unique_name.guard():
        first = paddle.nn.Linear(3, 3)
    with unique_name.guard():
        second = paddle.nn.Linear(3, 2)
    assert first.weight.name == second.weight.name
    model = paddle.nn.Sequential(first, paddle.nn.ReLU(), second)
    x = paddle.to_tensor(np.random.default_rng(0).normal(size=(4, 3)).astype("float32"))
    want = model(x).numpy()
    paddle.jit.to_static(model)
    np.testing.assert_allclose(model(x).numpy(), want, rtol=1e-6)
    params = [p.name for p in model.forward.main_program.global_block().all_parameters()]
    assert len(params) == 4 and len(set(params)) == 4
    paddle.jit.save(model, str(tmp_path / "model"))
    np.testing.assert_allclose(paddle.jit.load(str(tmp_path / "model"))(x).numpy(), want, rtol=1e-6)


def test_paddle_jit_traced_layer_runs_and_saves_what_the_layer_computes_eagerly(tmp_path):
    """paddle.jit.TracedLayer is fluid.dygraph.TracedLayer: trace, run the program, save, load."""
    assert paddle.jit.TracedLayer is paddle.fluid.dygraph.TracedLayer
    paddle.disable_static()
    paddle.seed(2)
    layer = paddle.nn.Sequential(paddle.nn.Linear(4, 8), paddle.nn.Tanh(), paddle.nn.Linear(8, 3))
    x = np.random.default_rng(1).normal(size=(5, 4)).astype("float32")
    eager = layer(paddle.to_tensor(x)).numpy()
    out, traced = paddle.jit.TracedLayer.trace(layer, inputs=[paddle.to_tensor(x)])
    np.testing.assert_allclose(out.numpy(), eager, rtol=1e-6)
    (ran,) = traced([x])
    np.testing.assert_allclose(ran, eager, rtol=1e-5)
    traced.save_inference_model(str(tmp_path / "traced"))
    paddle.enable_static()
    exe = paddle.static.Executor(paddle.CPUPlace())
    with paddle.static.scope_guard(paddle.static.Scope()):
        program, feeds, fetches = paddle.fluid.io.load_inference_model(str(tmp_path / "traced"), exe)
        (loaded,) = exe.run(program, feed={feeds[0]: x}, fetch_list=fetches)
    np.testing.assert_allclose(loaded, eager, rtol=1e-5)
