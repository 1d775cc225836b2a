"""Behaviour of the nn and metric ops that the registry harness cannot express: sparse gradients,
random masks, running statistics, build-time shape errors and larger convolutions."""

from __future__ import annotations

import numpy as np
import pytest
from op_cases.nn import batch_stats, naive_batch_norm, naive_conv2d

import fleetgraph.ops  # noqa: F401  (registers the ops)
from fleetgraph.executor import Executor, Scope
from fleetgraph.ir import KernelError, Program, ShapeError
from fleetgraph.ops import SelectedRows
from fleetgraph.transpiler import gradients


def _data(block, name, value, stop_gradient=False):
    value = np.asarray(value)
    return block.create_var(name, value.shape, value.dtype.name, is_data=True, stop_gradient=stop_gradient)


def _out(block, name, dtype="float32"):
    return block.create_var(name, dtype=dtype)


def _weighted_loss(block, var, weights):
    """sum(var * weights) as a [1] loss, so every element gets a distinct gradient."""
    w = _data(block, var.name + "_w", weights, stop_gradient=True)
    prod = _out(block, var.name + "_prod", var.dtype)
    block.append_op("elementwise_mul", {"X": [var.name], "Y": [w.name]}, {"Out": [prod.name]})
    loss = block.create_var(var.name + "_loss", (1,), var.dtype)
    block.append_op("reduce_sum", {"X": [prod.name]}, {"Out": [loss.name]}, {"reduce_all": True})
    return loss, {w.name: weights}


def _run(prog, feed, fetch, scope=None):
    return Executor().run(prog, feed=feed, fetch_list=fetch, scope=scope or Scope())


# -- embeddings -----------------------------------------------------------------------------------


def _embedding_grad(op_type, ids, is_sparse, padding_idx=-1):
    prog = Program()
    block = prog.global_block()
    table = np.random.default_rng(0).uniform(-1, 1, (7, 3))
    w = _data(block, "w", table)
    _data(block, "ids", ids)
    out = _out(block, "emb", "float64")
    block.append_op(
        op_type, {"W": ["w"], "Ids": ["ids"]}, {"Out": [out.name]}, {"is_sparse": is_sparse, "padding_idx": padding_idx}
    )
    weights = np.random.default_rng(1).uniform(0.5, 1.5, out.shape)
    loss, feed = _weighted_loss(block, out, weights)
    (grad,) = gradients([loss], [w])
    value = _run(prog, {"w": table, "ids": ids, **feed}, [grad.name])[0]
    return grad, (value.item() if value.dtype == object else value), weights


@pytest.mark.parametrize(
    "op_type, ids",
    [
        ("lookup_table", np.array([[[2], [5]], [[2], [0]]], dtype=np.int64)),
        ("lookup_table_v2", np.array([[2, 5, 2], [0, 6, 5]], dtype=np.int64)),
    ],
)
def test_sparse_embedding_grad_equals_dense_grad(op_type, ids):
    dense_var, dense, weights = _embedding_grad(op_type, ids, is_sparse=False)
    sparse_var, sparse, _ = _embedding_grad(op_type, ids, is_sparse=True)
    assert dense_var.type == "dense_tensor" and sparse_var.type == "selected_rows"
    assert isinstance(sparse, SelectedRows) and sparse.height == 7
    np.testing.assert_array_equal(sparse.rows, ids.reshape(-1))
    np.testing.assert_allclose(sparse.value, weights.reshape(-1, 3))
    np.testing.assert_allclose(sparse.to_dense(np), dense)
    expected = np.zeros((7, 3))
    np.add.at(expected, ids.reshape(-1), weights.reshape(-1, 3))
    np.testing.assert_allclose(dense, expected)


@pytest.mark.parametrize("is_sparse", [False, True])
def test_padding_idx_rows_look_up_zeros_and_get_no_gradient(is_sparse):
    ids = np.array([[1, 3, 1], [3, 3, 0]], dtype=np.int64)
    _, grad, _ = _embedding_grad("lookup_table_v2", ids, is_sparse=is_sparse, padding_idx=3)
    dense = grad.to_dense(np) if is_sparse else grad
    assert not dense[3].any()
    assert dense[1].all() and dense[0].all()

    prog = Program()
    block = prog.global_block()
    _data(block, "w", np.ones((5, 2))), _data(block, "ids", ids)
    block.append_op(
        "lookup_table_v2", {"W": ["w"], "Ids": ["ids"]}, {"Out": [_out(block, "o", "float64").name]}, {"padding_idx": 3}
    )
    out = _run(prog, {"w": np.ones((5, 2)), "ids": ids}, ["o"])[0]
    np.testing.assert_array_equal(out[..., 0], (ids != 3).astype(float))


