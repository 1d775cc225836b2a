"""ONNX export and load: the executor is the oracle for exported models (run by onnxruntime and by
onnx's reference evaluator), the reference evaluator for models written with onnx.helper. (No
`from __future__ import annotations` here: onnxscript reads the annotations of what it converts.)"""

import os
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import fleetgraph as paddle  # noqa: E402
import fleetgraph.fluid as fluid  # noqa: E402
from fleetgraph.ir import FleetgraphError, Program, op_summary, program_guard, unique_name  # noqa: E402
from fleetgraph.ir.prune import prune_for_inference  # noqa: E402
from fleetgraph.onnx import export, load, startup_program  # noqa: E402
from fleetgraph.transpiler import DistributeTranspiler  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models import fit_a_line_2x, mlp  # noqa: E402

try:  # at module level: onnxscript resolves the names a script uses in its module's globals
    from onnxscript import FLOAT, script
    from onnxscript import opset18 as op
except ImportError:
    FLOAT = script = op = None

TOL = 1e-5


def _executor():
    return paddle.static.Executor(paddle.CPUPlace())


def _started(startup):
    scope = paddle.static.Scope()
    _executor().run(startup, scope=scope)
    return scope


def _scope_with(values):
    """A scope holding a loaded model's values, to run its program in."""
    scope = paddle.static.Scope()
    scope.vars.update(values)
    return scope


def _run(program, feed, fetch, scope):
    return [np.asarray(v) for v in _executor().run(program, feed=feed, fetch_list=fetch, scope=scope)]


def _plain(feed):
    """The feed as ONNX takes it: a LoD tensor as its rows plus `<name>@LOD` offsets."""
    out = {}
    for name, value in feed.items():
        if isinstance(value, fluid.LoDTensor):
            out[name] = np.asarray(value.data)
            out[name + "@LOD"] = np.asarray(value.lod()[-1], dtype=np.int64)
        else:
            out[name] = value
    return out


def _onnx_runs(model, feed):
    """The model's outputs from the reference evaluator and, where installed, onnxruntime."""
    names = {i.name for i in model.graph.input}
    feed = {k: v for k, v in feed.items() if k in names}
    runs = {}
    opset = next(o.version for o in model.opset_import if o.domain == "")
    if opset >= 14 or "BatchNormalization" not in {n.op_type for n in model.graph.node}:
        # onnx's reference BatchNormalization of opsets 9-13 normalizes with the batch's statistics
        # whenever momentum is set, and it always is (its default): onnxruntime runs those alone
        runs["reference"] = ReferenceEvaluator(model).run(None, feed)
    ort = pytest.importorskip("onnxruntime")
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    runs["onnxruntime"] = session.run(None, feed)
    return runs


def _assert_exports(main, startup_scope, feed_names, fetch_names, feed, tmp_path, reload=True, opset=None):
    """export (at `opset`, else the default) -> check_model(full) -> onnxruntime and the reference
    evaluator equal the executor; load(export) runs in the executor and equals it too (`reload`:
    the load op set suffices)."""
    expected = _run(prune_for_inference(main, feed_names, fetch_names), feed, fetch_names, startup_scope)
    path = tmp_path / "model.onnx"
    model = export(main, feed_names, fetch_names, startup_scope.vars, path=path, opset=opset)
    onnx.checker.check_model(onnx.load(str(path)), full_check=True)
    for runner, got in _onnx_runs(model, _plain(feed)).items():
        for name, g, want in zip(fetch_names, got, expected, strict=True):
            np.testing.assert_allclose(g, want, rtol=TOL, atol=TOL, err_msg=f"{runner}: {name}")
    if not reload:
        return model
    program, values, feeds, fetches = load(path)
    scope = _scope_with(values)
    assert feeds == [i.name for i in model.graph.input if not i.name.endswith("@LOD")]
    loaded = _run(program, {k: feed[k] for k in feeds}, fetches, scope)  # a LoD feed as a LoDTensor
    for name, g, want in zip(fetch_names, loaded, expected, strict=True):
        np.testing.assert_allclose(g, want, rtol=TOL, atol=TOL, err_msg=f"load(export): {name}")
    return model


def _last_output(program, op_type):
    return [op for op in program.global_block().ops if op.type == op_type][-1].output("Out")[0]


# -- export: the project's models ------------------------------------------------------------------


