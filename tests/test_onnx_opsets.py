"""ONNX export at opsets 9 to 18: the project's models exported at each, checked by onnx.checker,
run by onnxruntime (and onnx's reference evaluator) to the executor's outputs, and loaded back; an
op whose ONNX operator is newer than the opset asked for is refused with the op and the opset."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
import test_onnx as t
from onnx import defs

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.ir import FleetgraphError, Program, program_guard
from fleetgraph.onnx import export

OPSETS = (9, 11, 13, 17, 18)
# model builder of tests/test_onnx.py -> whether load reads its export back
MODELS = {
    "fit_a_line": (t.fit_a_line_model, True),
    "mlp_softmax": (t.mlp_softmax_model, True),
    "small_resnet": (t.small_resnet_model, True),
    "tensor_and_math_ops": (t.tensor_and_math_ops_model, True),
    "reductions_logic_and_print": (t.reductions_logic_and_print_model, False),
    "conv_pool_ceil": (lambda: t.conv_pool_model({"padding_algorithm": "VALID"}, {"pooling_type": "max"}), True),
}


@pytest.fixture(scope="module")
def built():
    """Each model built once (its startup run), exported at every opset."""
    return {name: build() for name, (build, _) in MODELS.items()}


def _nodes(graph):
    for node in graph.node:
        yield node
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from _nodes(attr.g)


def _assert_every_node_exists_at(model, opset):
    for node in _nodes(model.graph):
        schema = defs.get_schema(node.op_type, max_inclusive_version=opset)
        assert schema.since_version <= opset, f"{node.op_type}"
        assert set(a.name for a in node.attribute) <= set(schema.attributes), f"{node.op_type} {node.attribute}"


@pytest.mark.parametrize("opset", OPSETS)
@pytest.mark.parametrize("name", list(MODELS))
def test_model_exports_at_the_opset_and_runs_as_the_executor(name, opset, built, tmp_path):
    model = t._assert_exports(*built[name], tmp_path, reload=MODELS[name][1], opset=opset)
    assert [o.version for o in model.opset_import if o.domain == ""] == [opset]
    _assert_every_node_exists_at(model, opset)


def test_mlp_loss_and_accuracy_export_from_opset_11_and_are_refused_below(built, tmp_path):
    """accuracy and cross entropy pick the label's column with Range, which comes at opset 11."""
    main, scope, feeds, fetches, feed = t.mlp_loss_and_accuracy_model()
    t._assert_exports(main, scope, feeds, fetches, feed, tmp_path, reload=False, opset=11)
    with pytest.raises(
        FleetgraphError, match=r"op softmax_with_cross_entropy \(index \d+ of block 0\): ONNX Range needs opset 11"
    ):
        export(main, feeds, fetches, scope.vars, opset=10)


def test_softmax_over_a_middle_axis_is_moved_last_below_opset_13(tmp_path):
    """Before opset 13 Softmax flattens its input to 2-D at axis: a middle axis is transposed last."""
    main = Program()
    with program_guard(main, Program()):
        x = paddle.static.data("x", [None, 3, 4], "float32")
        out = paddle.nn.functional.softmax(x, axis=1)
        log_out = paddle.nn.functional.log_softmax(x, axis=-1)
    feed = {"x": np.random.default_rng(0).normal(size=(2, 3, 4)).astype("float32")}
    model = t._assert_exports(main, paddle.static.Scope(), ["x"], [out.name, log_out.name], feed, tmp_path, opset=9)
    assert [n.op_type for n in model.graph.node].count("Transpose") == 2


def test_an_op_that_needs_a_newer_opset_is_refused_naming_op_and_opset():
    main = Program()
    with program_guard(main, Program()):
        x = paddle.static.data("x", [None, 4], "float32")
        y = paddle.cumsum(paddle.nn.functional.relu(x), axis=1)
    for opset, needs in ((9, 11), (10, 11)):
        with pytest.raises(
            FleetgraphError, match=rf"op cumsum \(index 1 of block 0\): ONNX CumSum needs opset {needs}"
        ):
            export(main, ["x"], [y.name], {}, opset=opset)
    assert export(main, ["x"], [y.name], {}, opset=11).opset_import[0].version == 11


