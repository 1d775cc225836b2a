"""nce and hsigmoid as Paddle's layers build and train them: the ops and attrs, values against the
NumPy references of Paddle's unit tests, negative classes drawn from each sampler's distribution
and from the op's seed alone (every run and eager mode draw the same), sparse weight gradients as
SelectedRows of the rows used, and word2vec-style models trained with SGD, dense and sparse alike."""

from __future__ import annotations

import numpy as np
import pytest
import test_sequence_ops
from dygraph_helpers import fresh_mode_and_names  # noqa: F401  (autouse)
from op_cases.sampled import naive_hsigmoid

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.initializer import Constant, Uniform
from fleetgraph.ir import Program, program_guard, unique_name
from fleetgraph.ops import SelectedRows
from fleetgraph.param_attr import ParamAttr

L = fluid.layers
programs = test_sequence_ops.programs  # the fixture: fresh default programs and unique names
_only_op = test_sequence_ops._only_op


def _run(programs, feed, fetch):
    main, startup = programs
    exe, scope = fluid.Executor(), paddle.static.Scope()
    exe.run(startup, scope=scope)
    return exe.run(main, feed=feed, fetch_list=fetch, scope=scope)


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def _nce_cost(x, w, b, labels, true, prob):
    """Paddle's NCE cost of each row for the classes it sampled (test_nce.py's formula)."""
    o = _sigmoid(np.einsum("nd,nsd->ns", x, w[labels]) + b.ravel()[labels])
    k = labels.shape[1] - true
    cost = np.where(np.arange(labels.shape[1]) < true, -np.log(o / (o + k * prob)), -np.log(k * prob / (o + k * prob)))
    return cost.sum(axis=1, keepdims=True)


_W_INIT = ParamAttr(name="nce_w", initializer=Uniform(-1.0, 1.0, seed=5))
_B_INIT = ParamAttr(name="nce_b", initializer=Uniform(-1.0, 1.0, seed=6))


# -- nce ------------------------------------------------------------------------------------------


def test_nce_builds_paddles_op_and_divides_the_cost_by_the_classes_scored(programs):
    main, _ = programs
    x, label = fluid.data("x", [-1, 4], "float32"), fluid.data("label", [-1, 1], "int64")
    loss = L.nce(x, label, 20, num_neg_samples=5, seed=3, is_sparse=True, param_attr="nce_w", bias_attr="nce_b")
    op = _only_op(main, "nce")
    assert op.inputs == {"Input": ["x"], "Label": ["label"], "Weight": ["nce_w"], "Bias": ["nce_b"]}
    assert sorted(op.outputs) == ["Cost", "SampleLabels", "SampleLogits"]
    want = {"num_total_classes": 20, "num_neg_samples": 5, "seed": 3, "sampler": 0, "is_sparse": True}
    assert {k: op.attrs[k] for k in want} == want and op.attrs["remote_prefetch"]
    block = main.global_block()
    assert block.var("nce_w").shape == (20, 4) and block.var("nce_b").shape == (20, 1)
    assert block.var(op.output("SampleLabels")[0]).shape == (-1, 6)
    assert block.var(op.output("SampleLabels")[0]).dtype == "int64"
    assert block.ops[-1].type == "scale" and block.ops[-1].output("Out") == [loss.name]


def test_nce_refuses_paddles_wrong_inputs(programs):
    x, label = fluid.data("x", [-1, 4], "float32"), fluid.data("label", [-1, 1], "int64")
    with pytest.raises(TypeError, match="label 'label32' is int32; expected int64"):
        L.nce(x, fluid.data("label32", [-1, 1], "int32"), 5)
    with pytest.raises(TypeError, match="input expected a Variable"):
        L.nce(np.zeros((2, 4), "float32"), label, 5)
    with pytest.raises(paddle.ir.FleetgraphError, match="sampler 'zipf'"):
        L.nce(x, label, 5, sampler="zipf")


