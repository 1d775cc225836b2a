"""fluid.contrib: memory_usage and op_freq_statistic counted as Paddle's code counts, the model summary's
parameters and FLOPs, decoupled weight decay, fused_embedding_seq_pool, ctr_metric_bundle and tree_conv
against NumPy; the contrib names fleetgraph lacks say why."""

from __future__ import annotations

import numpy as np
import pytest
from op_cases.tree_conv import _EDGES, naive_tree_conv

import fleetgraph.fluid as fluid
from fleetgraph import absent
from fleetgraph.ir import Program, program_guard, unique_name


def _programs():
    main, startup = Program(), Program()
    return main, startup, program_guard(main, startup)


def _run(main, startup, feed, fetch, steps=1):
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    exe.run(startup, scope=scope)
    out = None
    for _ in range(steps):
        out = exe.run(main, feed=feed, fetch_list=fetch, scope=scope)
    return out, scope


def test_memory_usage_sums_the_written_tensors_for_the_batch_size():
    main, startup, guard = _programs()
    with guard, unique_name.guard():
        x = fluid.data("x", [None, 256])
        fluid.layers.fc(x, 128)
    # mul out and the bias add's out: 2 tensors of 10 x 128 floats = 10240 bytes = 10 KB
    low, high, unit = fluid.contrib.memory_usage(main, batch_size=10)
    assert unit == "KB" and low == pytest.approx(10 * 1.05) and high == pytest.approx(10 * 1.1)
    with pytest.raises(ValueError, match="positive"):
        fluid.contrib.memory_usage(main, 0)
    with pytest.raises(TypeError):
        fluid.contrib.memory_usage("main", 10)


def test_op_freq_statistic_counts_ops_and_producer_consumer_pairs():
    main, startup, guard = _programs()
    with guard, unique_name.guard():
        x = fluid.data("x", [None, 4])
        h = fluid.layers.fc(x, 4, act="relu")
        fluid.layers.fc(h, 2, act="relu")
    single, pairs = fluid.contrib.op_freq_statistic(main)
    assert dict(single) == {"mul": 2, "elementwise_add": 2, "relu": 2}
    assert dict(pairs) == {"mul->elementwise_add": 2, "elementwise_add->relu": 2, "relu->mul": 1}


def test_model_summary_counts_conv_and_fc_parameters_and_flops(capsys):
    main, startup, guard = _programs()
    with guard, unique_name.guard():
        img = fluid.data("img", [None, 3, 8, 8])
        conv = fluid.layers.conv2d(img, num_filters=4, filter_size=3, padding=1, act="relu")
        fluid.layers.fc(conv, 10)
    fluid.contrib.model_stat.summary(main)
    out = capsys.readouterr().out
    # conv2d: 4 * 3*3*3 = 108 params (its bias is a separate elementwise_add, which Paddle's count leaves
    # out too), 2 * 8*8*4 * 27 FLOPs; relu 4*8*8 FLOPs; fc: 256*10 + 1 params, 2560 FLOPs
    rows = [line.split("|")[1:-1] for line in out.splitlines() if line.startswith("|")]
    assert [r[1].strip() for r in rows[1:]] == ["conv2d", "relu", "mul"]
    assert [int(r[4]) for r in rows[1:]] == [108, 0, 2561]
    assert [int(r[5]) for r in rows[1:]] == [2 * 8 * 8 * 4 * 27, 4 * 8 * 8, 2560]
    assert "Total PARAMs: 2669(0.0027M)" in out


def test_decoupled_weight_decay_decays_the_parameter_before_its_update():
    SGDW = fluid.contrib.extend_with_decoupled_weight_decay(fluid.optimizer.SGD)
    main, startup, guard = _programs()
    with guard, unique_name.guard():
        x = fluid.data("x", [None, 2])
        init = fluid.initializer.NumpyArrayInitializer(np.array([[1.0], [-2.0]]))
        y = fluid.layers.fc(x, 1, param_attr=fluid.ParamAttr("w", initializer=init), bias_attr=False)
        loss = fluid.layers.reduce_sum(y)
        SGDW(weight_decay=0.1, learning_rate=0.5).minimize(loss)
    _, scope = _run(main, startup, {"x": np.array([[3.0, 4.0]], np.float32)}, [])
    w0, grad = np.array([[1.0], [-2.0]]), np.array([[3.0], [4.0]])
    np.testing.assert_allclose(np.array(scope.vars["w"]), w0 - 0.1 * w0 - 0.5 * grad, rtol=1e-6)
    with pytest.raises(TypeError, match="derived class of Optimizer"):
        fluid.contrib.extend_with_decoupled_weight_decay(object)


def test_fused_embedding_seq_pool_sums_each_sequences_embeddings():
    main, startup, guard = _programs()
    table = np.arange(12, dtype=np.float32).reshape(6, 2)
    with guard, unique_name.guard():
        ids = fluid.data("ids", [None, 1], "int64", lod_level=1)
        init = fluid.initializer.NumpyArrayInitializer(table)
        out = fluid.contrib.fused_embedding_seq_pool(ids, [6, 2], param_attr=fluid.ParamAttr(initializer=init))
    tensor = fluid.create_lod_tensor(np.array([[1], [2], [5], [0]], np.int64), [[3, 1]], fluid.CPUPlace())
    (got,), _ = _run(main, startup, {"ids": tensor}, [out])
    np.testing.assert_allclose(got, [table[1] + table[2] + table[5], table[0]])


def test_ctr_metric_bundle_accumulates_over_batches():
    main, startup, guard = _programs()
    with guard, unique_name.guard():
        pred = fluid.data("pred", [None, 1])
        label = fluid.data("label", [None, 1])
        metrics = fluid.contrib.layers.ctr_metric_bundle(pred, label)
    p = np.array([[0.9], [0.2], [0.6]], np.float32)
    y = np.array([[1.0], [0.0], [0.0]], np.float32)
    got, _ = _run(main, startup, {"pred": p, "label": y}, list(metrics), steps=2)
    e = p - y
    expected = [(e**2).sum(), np.abs(e).sum(), p.sum(), (1 / (1 + np.exp(-p))).sum(), y.sum(), 3.0]
    np.testing.assert_allclose([float(np.asarray(v).reshape(-1)[0]) for v in got], 2 * np.array(expected), rtol=1e-5)


def test_tree_conv_layer_is_the_op_plus_bias_and_activation():
    main, startup, guard = _programs()
    nodes = np.random.default_rng(1).uniform(-1, 1, (2, 17, 3)).astype(np.float32)
    filt = np.random.default_rng(2).uniform(-1, 1, (3, 3, 2, 1)).astype(np.float32)
    with guard, unique_name.guard():
        x = fluid.data("nodes", [None, 17, 3])
        edges = fluid.data("edges", [None, 16, 2], "int32")
        init = fluid.initializer.NumpyArrayInitializer(filt)
        out = fluid.contrib.layers.tree_conv(x, edges, 2, param_attr=fluid.ParamAttr(initializer=init), bias_attr=False)
    (got,), _ = _run(main, startup, {"nodes": nodes, "edges": _EDGES}, [out])
    expected = np.tanh(naive_tree_conv(_EDGES, nodes, filt, max_depth=2)["Out"])
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_contrib_names_fleetgraph_lacks_say_why():
    with pytest.raises(absent.NotInFleetgraph, match="float16"):
        _ = fluid.contrib.mixed_precision
    with pytest.raises(absent.NotInFleetgraph, match="HDFS"):
        _ = fluid.contrib.HDFSClient
