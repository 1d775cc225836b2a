"""ONNX load: models written with onnx.helper (and onnxscript) read back as Programs, with onnx's
reference evaluator as the oracle; loaded models train, print and transpile as any program. (No
`from __future__ import annotations` here: onnxscript reads the annotations of what it converts.)"""

import os
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import fleetgraph as paddle  # noqa: E402
from fleetgraph.ir import FleetgraphError, Program, op_summary, program_guard  # noqa: E402
from fleetgraph.onnx import export, load, startup_program  # noqa: E402
from fleetgraph.transpiler import DistributeTranspiler  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_onnx import TOL, _executor, _run, _scope_with  # noqa: E402

try:  # at module level: onnxscript resolves the names a script uses in its module's globals
    from onnxscript import FLOAT, script
    from onnxscript import opset18 as op
except ImportError:
    FLOAT = script = op = None


def _tensor(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def _assert_loads_like_reference(model, feed):
    onnx.checker.check_model(model, full_check=True)
    want = ReferenceEvaluator(model).run(None, feed)
    program, values, feeds, fetches = load(model.SerializeToString())
    scope = _scope_with(values)
    got = _run(program, {k: feed[k] for k in feeds}, fetches, scope)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=TOL, atol=TOL)
    return program, scope, feeds, fetches


def _gemm_mlp():
    rng = np.random.default_rng(7)
    w1, b1 = rng.normal(size=(8, 6)).astype("float32"), rng.normal(size=6).astype("float32")
    w2, b2 = rng.normal(size=(3, 6)).astype("float32"), rng.normal(size=3).astype("float32")
    nodes = [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h"]),
        helper.make_node("Relu", ["h"], ["r"]),
        helper.make_node("Gemm", ["r", "w2", "b2"], ["logits"], transB=1, alpha=0.5, beta=2.0),
        helper.make_node("Softmax", ["logits"], ["probs"], axis=-1),
    ]
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 8])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["N", 3])],
        [_tensor("w1", w1), _tensor("b1", b1), _tensor("w2", w2), _tensor("b2", b2)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=10)


def test_log_softmax_loads_as_one_stable_op_and_exports_back(tmp_path):
    """LogSoftmax of logits hundreds apart stays finite (x - logsumexp x, NumPy the oracle; onnx's
    ReferenceEvaluator, softmax then log, gives -inf there, as our load did)."""
    graph = helper.make_graph(
        [helper.make_node("LogSoftmax", ["x"], ["y"], axis=1)],
        "log_softmax",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=10)
    onnx.checker.check_model(model, full_check=True)
    x = np.array([[0.0, 200.0, -300.0], [1.0, 2.0, 3.0]], "float32")
    shifted = x - x.max(axis=1, keepdims=True)
    want = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    program, values, feeds, fetches = load(model.SerializeToString())
    scope = _scope_with(values)
    assert op_summary(program).split(": ")[1] == "log_softmax"
    got = _run(program, {"x": x}, fetches, scope)[0]
    np.testing.assert_allclose(got, want, rtol=TOL, atol=TOL)
    again = export(program, feeds, fetches, scope.vars, path=str(tmp_path / "again.onnx"))
    assert [n.op_type for n in again.graph.node] == ["LogSoftmax"]
    small = x[1:]  # where the reference evaluator is exact too
    np.testing.assert_allclose(ReferenceEvaluator(again).run(None, {"x": small})[0], want[1:], rtol=TOL, atol=TOL)


def test_a_gemm_relu_softmax_mlp_loads_and_matches_the_reference():
    x = np.random.default_rng(8).normal(size=(4, 8)).astype("float32")
    program, scope, feeds, fetches = _assert_loads_like_reference(_gemm_mlp(), {"x": x})
    assert (feeds, fetches) == (["x"], ["probs"])
    assert sorted(p.name for p in program.all_parameters()) == ["b1", "b2", "w1", "w2"]


def test_a_loaded_mlp_fine_tunes_with_sgd():
    program, values, feeds, fetches = load(_gemm_mlp())
    scope = _scope_with(values)
    startup = Program()
    with program_guard(program, startup):
        probs = program.global_block().var("probs")
        label = paddle.static.data(name="label", shape=[None, 1], dtype="int64")
        loss = paddle.mean(paddle.nn.functional.cross_entropy(probs, label, use_softmax=False))
        paddle.optimizer.SGD(learning_rate=0.5).minimize(loss)
    _executor().run(startup, scope=scope)
    rng = np.random.default_rng(9)
    x = rng.normal(size=(16, 8)).astype("float32")
    y = (x[:, :1] > 0).astype("int64")
    losses = [float(_run(program, {"x": x, "label": y}, [loss.name], scope)[0][0]) for _ in range(8)]
    assert losses[-1] < losses[0] * 0.8, losses