def test_a_type_an_older_operator_lacks_is_refused_naming_the_opset_that_takes_it():
    """Equal takes floats from opset 11."""
    main = Program()
    with program_guard(main, Program()):
        x = paddle.static.data("x", [None, 4], "float32")
        y = paddle.equal(x, paddle.nn.functional.relu(x))
    with pytest.raises(
        FleetgraphError, match=r"op equal \(index 1 of block 0\): ONNX Equal takes no tensor\(float\) before opset 11"
    ):
        export(main, ["x"], [y.name], {}, opset=10)
    export(main, ["x"], [y.name], {}, opset=11)


def test_a_paddle_layer_exports_at_paddles_default_opset_9(tmp_path):
    ort = pytest.importorskip("onnxruntime")
    paddle.disable_static()
    try:
        paddle.seed(5)
        net = paddle.nn.Sequential(
            paddle.nn.Linear(4, 8), paddle.nn.ReLU(), paddle.nn.Linear(8, 3), paddle.nn.Softmax()
        )
        spec = [paddle.jit.InputSpec([None, 4], "float32", "x")]
        paddle.onnx.export(net, str(tmp_path / "model"), input_spec=spec)  # opset_version=9, Paddle's default
        model = onnx.load(str(tmp_path / "model.onnx"))
        onnx.checker.check_model(model, full_check=True)
        assert model.opset_import[0].version == 9
        x = np.random.default_rng(0).normal(size=(5, 4)).astype(np.float32)
        session = ort.InferenceSession(str(tmp_path / "model.onnx"), providers=["CPUExecutionProvider"])
        want = net(paddle.to_tensor(x)).numpy()
    finally:
        paddle.enable_static()
    np.testing.assert_allclose(session.run(None, {"x": x})[0], want, rtol=1e-5, atol=1e-6)


def _sequence_pool(kind):
    main = Program()
    with program_guard(main, Program()):
        x = fluid.layers.data(name="x", shape=[2, 3], lod_level=1, dtype="float32")
        out = fluid.layers.sequence_pool(x, kind, is_test=True, pad_value=-7.0)
    rows = np.random.default_rng(5).normal(size=(6, 2, 3)).astype("float32")
    return main, paddle.static.Scope(), ["x"], [out.name], {"x": fluid.create_lod_tensor(rows, [[2, 0, 3, 1]])}


def test_sequence_pool_exports_from_the_opset_its_function_body_needs(tmp_path):
    """The body of fleetgraph.sequence_pool_<type> is checked at the opset: Shape's start and end
    come at 15, ScatterND's reduction add at 16 and max at 18."""
    t._assert_exports(*_sequence_pool("first"), tmp_path, opset=15)
    main, scope, feeds, fetches, _ = _sequence_pool("max")
    for opset, needs in ((11, "Shape's attribute end=1 needs opset 15"), (17, "reduction='max' needs opset 18")):
        with pytest.raises(FleetgraphError, match=rf"op sequence_pool \(index 0 of block 0\): ONNX .*{needs}"):
            export(main, feeds, fetches, {}, opset=opset)


def test_cond_exports_from_opset_11_where_if_branches_may_differ_in_shape():
    main = Program()
    with program_guard(main, Program()):
        x = paddle.static.data("x", [None, 4], "float32")
        pred = paddle.mean(x) > 0.0
        out = paddle.static.nn.cond(pred, lambda: x * 2.0, lambda: x - 1.0)
    with pytest.raises(
        FleetgraphError, match=r"op conditional_block \(index \d+ of block 0\): ONNX If .* needs opset 11"
    ):
        export(main, ["x"], [out.name], {}, opset=10)
    onnx.checker.check_model(export(main, ["x"], [out.name], {}, opset=11), full_check=True)