def test_embedding_rejects_ids_outside_the_table():
    prog = Program()
    block = prog.global_block()
    _data(block, "w", np.ones((4, 2))), _data(block, "ids", np.zeros((2, 1), np.int64))
    block.append_op("lookup_table", {"W": ["w"], "Ids": ["ids"]}, {"Out": [_out(block, "o").name]})
    with pytest.raises(KernelError, match=r"lookup_table.*\[0, 4\)"):
        _run(prog, {"w": np.ones((4, 2)), "ids": np.array([[1], [4]], np.int64)}, ["o"])


def test_lookup_table_wants_ids_with_a_trailing_one():
    prog = Program()
    block = prog.global_block()
    block.create_var("w", (10, 4), "float32")
    block.create_var("ids", (-1, 3), "int64")
    with pytest.raises(ShapeError, match=r"lookup_table: Ids 'ids' \[-1, 3\]: expected a last dim of 1"):
        block.append_op("lookup_table", {"W": ["w"], "Ids": ["ids"]}, {"Out": [_out(block, "o").name]})
    block.append_op("lookup_table_v2", {"W": ["w"], "Ids": ["ids"]}, {"Out": ["o"]})
    assert block.var("o").shape == (-1, 3, 4)


# -- dropout --------------------------------------------------------------------------------------


def _dropout_program(x, **attrs):
    prog = Program()
    block = prog.global_block()
    xv = _data(block, "x", x)
    out = _out(block, "out", "float64")
    _out(block, "mask", "uint8")
    block.append_op("dropout", {"X": ["x"]}, {"Out": ["out"], "Mask": ["mask"]}, attrs)
    return prog, block, xv, out


@pytest.mark.parametrize("implementation, factor", [("downgrade_in_infer", 0.75), ("upscale_in_train", 1.0)])
def test_dropout_in_test_mode_scales_by_the_implementation(implementation, factor):
    x = np.random.default_rng(0).uniform(-1, 1, (4, 5))
    prog, block, xv, out = _dropout_program(x, dropout_prob=0.25, is_test=True, dropout_implementation=implementation)
    np.testing.assert_allclose(_run(prog, {"x": x}, ["out"])[0], x * factor)
    loss, feed = _weighted_loss(block, out, np.full(x.shape, 2.0))
    (grad,) = gradients([loss], [xv])
    np.testing.assert_allclose(_run(prog, {"x": x, **feed}, [grad.name])[0], np.full(x.shape, 2.0 * factor))


@pytest.mark.parametrize("implementation, kept_scale", [("downgrade_in_infer", 1.0), ("upscale_in_train", 1 / 0.7)])
def test_dropout_training_mask_drives_output_and_gradient(implementation, kept_scale):
    x = np.random.default_rng(0).uniform(1, 2, (50, 40))
    prog, block, xv, out = _dropout_program(
        x, dropout_prob=0.3, fix_seed=True, seed=7, dropout_implementation=implementation
    )
    weights = np.random.default_rng(2).uniform(0.5, 1.5, x.shape)
    loss, feed = _weighted_loss(block, out, weights)
    (grad,) = gradients([loss], [xv])
    got, mask, dx = _run(prog, {"x": x, **feed}, ["out", "mask", grad.name])
    assert mask.dtype == np.uint8 and set(np.unique(mask)) == {0, 1}
    assert abs(mask.mean() - 0.7) < 0.05
    np.testing.assert_allclose(got, x * mask * kept_scale)
    np.testing.assert_allclose(dx, weights * mask * kept_scale)