def test_a_loaded_mlp_prints_and_transpiles_for_two_pservers():
    program, values, feeds, fetches = load(_gemm_mlp())
    assert op_summary(program) == "block0: matmul elementwise_add relu matmul scale elementwise_add softmax"
    startup = startup_program(program, values)  # the loaded values, as ops the pservers' startups take
    with program_guard(program, startup):
        label = paddle.static.data(name="label", shape=[None, 1], dtype="int64")
        probs = program.global_block().var("probs")
        loss = paddle.mean(paddle.nn.functional.cross_entropy(probs, label, use_softmax=False))
        paddle.optimizer.SGD(learning_rate=0.5).minimize(loss)
    t = DistributeTranspiler()
    t.transpile(0, program=program, pservers="127.0.0.1:6174,127.0.0.1:6175", trainers=2, startup_program=startup)
    trainer_ops = [op.type for op in t.get_trainer_program().global_block().ops]
    assert trainer_ops.count("send") == 4 and trainer_ops.count("recv") == 4  # w1, b1, w2, b2
    endpoints = ("127.0.0.1:6174", "127.0.0.1:6175")
    served = [t.get_pserver_program(ep) for ep in endpoints]
    assert sum(len(p.blocks) - 1 for p in served) == 4  # one optimize block per parameter
    # each pserver starts from the loaded values of what it owns
    pserver_scope = paddle.static.Scope()
    for ep, pserver in zip(endpoints, served):
        _executor().run(t.get_startup_program(ep, pserver), scope=pserver_scope)
    for name in ("w1", "b1", "w2", "b2"):
        np.testing.assert_array_equal(pserver_scope.vars[name], values[name])


def test_a_conv_batch_norm_pool_net_loads_and_matches_the_reference():
    rng = np.random.default_rng(10)
    c = 4
    inits = [
        _tensor("w", rng.normal(size=(c, 3, 3, 3)).astype("float32")),
        _tensor("bias", rng.normal(size=c).astype("float32")),
        _tensor("scale", rng.uniform(0.5, 1.5, size=c).astype("float32")),
        _tensor("shift", rng.normal(size=c).astype("float32")),
        _tensor("mean", rng.normal(size=c).astype("float32")),
        _tensor("var", rng.uniform(0.5, 2.0, size=c).astype("float32")),
        _tensor("shape", np.array([0, -1], dtype=np.int64)),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w", "bias"], ["conv"], pads=[1, 1, 1, 1], strides=[1, 1]),
        helper.make_node("BatchNormalization", ["conv", "scale", "shift", "mean", "var"], ["bn"], epsilon=1e-3),
        helper.make_node("Relu", ["bn"], ["act"]),
        helper.make_node("MaxPool", ["act"], ["pooled"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("AveragePool", ["pooled"], ["avg"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1]),
        helper.make_node("GlobalAveragePool", ["avg"], ["gap"]),
        helper.make_node("Reshape", ["gap", "shape"], ["out"]),
    ]
    graph = helper.make_graph(
        nodes,
        "convnet",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 8, 8])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["N", c])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=10)
    x = rng.normal(size=(2, 3, 8, 8)).astype("float32")
    program, *_ = _assert_loads_like_reference(model, {"x": x})
    assert [op.type for op in program.global_block().ops] == [
        "conv2d", "elementwise_add", "batch_norm", "relu", "pool2d", "pool2d", "pool2d", "reshape2",
    ]  # fmt: skip


def test_shape_ops_gather_reductions_and_constants_load():
    rng = np.random.default_rng(11)
    table = rng.normal(size=(10, 2, 3)).astype("float32")
    nodes = [
        helper.make_node("Constant", [], ["axes"], value=_tensor("axes", np.array([1], dtype=np.int64))),
        helper.make_node("Gather", ["table", "ids"], ["rows"]),  # [N, 2, 2, 3]
        helper.make_node("Flatten", ["rows"], ["flat"], axis=1),  # [N, 12]
        helper.make_node("Split", ["flat"], ["a", "b"], axis=1, num_outputs=2),
        helper.make_node("Sub", ["a", "b"], ["d"]),
        helper.make_node("Div", ["d", "two"], ["half"]),
        helper.make_node("Unsqueeze", ["half", "axes"], ["u"]),  # [N, 1, 6]
        helper.make_node("Transpose", ["u"], ["t"], perm=[0, 2, 1]),  # [N, 6, 1]
        helper.make_node("Squeeze", ["t", "axes2"], ["s"]),  # [N, 6]
        helper.make_node("Concat", ["s", "s"], ["cat"], axis=1),
        helper.make_node("Tanh", ["cat"], ["th"]),
        helper.make_node("Sigmoid", ["th"], ["sg"]),
        helper.make_node("LogSoftmax", ["sg"], ["ls"], axis=1),
        helper.make_node("ReduceSum", ["ls", "axes"], ["rs"], keepdims=1),
        helper.make_node("ReduceMean", ["ls"], ["rm"], keepdims=0),
        helper.make_node("Mul", ["rs", "ls"], ["m"]),
        helper.make_node("Dropout", ["m"], ["dr"]),
        helper.make_node("Identity", ["dr"], ["idn"]),
        helper.make_node("Cast", ["idn"], ["out"], to=TensorProto.DOUBLE),
    ]
    graph = helper.make_graph(
        nodes,
        "shapes",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, ["N", 2])],
        [helper.make_tensor_value_info("out", TensorProto.DOUBLE, ["N", 12])],
        [_tensor("table", table), _tensor("two", np.float32(2.0)), _tensor("axes2", np.array([2], dtype=np.int64))],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=10)
    ids = rng.integers(0, 10, size=(3, 2)).astype("int64")
    _assert_loads_like_reference(model, {"ids": ids})