def test_nce_cost_is_paddles_over_the_classes_it_drew(programs):
    main, _ = programs
    x, label = fluid.data("x", [-1, 4], "float64"), fluid.data("label", [-1, 2], "int64")
    loss = L.nce(x, label, 10, num_neg_samples=3, seed=1, param_attr=_W_INIT, bias_attr=_B_INIT)
    op = _only_op(main, "nce")
    rng = np.random.default_rng(0)
    xs, ys = rng.normal(size=(6, 4)), rng.integers(0, 10, (6, 2))
    got, labels, w, b = _run(programs, {"x": xs, "label": ys}, [loss, op.output("SampleLabels")[0], "nce_w", "nce_b"])
    np.testing.assert_array_equal(labels[:, :2], ys)
    assert labels.shape == (6, 5) and ((labels >= 0) & (labels < 10)).all()
    np.testing.assert_allclose(got, _nce_cost(xs, w, b, labels, 2, 1.0 / 10) / 4, rtol=1e-10)


def _drawn(programs, sampler, custom_dist=None, seed=11, rows=4000, classes=8):
    main, _ = programs
    x, label = fluid.data("x", [-1, 2], "float32"), fluid.data("label", [-1, 1], "int64")
    L.nce(x, label, classes, num_neg_samples=5, sampler=sampler, custom_dist=custom_dist, seed=seed)
    feed = {"x": np.zeros((rows, 2), "float32"), "label": np.zeros((rows, 1), "int64")}
    (labels,) = _run(programs, feed, [_only_op(main, "nce").output("SampleLabels")[0]])
    return labels[:, 1:]


@pytest.mark.parametrize("sampler", ["uniform", "log_uniform", "custom_dist"])
def test_negative_classes_follow_the_samplers_distribution(programs, sampler):
    classes = 8
    if sampler == "uniform":
        want = np.full(classes, 1.0 / classes)
    elif sampler == "log_uniform":  # Paddle's: P(v) = log((v + 2) / (v + 1)) / log(classes), v < classes - 1
        v = np.arange(classes)
        want = np.where(v < classes - 1, np.log((v + 2.0) / (v + 1.0)) / np.log(classes), 0.0)
    else:
        want = np.array([0.05, 0.3, 0.0, 0.1, 0.25, 0.05, 0.15, 0.1])
    drawn = _drawn(programs, sampler, custom_dist=want.tolist() if sampler == "custom_dist" else None)
    freq = np.bincount(drawn.ravel(), minlength=classes) / drawn.size
    np.testing.assert_allclose(freq, want, atol=0.012)


def test_a_seeded_nce_draws_the_same_classes_on_every_run_and_another_seed_others(programs):
    main, startup = programs
    first = _drawn(programs, "uniform", seed=3, rows=50)
    exe, scope = fluid.Executor(), paddle.static.Scope()
    exe.run(startup, scope=scope)
    feed = {"x": np.zeros((50, 2), "float32"), "label": np.zeros((50, 1), "int64")}
    name = _only_op(main, "nce").output("SampleLabels")[0]
    again = [exe.run(main, feed=feed, fetch_list=[name], scope=scope)[0][:, 1:] for _ in range(2)]
    np.testing.assert_array_equal(again[0], first)
    np.testing.assert_array_equal(again[1], first)
    with program_guard(Program(), Program()), unique_name.guard():
        other = _drawn((fluid.default_main_program(), fluid.default_startup_program()), "uniform", seed=4, rows=50)
    assert (other != first).any()


def _nce_loss(xs, ys, is_sparse=False):
    return L.reduce_mean(
        L.nce(xs, ys, 10, num_neg_samples=4, seed=9, param_attr=_W_INIT, bias_attr=_B_INIT, is_sparse=is_sparse)
    )


@pytest.mark.parametrize("is_sparse", [False, True])
def test_eager_nce_draws_and_differentiates_as_the_static_program(programs, is_sparse):
    rng = np.random.default_rng(2)
    xs, ys = rng.normal(size=(8, 3)).astype("float32"), rng.integers(0, 10, (8, 1))
    x, label = fluid.data("x", [-1, 3], "float32"), fluid.data("label", [-1, 1], "int64")
    x.stop_gradient = False
    loss = _nce_loss(x, label, is_sparse)
    static, static_dx = _run(programs, {"x": xs, "label": ys}, [loss, *fluid.gradients([loss], [x])])
    paddle.disable_static()
    try:
        xt = paddle.to_tensor(xs, stop_gradient=False)
        eager = _nce_loss(xt, paddle.to_tensor(ys), is_sparse)
        eager.backward()
    finally:
        paddle.enable_static()
    np.testing.assert_allclose(eager.numpy(), static, rtol=1e-6)
    np.testing.assert_allclose(xt.grad.numpy(), static_dx, rtol=1e-5)


