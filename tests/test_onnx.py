"""ONNX export: the executor is the oracle for exported models, run by onnxruntime and by onnx's
reference evaluator, and loaded back (test_onnx_load.py has the models written with onnx.helper)."""

import os
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx.reference import ReferenceEvaluator  # noqa: E402

import fleetgraph as paddle  # noqa: E402
import fleetgraph.fluid as fluid  # noqa: E402
from fleetgraph.ir import FleetgraphError, Program, program_guard, unique_name  # noqa: E402
from fleetgraph.ir.prune import prune_for_inference  # noqa: E402
from fleetgraph.onnx import export, load  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models import fit_a_line_2x, mlp  # noqa: E402

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
