"""paddle.onnx.export(layer, path, input_spec, opset_version), Paddle 2.0's spelling: the layer traced to a
program and written to path + '.onnx', which onnxruntime runs to the layer's outputs."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest

import fleetgraph as paddle
from fleetgraph.ir import FleetgraphError


def _net():
    paddle.seed(3)
    return paddle.nn.Sequential(paddle.nn.Linear(4, 8), paddle.nn.ReLU(), paddle.nn.Linear(8, 2))


def test_a_layer_exports_to_path_dot_onnx_and_runs_to_its_outputs(tmp_path):
    paddle.disable_static()
    net = _net()
    spec = [paddle.jit.InputSpec([None, 4], "float32", "x")]
    paddle.onnx.export(net, str(tmp_path / "model"), input_spec=spec, opset_version=18)
    session = ort.InferenceSession(str(tmp_path / "model.onnx"))
    x = np.random.default_rng(0).normal(size=(3, 4)).astype(np.float32)
    np.testing.assert_allclose(session.run(None, {"x": x})[0], net(paddle.to_tensor(x)).numpy(), rtol=1e-5, atol=1e-6)


def test_what_cannot_be_exported_is_refused_by_name(tmp_path):
    paddle.disable_static()
    net = _net()
    spec = [paddle.jit.InputSpec([None, 4], "float32", "x")]
    with pytest.raises(FleetgraphError, match="opset 8; expected 9 to"):
        paddle.onnx.export(net, str(tmp_path / "model"), input_spec=spec, opset_version=8)
    with pytest.raises(FleetgraphError, match="input_spec"):
        paddle.onnx.export(net, str(tmp_path / "model"))
    with pytest.raises(FleetgraphError, match="enable_onnx_checker"):
        paddle.onnx.export(net, str(tmp_path / "model"), input_spec=spec, opset_version=18, enable_onnx_checker=True)