def test_dropout_with_fixed_seed_repeats_its_mask_and_without_varies():
    x = np.ones((30, 30))
    prog, *_ = _dropout_program(x, dropout_prob=0.5, fix_seed=True, seed=11)
    a, b = (_run(prog, {"x": x}, ["mask"])[0] for _ in range(2))
    np.testing.assert_array_equal(a, b)
    prog, *_ = _dropout_program(x, dropout_prob=0.5, seed=11)  # fix_seed False: the seed is ignored
    a, b = (_run(prog, {"x": x}, ["mask"])[0] for _ in range(2))
    assert (a != b).any()


# -- batch_norm -----------------------------------------------------------------------------------


def _bn_program(x_shape, is_test=False, momentum=0.9, **attrs):
    """batch_norm with its running statistics as persistable variables updated in place."""
    prog = Program()
    block = prog.global_block()
    block.create_var("x", x_shape, "float64", is_data=True)
    c = x_shape[1]
    for name in ("scale", "bias", "mean", "var"):
        block.create_var(name, (c,), "float64", persistable=True)
    outs = {
        "Y": ["y"],
        "MeanOut": ["mean"],
        "VarianceOut": ["var"],
        "SavedMean": ["saved_mean"],
        "SavedVariance": ["saved_var"],
    }
    for n in ("y", "saved_mean", "saved_var"):
        _out(block, n, "float64")
    block.append_op(
        "batch_norm",
        {"X": ["x"], "Scale": ["scale"], "Bias": ["bias"], "Mean": ["mean"], "Variance": ["var"]},
        outs,
        {"is_test": is_test, "momentum": momentum, **attrs},
    )
    scope = Scope()
    rng = np.random.default_rng(3)
    scope.vars.update(
        scale=rng.uniform(0.5, 2, c), bias=rng.uniform(-1, 1, c), mean=rng.uniform(-1, 1, c), var=rng.uniform(0.5, 2, c)
    )
    return prog, block, scope


@pytest.mark.parametrize("shape", [(4, 3, 2, 5), (6, 3)])
def test_batch_norm_training_updates_running_stats_in_place(shape):
    prog, block, scope = _bn_program((-1,) + shape[1:], momentum=0.8)
    assert block.var("y").shape == (-1,) + shape[1:] and block.var("saved_mean").shape == (3,)
    mean0, var0 = scope.vars["mean"].copy(), scope.vars["var"].copy()
    mean_buffer = scope.vars["mean"]
    x = np.random.default_rng(0).uniform(-2, 3, shape)
    y, saved_mean, saved_var = _run(prog, {"x": x}, ["y", "saved_mean", "saved_var"], scope)
    m, v = batch_stats(x)
    np.testing.assert_allclose(y, naive_batch_norm(x, scope.vars["scale"], scope.vars["bias"], m, v, 1e-5))
    np.testing.assert_allclose(saved_mean, m)
    np.testing.assert_allclose(saved_var, 1 / np.sqrt(v + 1e-5))
    np.testing.assert_allclose(scope.vars["mean"], 0.8 * mean0 + 0.2 * m)
    np.testing.assert_allclose(scope.vars["var"], 0.8 * var0 + 0.2 * v)  # the biased batch variance
    assert scope.vars["mean"] is mean_buffer
    _run(prog, {"x": x}, ["y"], scope)
    np.testing.assert_allclose(scope.vars["mean"], 0.8 * (0.8 * mean0 + 0.2 * m) + 0.2 * m)


@pytest.mark.parametrize("attrs", [{"is_test": True}, {"use_global_stats": True}])
def test_batch_norm_global_stats_normalise_with_running_stats_and_keep_them(attrs):
    prog, _, scope = _bn_program((-1, 3, 2, 2), **attrs)
    mean0, var0 = scope.vars["mean"].copy(), scope.vars["var"].copy()
    x = np.random.default_rng(0).uniform(-2, 3, (2, 3, 2, 2))
    y = _run(prog, {"x": x}, ["y"], scope)[0]
    np.testing.assert_allclose(y, naive_batch_norm(x, scope.vars["scale"], scope.vars["bias"], mean0, var0, 1e-5))
    np.testing.assert_array_equal(scope.vars["mean"], mean0)
    np.testing.assert_array_equal(scope.vars["var"], var0)