def test_fit_a_line_exports_with_a_dynamic_batch(tmp_path):
    main, scope, feeds, fetches, feed = fit_a_line_model()
    model = _assert_exports(main, scope, feeds, fetches, feed, tmp_path)
    x = feed["x"]
    assert model.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    assert sorted(i.name for i in model.graph.initializer) == ["fc_0.b_0", "fc_0.w_0"]
    assert ReferenceEvaluator(model).run(None, {"x": x[:2]})[0].shape == (2, 1)


def fit_a_line_model():
    """(main, scope, feed names, fetch names, feed) of each model below, for export tests."""
    main, startup, x, y, loss = fit_a_line_2x()
    x = np.random.default_rng(0).normal(size=(7, 13)).astype("float32")
    return main, _started(startup), ["x"], [_last_output(main, "elementwise_add")], {"x": x}


def mlp_softmax_model():
    main, startup, image, label, loss, acc = mlp(lambda: paddle.optimizer.SGD(0.1), hidden=(16, 8))
    with program_guard(main, Program()):
        probs = paddle.nn.functional.softmax(main.global_block().var(_last_output(main, "elementwise_add")))
    feed = {"image": np.random.default_rng(1).normal(size=(5, 784)).astype("float32")}
    return main, _started(startup), ["image"], [probs.name], feed


def mlp_loss_and_accuracy_model():
    main, startup, image, label, loss, acc = mlp(lambda: paddle.optimizer.SGD(0.1), hidden=(16,))
    rng = np.random.default_rng(1)
    feed = {"image": rng.normal(size=(6, 784)).astype("float32"), "label": rng.integers(0, 10, (6, 1))}
    return main, _started(startup), ["image", "label"], [loss.name, acc.name], feed


def test_mlp_exports_its_softmax_scores(tmp_path):
    _assert_exports(*mlp_softmax_model(), tmp_path)


def test_mlp_exports_its_loss_and_accuracy_for_evaluation(tmp_path):
    model = _assert_exports(*mlp_loss_and_accuracy_model(), tmp_path, False)
    assert {"LogSoftmax", "TopK"} <= {n.op_type for n in model.graph.node}


def _load_example(relpath, name):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, relpath))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def small_resnet_model():
    ResNet = _load_example("tests/dist_scripts/resnet_static.py", "resnet_static_onnx").ResNet
    main, startup = Program(), Program()
    main.random_seed = startup.random_seed = 3
    with program_guard(main, startup), unique_name.guard():
        image = paddle.static.data(name="image", shape=[None, 3, 32, 32], dtype="float32")
        logits = ResNet(width=4).net(image, class_dim=5)
    scope = _started(startup)
    for name, value in scope.vars.items():  # running statistics that are not 0 and 1
        if name.endswith(("_mean", "_variance")) or ".w_1" in name or ".w_2" in name:
            scope.vars[name] = np.asarray(value) + np.float32(0.25)
    feed = {"image": np.random.default_rng(2).normal(size=(2, 3, 32, 32)).astype("float32")}
    return main, scope, ["image"], [logits.name], feed


def test_small_resnet_exports_conv_batch_norm_and_pools(tmp_path):
    model = _assert_exports(*small_resnet_model(), tmp_path)
    kinds = {n.op_type for n in model.graph.node}
    assert {"Conv", "BatchNormalization", "MaxPool", "GlobalAveragePool", "Relu", "Add"} <= kinds


def _lod_ids(rng, lengths, vocab):
    ids = rng.integers(0, vocab, size=(sum(lengths), 1)).astype("int64")
    return fluid.create_lod_tensor(ids, [lengths])


def test_ctr_dnn_exports_sum_pooling_over_the_ids_offsets(tmp_path):
    net = _load_example("examples/ctr_dnn/network_conf.py", "ctr_dnn_onnx")
    main, startup = Program(), Program()
    main.random_seed = startup.random_seed = 4
    with program_guard(main, startup), unique_name.guard():
        dense = fluid.layers.data(name="dense_input", shape=[13], dtype="float32")
        sparse = [fluid.layers.data(name=f"C{i}", shape=[1], lod_level=1, dtype="int64") for i in range(3)]
        label = fluid.layers.data(name="label", shape=[1], dtype="int64")
        net.ctr_dnn_model_dataset(dense, sparse, label, embedding_size=4, sparse_feature_dim=100)
    predict = _last_output(main, "softmax")
    rng = np.random.default_rng(3)
    feed = {f"C{i}": _lod_ids(rng, [1, 2, 1, 3], 100) for i in range(3)}  # a sample may hold several ids
    feed["dense_input"] = rng.normal(size=(4, 13)).astype("float32")
    feeds = ["dense_input"] + [f"C{i}" for i in range(3)]
    model = _assert_exports(main, _started(startup), feeds, [predict], feed, tmp_path)
    assert "sequence_pool_sum" in {n.op_type for n in model.graph.node}
    assert "ScatterND" in {n.op_type for n in model.functions[0].node}
    assert "C0@LOD" in {i.name for i in model.graph.input}