def test_nce_sparse_weight_gradient_holds_the_sampled_classes_rows(programs):
    main, _ = programs
    x, label = fluid.data("x", [-1, 3], "float64"), fluid.data("label", [-1, 1], "int64")
    loss = _nce_loss(x, label, is_sparse=True)
    w, b = main.global_block().var("nce_w"), main.global_block().var("nce_b")
    dw, db = fluid.gradients([loss], [w, b])
    assert dw.type == "selected_rows" and db.type != "selected_rows"  # Paddle's: only the weight's is sparse
    rng = np.random.default_rng(3)
    feed = {"x": rng.normal(size=(8, 3)), "label": rng.integers(0, 10, (8, 1))}
    labels_name = _only_op(main, "nce").output("SampleLabels")[0]
    sparse, dense_b, labels = _run(programs, feed, [dw, db, labels_name])
    sparse = sparse.item() if sparse.dtype == object else sparse
    assert isinstance(sparse, SelectedRows) and sparse.height == 10
    np.testing.assert_array_equal(sparse.rows, np.unique(labels))  # Paddle's rows: sorted, each once
    assert dense_b.shape == (10, 1) and (dense_b[np.setdiff1d(np.arange(10), labels)] == 0).all()


def test_nce_weight_gradient_sums_every_sample_of_a_frequent_class(programs):
    """Four classes over 40 rows: each class is scored about 40 times, more than one chunk of rows."""
    main, _ = programs
    x, label = fluid.data("x", [-1, 3], "float64"), fluid.data("label", [-1, 1], "int64")
    loss = L.reduce_mean(L.nce(x, label, 4, num_neg_samples=3, seed=5, param_attr=_W_INIT, bias_attr=_B_INIT))
    w, b = main.global_block().var("nce_w"), main.global_block().var("nce_b")
    dw, db = fluid.gradients([loss], [w, b])
    rng = np.random.default_rng(6)
    xs, ys = rng.normal(size=(40, 3)), rng.integers(0, 4, (40, 1))
    op = _only_op(main, "nce")
    names = [dw, db, op.output("SampleLabels")[0], op.output("SampleLogits")[0]]
    got_w, got_b, labels, o = _run(programs, {"x": xs, "label": ys}, names)
    k = 3 * 0.25  # num_neg_samples * P(class) of the uniform sampler
    g = np.where(np.arange(4) < 1, (k / (o + k)) * (o - 1.0), o * (1.0 - o) / (o + k)) / (40 * 4)
    want_w, want_b = np.zeros((4, 3)), np.zeros((4, 1))
    np.add.at(want_w, labels.ravel(), (g[:, :, None] * xs[:, None, :]).reshape(-1, 3))
    np.add.at(want_b, labels.ravel(), g.reshape(-1, 1))
    assert np.bincount(labels.ravel()).min() > 16
    np.testing.assert_allclose(got_w, want_w, rtol=1e-10)
    np.testing.assert_allclose(got_b, want_b, rtol=1e-10)


# -- hsigmoid -------------------------------------------------------------------------------------


def test_hsigmoid_gives_paddles_docstring_example(programs):
    main, _ = programs
    x = L.fill_constant([4, 3], "float32", 0.9)
    y = L.fill_constant([4, 1], "int64", 1)
    out = L.hsigmoid(x, y, num_classes=2, param_attr=Constant(0.05), bias_attr=Constant(0.0))
    op = _only_op(main, "hierarchical_sigmoid")
    assert sorted(op.inputs) == ["Bias", "Label", "W", "X"] and sorted(op.outputs) == ["Out", "PreOut"]
    assert main.global_block().var(op.input("W")[0]).shape == (1, 3)
    (got,) = _run(programs, {}, [out])
    np.testing.assert_allclose(got, np.full((4, 1), 0.62792355), rtol=1e-6)