@pytest.mark.parametrize("axis", [0, 1, 2, 4, -1, -3])
def test_flatten_loads_as_two_dims_at_any_axis(axis):
    """Flatten gives [prod(dims before axis), prod(dims from axis)], a negative axis counting from
    the back (axis + rank); the reference evaluator's outputs are compared shape and values."""
    graph = helper.make_graph(
        [helper.make_node("Flatten", ["x"], ["y"], axis=axis)],
        "flatten",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 2, 3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["A", "B"])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=10)
    x = np.arange(5 * 24, dtype="float32").reshape(5, 2, 3, 4)
    program, scope, _, fetches = _assert_loads_like_reference(model, {"x": x})
    (got,) = _run(program, {"x": x}, fetches, scope)
    lead = int(np.prod(x.shape[: axis + 4 if axis < 0 else axis]))
    assert got.shape == (lead, x.size // lead)


def test_slice_and_top_k_load_at_opset_9_where_their_bounds_are_attributes():
    """Before opset 10 Slice takes starts/ends/axes and TopK takes k as attributes, not inputs."""
    nodes = [
        helper.make_node("Slice", ["x"], ["s"], starts=[1], ends=[4], axes=[1]),
        helper.make_node("TopK", ["s"], ["v", "i"], k=2, axis=1),
    ]
    graph = helper.make_graph(
        nodes,
        "opset9",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 5])],
        [
            helper.make_tensor_value_info("v", TensorProto.FLOAT, [3, 2]),
            helper.make_tensor_value_info("i", TensorProto.INT64, [3, 2]),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)], ir_version=4)
    x = np.random.default_rng(5).normal(size=(3, 5)).astype("float32")
    _assert_loads_like_reference(model, {"x": x})


def test_a_max_of_three_inputs_is_refused_with_its_node():
    graph = helper.make_graph(
        [helper.make_node("Max", ["x", "x", "x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=10)
    with pytest.raises(FleetgraphError, match=r"node 0 \(Max ''\): 3 inputs; expected 2"):
        load(model)


@pytest.mark.parametrize("strides", [[1, 1], [2, 3]])
def test_a_dilated_conv_with_same_upper_padding_loads_like_the_reference(strides):
    """ONNX's SAME_UPPER pads for the dilated kernel; Paddle's SAME (the conv2d kernel's) ignores the
    dilations, so load writes the pads out explicitly."""
    rng = np.random.default_rng(15)
    w = rng.normal(size=(2, 1, 3, 3)).astype("float32")
    conv = helper.make_node("Conv", ["x", "w"], ["y"], auto_pad="SAME_UPPER", dilations=[2, 2], strides=strides)
    graph = helper.make_graph(
        [conv],
        "dilated",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 1, 7, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 2, "H", "W"])],
        [_tensor("w", w)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=10)
    _assert_loads_like_reference(model, {"x": rng.normal(size=(2, 1, 7, 8)).astype("float32")})


def test_an_unmapped_onnx_node_is_named_with_its_index():
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Erf", ["r"], ["y"], name="the_erf")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=10)
    with pytest.raises(FleetgraphError, match=r"node 1 \(Erf 'the_erf'\) has no fleetgraph mapping"):
        load(model)


def test_a_model_written_with_onnxscript_loads():
    if script is None:
        pytest.skip("onnxscript is not installed")

    @script()
    def scaled_relu(x: FLOAT["N", 4], w: FLOAT[4, 3]) -> FLOAT["N", 3]:  # noqa: F821
        return op.Softmax(op.Relu(op.MatMul(x, w)) * op.Constant(value_float=2.0), axis=-1)

    model = scaled_relu.to_model_proto()
    w = numpy_helper.from_array(np.random.default_rng(12).normal(size=(4, 3)).astype("float32"), "w")
    model.graph.initializer.append(w)
    x = np.random.default_rng(13).normal(size=(5, 4)).astype("float32")
    want = ReferenceEvaluator(model).run(None, {"x": x, "w": numpy_helper.to_array(w)})[0]
    program, values, feeds, fetches = load(model)
    scope = _scope_with(values)
    assert feeds == ["x"]
    np.testing.assert_allclose(_run(program, {"x": x}, fetches, scope)[0], want, rtol=TOL, atol=TOL)


# -- save_inference_model(format="onnx") ------------------------------------------------------------