@pytest.mark.parametrize("pool_type", ["sum", "average", "sqrt", "max", "first", "last"])
def test_sequence_pool_exports_every_pool_type_with_empty_sequences_padded(pool_type, tmp_path):
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = fluid.layers.data(name="x", shape=[2, 3], lod_level=1, dtype="float32")
        out = fluid.layers.sequence_pool(x, pool_type, is_test=True, pad_value=-7.0)
    rows = np.random.default_rng(5).normal(size=(6, 2, 3)).astype("float32")
    feed = {"x": fluid.create_lod_tensor(rows, [[2, 0, 3, 1]])}
    _assert_exports(main, paddle.static.Scope(), ["x"], [out.name], feed, tmp_path)


def test_wide_and_deep_exports_its_sigmoid(tmp_path):
    WideDeepModel = _load_example("examples/wide_deep/model.py", "wide_deep_onnx").WideDeepModel
    main, startup = Program(), Program()
    main.random_seed = startup.random_seed = 5
    with program_guard(main, startup), unique_name.guard():
        model = WideDeepModel(sparse_feature_number=100, sparse_inputs_slots=4, sparse_feature_dim=4, fc_sizes=(8, 8))
        model.net()
    pred = [op for op in main.global_block().ops if op.type == "sigmoid"][-1].output("Out")[0]
    rng = np.random.default_rng(4)
    feed = {f"C{i}": _lod_ids(rng, [1] * 6, 100) for i in range(1, 4)}
    feed["dense_input"] = rng.normal(size=(6, 13)).astype("float32")
    feeds = ["dense_input"] + [f"C{i}" for i in range(1, 4)]
    scope = _started(startup)
    _assert_exports(main, scope, feeds, [pred], feed, tmp_path)
    feed["label"] = rng.integers(0, 2, (6, 1))  # the log loss and accuracy beside the prediction
    metrics = [model.cost.name, model._metrics["acc"]["result"].name]
    _assert_exports(main, scope, feeds + ["label"], metrics, feed, tmp_path, reload=False)


def test_an_op_without_mapping_is_named_with_its_index():
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = paddle.static.data(name="x", shape=[None, 4], dtype="float32")
        block = main.global_block()
        block.append_op("relu", {"X": x}, {"Out": block.create_var("unused", (), "float32")})  # pruned away
        block.append_op("assign", {"X": x}, {"Out": block.create_var("a", (), "float32")})
        block.append_op("uniform_random", {}, {"Out": block.create_var("noise", (), "float32")}, {"shape": [4]})
        block.append_op("elementwise_add", {"X": "a", "Y": "noise"}, {"Out": block.create_var("out", (), "float32")})
    with pytest.raises(FleetgraphError, match=r"op uniform_random \(index 2 of block 0\) has no ONNX mapping"):
        export(main, ["x"], ["out"], {})