def test_batch_norm_rejects_statistics_of_the_wrong_width():
    prog = Program()
    block = prog.global_block()
    block.create_var("x", (-1, 4, 8, 8), "float32")
    for name, c in (("scale", 4), ("bias", 4), ("mean", 3), ("var", 4)):
        block.create_var(name, (c,), "float32")
    with pytest.raises(
        ShapeError,
        match=r"batch_norm: Mean 'mean': expected shape \[4\] .*'x' \[-1, 4, 8, 8\].*"
        r"got \[3\]",
    ):
        block.append_op(
            "batch_norm",
            {"X": ["x"], "Scale": ["scale"], "Bias": ["bias"], "Mean": ["mean"], "Variance": ["var"]},
            {"Y": [_out(block, "y").name]},
        )


# -- conv2d ---------------------------------------------------------------------------------------


def _conv_program(x_shape, w_shape, dtype="float32", **attrs):
    prog = Program()
    block = prog.global_block()
    block.create_var("x", x_shape, dtype, is_data=True)
    block.create_var("conv2d_0.w_0", w_shape, dtype, is_data=True)
    block.create_var("y", dtype=dtype)
    block.append_op("conv2d", {"Input": ["x"], "Filter": ["conv2d_0.w_0"]}, {"Output": ["y"]}, attrs)
    return prog, block


def test_conv2d_shape_error_names_filter_and_input():
    with pytest.raises(ShapeError) as err:
        _conv_program((-1, 3, 32, 32), (8, 4, 3, 3))
    assert str(err.value) == (
        "conv2d: Filter 'conv2d_0.w_0' [8, 4, 3, 3] expects 4 input channels (groups 1), got Input 'x' [-1, 3, 32, 32]"
    )
    with pytest.raises(ShapeError, match=r"not divisible by groups 3"):
        _conv_program((-1, 6, 8, 8), (8, 2, 3, 3), groups=3)
    with pytest.raises(ShapeError, match=r"does not fit Input 'x' \[-1, 3, 2, 2\]: output size \[0, 0\]"):
        _conv_program((-1, 3, 2, 2), (4, 3, 3, 3))
    with pytest.raises(ShapeError, match=r"data_format 'NCWH': expected NCHW, NHWC, NCDHW or NDHWC"):
        _conv_program((-1, 3, 8, 8), (4, 3, 3, 3), data_format="NCWH")


@pytest.mark.parametrize(
    "attrs, out_shape",
    [
        ({}, (-1, 8, 30, 30)),
        ({"paddings": [1, 1]}, (-1, 8, 32, 32)),
        ({"strides": [2, 2], "paddings": [1, 1]}, (-1, 8, 16, 16)),
        ({"padding_algorithm": "SAME", "strides": [3, 3]}, (-1, 8, 11, 11)),
        ({"dilations": [2, 2]}, (-1, 8, 28, 28)),
        ({"paddings": [0, 1, 2, 3]}, (-1, 8, 31, 35)),
    ],
)
def test_conv2d_output_shape_keeps_the_unknown_batch(attrs, out_shape):
    _, block = _conv_program((-1, 3, 32, 32), (8, 3, 3, 3), **attrs)
    assert block.var("y").shape == out_shape