def test_hsigmoid_checks_its_tree_as_paddle(programs):
    x, y = fluid.data("x", [-1, 3], "float32"), fluid.data("y", [-1, 1], "int64")
    with pytest.raises(ValueError, match="num_classes must not be less than 2"):
        L.hsigmoid(x, y, num_classes=1)
    with pytest.raises(ValueError, match="custom tree expects path_table"):
        L.hsigmoid(x, y, num_classes=4, is_custom=True)
    with pytest.raises(TypeError, match="expected float32 or float64"):
        L.hsigmoid(fluid.data("h", [-1, 3], "float16"), y, num_classes=4)


def test_hsigmoid_custom_tree_matches_paddles_reference_and_its_gradient(programs):
    main, _ = programs
    table, code = np.array([(0, 2, -1), (1, -1, -1)]), np.array([(1, 0, -1), (0, -1, -1)])
    x = fluid.data("x", [-1, 4], "float64")
    x.stop_gradient = False
    path_table, path_code = fluid.data("table", [-1, 3], "int64"), fluid.data("code", [-1, 3], "int64")
    y = fluid.data("y", [-1, 1], "int64")
    out = L.hsigmoid(
        x,
        y,
        3,
        param_attr=_W_INIT,
        bias_attr=_B_INIT,
        path_table=path_table,
        path_code=path_code,
        is_custom=True,
        is_sparse=True,
    )
    (dx,) = fluid.gradients([L.reduce_sum(out)], [x])
    xs = np.random.default_rng(4).normal(size=(2, 4))
    feed = {"x": xs, "table": table, "code": code, "y": np.array([[0], [1]])}
    got, pre, grad, w, b = _run(
        programs, feed, [out, _only_op(main, "hierarchical_sigmoid").output("PreOut")[0], dx, "nce_w", "nce_b"]
    )
    want = naive_hsigmoid(xs, w, None, 3, PathTable=table, PathCode=code, Bias=b)
    np.testing.assert_allclose(got, want["Out"], rtol=1e-10)
    np.testing.assert_allclose(pre, want["PreOut"], rtol=1e-10)
    # each node on the path adds (sigmoid(w.x + b) - bit) * w to d x
    nodes = [[(0, 1), (2, 0)], [(1, 0)]]
    for i, path in enumerate(nodes):
        want_dx = sum((_sigmoid(w[n] @ xs[i] + b[n, 0]) - bit) * w[n] for n, bit in path)
        np.testing.assert_allclose(grad[i], want_dx, rtol=1e-10)


def test_eager_hsigmoid_gives_paddles_example_and_its_gradient():
    paddle.disable_static()
    try:
        x = paddle.to_tensor(np.full((4, 3), 0.9, "float32"), stop_gradient=False)
        out = L.hsigmoid(x, paddle.to_tensor(np.ones((4, 1), "int64")), 2, param_attr=Constant(0.05))
        L.reduce_sum(out).backward()
    finally:
        paddle.enable_static()
    np.testing.assert_allclose(out.numpy(), np.full((4, 1), 0.62792355), rtol=1e-6)
    np.testing.assert_allclose(x.grad, np.full((4, 3), (_sigmoid(0.135) - 1.0) * 0.05), rtol=1e-5)


# -- training: word2vec-style models, dense and sparse --------------------------------------------

_VOCAB, _WINDOW = 16, 4


def _corpus(rows=48):
    """Context windows and the word each predicts: a fixed function of the context, learnable."""
    context = np.random.default_rng(5).integers(0, _VOCAB, (rows, _WINDOW))
    return context, (context.sum(axis=1, keepdims=True) * 3) % _VOCAB