def test_export_replaces_the_file_whole_or_leaves_the_old_one(tmp_path, monkeypatch):
    """The model is written under a temporary name and renamed into place: a write that fails
    (here the rename) leaves the previous model.onnx as it was and no stray file behind."""
    main, startup, x, y, loss = fit_a_line_2x()
    scope, pred = _started(startup), _last_output(main, "elementwise_add")
    path = tmp_path / "model.onnx"
    export(main, ["x"], [pred], scope.vars, path=path)
    before = path.read_bytes()
    scope.vars["fc_0.w_0"] = scope.vars["fc_0.w_0"] + 1.0

    def failing_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        export(main, ["x"], [pred], scope.vars, path=path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.onnx"]
    export(main, ["x"], [pred], scope.vars, path=str(path))
    assert path.read_bytes() != before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.onnx"]


def test_export_refuses_an_opset_below_9():
    """9 is Paddle 2.0's default and the opset Where, Sign, Erf, IsNaN and NonZero come at (onnxruntime
    loads 7 up, but the rules' basic forms would have no floor below 9 to lower to)."""
    main, startup, x, y, loss = fit_a_line_2x()
    with pytest.raises(FleetgraphError, match="opset 8; expected 9 to"):
        export(main, ["x"], [_last_output(main, "elementwise_add")], _started(startup).vars, opset=8)


def test_export_takes_values_as_a_mapping_not_a_scope():
    main, startup, x, y, loss = fit_a_line_2x()
    with pytest.raises(FleetgraphError, match="expected a mapping of variable name -> array .*got Scope"):
        export(main, ["x"], [_last_output(main, "elementwise_add")], _started(startup))


# -- load: models written by other tools ------------------------------------------------------------


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


def test_static_save_inference_model_writes_onnx(tmp_path):
    main, startup, x, y, loss = fit_a_line_2x()
    scope = _started(startup)
    pred = main.global_block().var(_last_output(main, "elementwise_add"))
    with paddle.static.scope_guard(scope):
        paddle.static.save_inference_model(str(tmp_path / "fit"), [x], [pred], _executor(), program=main, format="onnx")
    xv = np.ones((3, 13), dtype="float32")
    want = _run(prune_for_inference(main, ["x"], [pred.name]), {"x": xv}, [pred.name], scope)[0]
    got = ReferenceEvaluator(str(tmp_path / "fit.onnx")).run(None, {"x": xv})[0]
    np.testing.assert_allclose(got, want, rtol=TOL, atol=TOL)


def test_fluid_save_inference_model_writes_onnx(tmp_path):
    main, startup, x, y, loss = fit_a_line_2x()
    scope = _started(startup)
    pred = main.global_block().var(_last_output(main, "elementwise_add"))
    with fluid.scope_guard(scope):
        fluid.io.save_inference_model(str(tmp_path), ["x"], [pred], _executor(), main, format="onnx")
    program, _, feeds, fetches = load(tmp_path / "model.onnx")
    assert (feeds, fetches) == (["x"], [pred.name])


def tensor_and_math_ops_model():
    """One program through the rules no model above uses: Paddle's elementwise axis, mul's
    flattening, matmul's transposes, split, slice, top_k, reductions, clip, cast, constants."""
    main = Program()
    block = main.global_block()

    def var(name, dtype="float32"):
        return block.create_var(name, (), dtype)

    def op(type, inputs, outputs, **attrs):
        block.append_op(type, inputs, outputs, attrs)

    x = block.create_var("x", (-1, 4, 6), "float32", is_data=True)
    ids = block.create_var("ids", (-1, 1), "int64", is_data=True)
    block.create_var("emb", (10, 6), "float32", persistable=True)
    block.create_var("w", (24, 3), "float32", persistable=True)
    block.create_var("bias4", (4,), "float32", persistable=True)
    op("elementwise_add", {"X": x, "Y": "bias4"}, {"Out": var("a")}, axis=1)
    op("transpose2", {"X": "a"}, {"Out": var("t")}, axis=[0, 2, 1])  # [N, 6, 4]
    op("split", {"X": "t"}, {"Out": [var("s0"), var("s1")]}, sections=[2, -1], axis=1)
    op("slice", {"Input": "s1"}, {"Out": var("sl")}, axes=[1], starts=[1], ends=[2], decrease_axis=[1])  # [N, 4]
    op("mul", {"X": "a", "Y": "w"}, {"Out": var("m")}, x_num_col_dims=1)  # [N, 3]
    op("matmul", {"X": "s0", "Y": "s0"}, {"Out": var("mm")}, transpose_Y=True, alpha=0.5)  # [N, 2, 2]
    op("reduce_sum", {"X": "mm"}, {"Out": var("rs")}, dim=[1, 2], keep_dim=False)  # [N]
    op("reduce_mean", {"X": "sl"}, {"Out": var("rm")}, dim=[-1], keep_dim=True)  # [N, 1]
    op("lookup_table", {"W": "emb", "Ids": ids}, {"Out": var("e")}, padding_idx=3)  # [N, 6]
    op("top_k", {"X": "e"}, {"Out": var("tv"), "Indices": var("ti", "int64")}, k=2)
    op("cast", {"X": "ti"}, {"Out": var("tif")}, in_dtype="int64", out_dtype="float32")
    op("fill_constant", {}, {"Out": var("c")}, shape=[1], value=0.25, dtype="float32")
    op("scale", {"X": "m"}, {"Out": var("sc")}, scale=2.0, bias=1.0, bias_after_scale=False)
    op("clip", {"X": "sc"}, {"Out": var("cl")}, min=-1.0, max=3.0)
    op("elementwise_mul", {"X": "cl", "Y": "c"}, {"Out": var("cm")})
    op("concat", {"X": ["cm", "rm", "tv", "tif"]}, {"Out": var("cat")}, axis=1)  # [N, 8]
    op("dropout", {"X": "cat"}, {"Out": var("d")}, dropout_prob=0.25, is_test=True)
    op("greater_than", {"X": "d", "Y": "c"}, {"Out": var("g", "bool")})
    op("where", {"Condition": "g", "X": "d", "Y": "cat"}, {"Out": var("wh")})
    op("softmax", {"X": "wh"}, {"Out": var("p")})
    op("mean", {"X": "p"}, {"Out": var("avg")})
    rng = np.random.default_rng(6)
    scope = paddle.static.Scope()
    scope.vars.update(
        emb=rng.normal(size=(10, 6)).astype("float32"),
        w=rng.normal(size=(24, 3)).astype("float32"),
        bias4=rng.normal(size=4).astype("float32"),
    )
    feed = {"x": rng.normal(size=(3, 4, 6)).astype("float32"), "ids": np.array([[1], [3], [9]], dtype="int64")}
    return main, scope, ["x", "ids"], ["p", "rs", "avg"], feed


def test_tensor_and_math_ops_export_as_the_executor_computes_them(tmp_path):
    _assert_exports(*tensor_and_math_ops_model(), tmp_path)


@pytest.mark.parametrize(
    "conv, pool",
    [
        ({"groups": 2, "dilations": [2, 1], "paddings": [1, 0, 2, 1], "strides": [1, 2]}, {"pooling_type": "max"}),
        ({"padding_algorithm": "SAME", "strides": [2, 2]}, {"pooling_type": "avg", "exclusive": False}),
        ({"padding_algorithm": "VALID"}, {"pooling_type": "avg", "ceil_mode": True}),
    ],
)
def test_conv_and_pool_window_attrs_export_as_the_kernels_compute(conv, pool, tmp_path):
    _assert_exports(*conv_pool_model(conv, pool), tmp_path)


def conv_pool_model(conv, pool):
    main = Program()
    block = main.global_block()
    x = block.create_var("x", (-1, 4, 9, 8), "float32", is_data=True)
    block.create_var("f", (6, 4 // conv.get("groups", 1), 3, 3), "float32", persistable=True)
    block.append_op("conv2d", {"Input": x, "Filter": "f"}, {"Output": block.create_var("c", (), "float32")}, conv)
    pool_attrs = {"ksize": [3, 2], "strides": [2, 2], "paddings": [1, 1], **pool}
    block.append_op("pool2d", {"X": "c"}, {"Out": block.create_var("p", (), "float32")}, pool_attrs)
    rng = np.random.default_rng(14)
    scope = paddle.static.Scope()
    scope.vars["f"] = rng.normal(size=block.var("f").shape).astype("float32")
    feed = {"x": rng.normal(size=(2, 4, 9, 8)).astype("float32")}
    return main, scope, ["x"], ["p"], feed


def test_reductions_logic_and_print_export(tmp_path):
    _assert_exports(*reductions_logic_and_print_model(), tmp_path, reload=False)


def reductions_logic_and_print_model():
    """reduce_max/min/prod/all/any, the logical ops and print (an Identity: a model does not print)."""
    main, startup = Program(), Program()
    with program_guard(main, startup):
        x = fluid.data("x", [-1, 4], "float32")
        layers = fluid.layers
        shown = layers.Print(x, message="x")
        positive = layers.greater_than(shown, layers.fill_constant([1], "float32", 0.0))
        small = layers.less_than(shown, layers.fill_constant([1], "float32", 0.5))
        both = layers.logical_and(positive, small)
        fetch = [
            layers.reduce_max(shown, dim=1),
            layers.reduce_min(shown, dim=[0], keep_dim=True),
            layers.reduce_prod(shown),
            layers.reduce_all(positive, dim=1),
            layers.reduce_any(layers.logical_or(layers.logical_not(both), layers.logical_xor(positive, small))),
        ]
    feed = {"x": np.random.default_rng(3).uniform(-1, 1, (3, 4)).astype("float32")}
    return main, _started(startup), ["x"], [v.name for v in fetch], feed