@pytest.mark.parametrize(
    "n, c, hw, m, k, attrs",
    [
        (2, 4, (7, 6), 6, (3, 3), {"groups": 2, "strides": [2, 1], "paddings": [1, 2], "dilations": [1, 2]}),
        (3, 3, (6, 6), 4, (1, 1), {"strides": [2, 2]}),
        (1, 4, (5, 5), 4, (3, 3), {"groups": 4, "paddings": [1, 1]}),  # depthwise
        (2, 2, (6, 5), 3, (2, 3), {"padding_algorithm": "SAME", "strides": [2, 2]}),
    ],
)
def test_conv2d_groups_stride_padding_dilation_match_naive(n, c, hw, m, k, attrs):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((n, c) + hw)
    w = rng.standard_normal((m, c // attrs.get("groups", 1)) + k)
    prog, block = _conv_program((-1, c) + hw, w.shape, "float64", **attrs)
    y = block.var("y")
    weights = rng.uniform(0.5, 1.5, _run(prog, {"x": x, "conv2d_0.w_0": w}, ["y"])[0].shape)
    loss, feed = _weighted_loss(block, y, weights)
    dx, dw = gradients([loss], [block.var("x"), block.var("conv2d_0.w_0")])
    got, gx, gw = _run(prog, {"x": x, "conv2d_0.w_0": w, **feed}, ["y", dx.name, dw.name])

    if attrs.get("padding_algorithm") == "SAME":  # 6 -> 3 rows needs 1 pad row, 5 -> 3 cols needs 2 pad cols
        pads = (0, 1, 1, 1)
    else:
        p = attrs.get("paddings", [0, 0])
        pads = (p[0], p[0], p[1], p[1])
    args = dict(
        stride=attrs.get("strides", (1, 1)),
        pads=pads,
        dil=attrs.get("dilations", (1, 1)),
        groups=attrs.get("groups", 1),
    )
    np.testing.assert_allclose(got, naive_conv2d(x, w, **args), rtol=1e-10, atol=1e-10)
    # central differences of the naive convolution at a few elements of each input
    eps = 1e-6
    for arr, grad in ((x, gx), (w, gw)):
        for idx in ((0,) * 4, tuple(d // 2 for d in arr.shape), tuple(d - 1 for d in arr.shape)):
            plus, minus = arr.copy(), arr.copy()
            plus[idx] += eps
            minus[idx] -= eps
            pair = (lambda a: (a, w)) if arr is x else (lambda a: (x, a))
            numeric = ((naive_conv2d(*pair(plus), **args) - naive_conv2d(*pair(minus), **args)) * weights).sum()
            np.testing.assert_allclose(grad[idx], numeric / (2 * eps), rtol=1e-6, atol=1e-8)


def test_conv2d_grad_skips_the_input_gradient_nobody_needs():
    prog, block = _conv_program((-1, 2, 5, 5), (3, 2, 3, 3), "float64")
    block.var("x").stop_gradient = True
    loss, feed = _weighted_loss(block, block.var("y"), np.ones((2, 3, 3, 3)))
    (dw,) = gradients([loss], [block.var("conv2d_0.w_0")])
    grad_op = next(op for op in block.ops if op.type == "conv2d_grad")
    assert "Input@GRAD" not in grad_op.outputs and grad_op.outputs["Filter@GRAD"] == [dw.name]
    x = np.random.default_rng(0).standard_normal((2, 2, 5, 5))
    got = _run(prog, {"x": x, "conv2d_0.w_0": np.ones((3, 2, 3, 3)), **feed}, [dw.name])[0]
    expected = sum(x[:, :, i : i + 3, j : j + 3].sum(axis=0) for i in range(3) for j in range(3))
    np.testing.assert_allclose(got, np.broadcast_to(expected, (3, 2, 3, 3)))


# -- pool2d ---------------------------------------------------------------------------------------


def _pool_program(x_shape, **attrs):
    prog = Program()
    block = prog.global_block()
    block.create_var("x", x_shape, "float64", is_data=True)
    block.create_var("y", dtype="float64")
    block.append_op("pool2d", {"X": ["x"]}, {"Out": ["y"]}, attrs)
    return prog, block


@pytest.mark.parametrize(
    "attrs, out_shape",
    [
        ({"ksize": [2, 2], "strides": [2, 2]}, (-1, 16, 16, 16)),
        ({"ksize": [3, 3], "strides": [2, 2], "paddings": [1, 1]}, (-1, 16, 16, 16)),
        ({"ksize": [3, 3], "strides": [2, 2], "ceil_mode": True}, (-1, 16, 16, 16)),
        ({"ksize": [3, 3], "strides": [2, 2]}, (-1, 16, 15, 15)),
        ({"global_pooling": True, "pooling_type": "avg"}, (-1, 16, 1, 1)),
        ({"adaptive": True, "ksize": [1, 1], "pooling_type": "avg"}, (-1, 16, 1, 1)),
        ({"adaptive": True, "ksize": [5, 7]}, (-1, 16, 5, 7)),
    ],
)
def test_pool2d_output_shape_keeps_the_unknown_batch(attrs, out_shape):
    _, block = _pool_program((-1, 16, 32, 32), **attrs)
    assert block.var("y").shape == out_shape


def test_pool2d_shape_errors_name_the_input():
    with pytest.raises(ShapeError, match=r"pool2d: input X 'x': expected rank 4, got shape \[-1, 16\]"):
        _pool_program((-1, 16), ksize=[2, 2])
    with pytest.raises(ShapeError, match=r"ksize \[5, 5\].*X 'x' \[-1, 3, 4, 4\]: output size \[0, 0\]"):
        _pool_program((-1, 3, 4, 4), ksize=[5, 5])
    with pytest.raises(ShapeError, match=r"pooling_type 'sum'"):
        _pool_program((-1, 3, 4, 4), pooling_type="sum")


def test_max_pool_gradient_goes_to_the_first_maximum_of_a_tied_window():
    x = np.array([[[[1.0, 3.0], [3.0, 0.0]]]])
    prog, block = _pool_program((1, 1, 2, 2), ksize=[2, 2], strides=[2, 2])
    loss, feed = _weighted_loss(block, block.var("y"), np.full((1, 1, 1, 1), 5.0))
    (dx,) = gradients([loss], [block.var("x")])
    got = _run(prog, {"x": x, **feed}, [dx.name])[0]
    np.testing.assert_array_equal(got, [[[[0.0, 5.0], [0.0, 0.0]]]])


# -- top_k, accuracy ------------------------------------------------------------------------------


def test_accuracy_counts_rows_whose_label_is_among_the_top_k():
    prog = Program()
    block = prog.global_block()
    block.create_var("logits", (-1, 4), "float32", is_data=True)
    block.create_var("label", (-1, 1), "int64", is_data=True)
    for name, dtype in (
        ("top", "float32"),
        ("idx", "int64"),
        ("acc", "float32"),
        ("correct", "int32"),
        ("total", "int32"),
    ):
        block.create_var(name, dtype=dtype)
    block.append_op("top_k", {"X": ["logits"]}, {"Out": ["top"], "Indices": ["idx"]}, {"k": 2})
    block.append_op(
        "accuracy",
        {"Out": ["top"], "Indices": ["idx"], "Label": ["label"]},
        {"Accuracy": ["acc"], "Correct": ["correct"], "Total": ["total"]},
    )
    assert block.var("idx").shape == (-1, 2) and block.var("acc").shape == (1,)
    logits = np.array([[0.1, 0.9, 0.5, 0.0], [0.8, 0.1, 0.0, 0.3], [0.2, 0.3, 0.1, 0.9]], np.float32)
    label = np.array([[2], [1], [3]], np.int64)
    idx, acc, correct, total = _run(prog, {"logits": logits, "label": label}, ["idx", "acc", "correct", "total"])
    np.testing.assert_array_equal(idx, [[1, 2], [0, 3], [3, 1]])
    assert acc.dtype == np.float32 and correct.dtype == np.int32 and total.dtype == np.int32
    np.testing.assert_allclose(acc, [2 / 3])
    np.testing.assert_array_equal(correct, [2])
    np.testing.assert_array_equal(total, [3])


def test_top_k_rejects_k_larger_than_the_last_dim():
    prog = Program()
    block = prog.global_block()
    block.create_var("x", (-1, 3), "float32")
    with pytest.raises(ShapeError, match=r"top_k: k 4: expected 1 <= k <= 3, the last dim of X 'x' \[-1, 3\]"):
        block.append_op(
            "top_k", {"X": ["x"]}, {"Out": [_out(block, "o").name], "Indices": [_out(block, "i").name]}, {"k": 4}
        )


def test_top_k_gradient_reads_only_the_values_gradient():
    prog = Program()
    block = prog.global_block()
    xv = _data(block, "x", np.zeros((2, 4)))
    block.create_var("top", dtype="float64")
    block.create_var("idx", dtype="int64")
    block.append_op("top_k", {"X": ["x"]}, {"Out": ["top"], "Indices": ["idx"]}, {"k": 2})
    loss, feed = _weighted_loss(block, block.var("top"), np.array([[1.0, 2.0], [3.0, 4.0]]))
    (dx,) = gradients([loss], [xv])
    grad_op = next(op for op in block.ops if op.type == "top_k_grad")
    assert [s for s in grad_op.inputs if s.endswith("@GRAD")] == ["Out@GRAD"]
    x = np.array([[0.3, 0.9, 0.1, 0.5], [0.7, 0.2, 0.8, 0.0]])
    np.testing.assert_array_equal(_run(prog, {"x": x, **feed}, [dx.name])[0], [[0, 1, 0, 2], [4, 0, 3, 0]])