def _train(loss_of, is_sparse, steps=8, lr=0.5):
    main, startup = Program(), Program()
    main.random_seed = startup.random_seed = 1
    with program_guard(main, startup), unique_name.guard():
        words = [fluid.data(f"w{i}", [-1, 1], "int64") for i in range(_WINDOW)]
        target = fluid.data("target", [-1, 1], "int64")
        embs = [L.embedding(w, [_VOCAB, 8], is_sparse=is_sparse, param_attr="emb") for w in words]
        loss = L.reduce_mean(loss_of(L.concat(embs, axis=1), target, is_sparse))
        fluid.optimizer.SGD(lr).minimize(loss)
    context, target = _corpus()
    feed = {**{f"w{i}": context[:, i : i + 1] for i in range(_WINDOW)}, "target": target}
    exe, scope = fluid.Executor(), paddle.static.Scope()
    exe.run(startup, scope=scope)
    losses = [float(exe.run(main, feed=feed, fetch_list=[loss], scope=scope)[0]) for _ in range(steps)]
    return losses, main.global_block()


def _nce_model(h, target, is_sparse):
    return L.nce(
        h, target, _VOCAB, num_neg_samples=5, seed=2, param_attr="nce_w", bias_attr="nce_b", is_sparse=is_sparse
    )


def _hsigmoid_model(h, target, is_sparse):
    return L.hsigmoid(h, target, _VOCAB, param_attr="hs_w", bias_attr="hs_b", is_sparse=is_sparse)


@pytest.mark.parametrize(
    "model, lr, weight, sparse_type",
    [(_nce_model, 5.0, "nce_w", "selected_rows"), (_hsigmoid_model, 1.0, "hs_w", "dense_tensor")],
    ids=["nce", "hsigmoid"],
)
def test_a_word2vec_model_trains_with_sgd_and_sparse_updates_equal_dense(model, lr, weight, sparse_type):
    """(hsigmoid's default tree updates its weights densely even with is_sparse, as Paddle's.)"""
    (dense, dense_block), (sparse, sparse_block) = _train(model, False, lr=lr), _train(model, True, lr=lr)
    assert all(b < a for a, b in zip(dense, dense[1:])) and dense[-1] < 0.9 * dense[0]
    np.testing.assert_allclose(sparse, dense, rtol=1e-5)
    assert dense_block.var(weight + "@GRAD").type == "dense_tensor"
    assert sparse_block.var(weight + "@GRAD").type == sparse_type
    assert sparse_block.var("emb@GRAD").type == "selected_rows"


def test_hsigmoid_custom_tree_trains_sparse_as_dense():
    """Paddle's TestHSigmoidOpWithSparseGrad: ten SGD steps over two custom paths give one loss curve."""

    def train(is_sparse):
        main, startup = Program(), Program()
        main.random_seed = startup.random_seed = 1
        with program_guard(main, startup), unique_name.guard():
            word = L.data("x", [1], dtype="int64")
            table, code = L.data("path_table", [3], dtype="int64"), L.data("path_code", [3], dtype="int64")
            label = L.data("label", [1], dtype="int64")
            emb = L.embedding(word, [3, 3], is_sparse=is_sparse, param_attr=ParamAttr(initializer=Uniform(-0.6, 0.6)))
            cost = L.hsigmoid(
                emb, label, 3, bias_attr=True, path_table=table, path_code=code, is_custom=True, is_sparse=is_sparse
            )
            loss = L.reduce_mean(cost)
            fluid.optimizer.SGD(1e-3).minimize(loss)
        exe, scope = fluid.Executor(), paddle.static.Scope()
        exe.run(startup, scope=scope)
        tables, codes, labels = [(1, 2, -1), (1, 2, -1)], [(1, 0, -1), (0, 0, -1)], [1, 4]
        losses = []
        for i in range(10):
            feed = {
                "x": np.array([[i % 2]]),
                "path_table": np.array([tables[i % 2]]),
                "path_code": np.array([codes[i % 2]]),
                "label": np.array([[labels[i % 2]]]),
            }
            losses.append(float(exe.run(main, feed=feed, fetch_list=[loss], scope=scope)[0]))
        w_grad = main.global_block().var("hierarchical_sigmoid_0.w_0@GRAD")
        return losses, w_grad.type

    (dense, dense_type), (sparse, sparse_type) = train(False), train(True)
    assert (dense_type, sparse_type) == ("dense_tensor", "selected_rows")
    np.testing.assert_allclose(sparse, dense, rtol=1e-6)
