"""Fluid 1.8's loss, CTC and CTR layers as Paddle builds and runs them: the ops and attrs they
append, values in static and eager mode against the NumPy references of Paddle's unit tests
(tests/op_cases/losses.py and ctc.py) or numbers Paddle printed, gradients where Paddle defines
them by its own rule (cvm, warpctc's norm_by_times), state the ops keep (center_loss's centers,
auc's histograms) and py_func's Python functions inside a training program."""

from __future__ import annotations

import numpy as np
import pytest
import test_sequence_ops
from dygraph_helpers import fresh_mode_and_names  # noqa: F401  (autouse)
from op_cases import losses as cases
from op_cases.ctc import _ctc_align_padded, _levenshtein

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.initializer import Constant
from fleetgraph.ops.lod_tensor import LoDTensor
from fleetgraph.param_attr import ParamAttr
from fleetgraph.transpiler import append_backward, gradients

L = fluid.layers
programs = test_sequence_ops.programs  # the fixture: fresh default programs and unique names
_only_op = test_sequence_ops._only_op


def _run(feed, fetch, main=None, startup=None, scope=None):
    main = main or fluid.default_main_program()
    exe, scope = fluid.Executor(), scope or paddle.static.Scope()
    exe.run(startup or fluid.default_startup_program(), scope=scope)
    return exe.run(main, feed=feed, fetch_list=fetch, scope=scope)


def _data(name, value, lod_level=0):
    array = value.data if isinstance(value, LoDTensor) else value
    return fluid.data(name, [-1, *array.shape[1:]], array.dtype.name, lod_level=lod_level)


def _eager(layer, *args, **kw):
    with fluid.dygraph.guard():
        out = layer(*[fluid.dygraph.to_variable(a) if isinstance(a, np.ndarray) else a for a in args], **kw)
        return out.numpy()


# -- elementwise and pairwise losses: the layer, its op, static and eager values -------------------

_x, _y = cases.rand(5, 4, low=-3, high=3).astype("float32"), cases.rand(5, 4, low=0, high=1, seed=1).astype("float32")
_col = [cases.rand(6, 1, low=0, high=1, seed=s).astype("float32") for s in (2, 3, 4)]
_sign = np.where(cases.rand(6, 1, seed=5) > 0, 1.0, -1.0).astype("float32")
_LAYERS = {
    "sigmoid_ce_normalized": (
        lambda x, y: L.sigmoid_cross_entropy_with_logits(x, y, ignore_index=-1, normalize=True),
        (_x, np.where(_y > 0.3, _y, -1.0).astype("float32")),
        lambda x, y: cases._sigmoid_ce(x, y, -1, True)["Out"],
        "sigmoid_cross_entropy_with_logits",
    ),
    "huber_loss": (
        lambda x, y: L.huber_loss(x, y, delta=0.3),
        (_col[0], _col[1]),
        lambda x, y: cases._huber(x, y, 0.3)["Out"],
        "huber_loss",
    ),
    "kldiv_batchmean": (
        lambda x, y: L.kldiv_loss(x, y, reduction="batchmean"),
        (_x, _y),
        lambda x, y: cases._kldiv(x, y, "batchmean")["Loss"],
        "kldiv_loss",
    ),
    "smooth_l1_weighted": (
        lambda x, y, w: L.smooth_l1(x, y, inside_weight=w, outside_weight=w, sigma=2.0),
        (_x, _y, _y),
        lambda x, y, w: cases._smooth_l1(x, y, 2.0, w, w)["Out"],
        "smooth_l1_loss",
    ),
    "margin_rank_loss": (
        lambda label, a, b: L.margin_rank_loss(label, a, b, margin=0.2),
        (_sign, _col[0], _col[1]),
        lambda label, a, b: np.maximum(0, -label * (a - b) + 0.2),
        "margin_rank_loss",
    ),
    "rank_loss": (
        L.rank_loss,
        (_col[2], _col[0], _col[1]),
        lambda label, a, b: cases.rank_loss_reference(label, a, b),
        "rank_loss",
    ),
    "bpr_loss": (
        L.bpr_loss,
        (_y, np.array([[0], [3], [1], [2], [2]], dtype="int64")),
        lambda x, label: cases._bpr(x.astype("float64"), label)["Y"],
        "bpr_loss",
    ),
    "teacher_student": (
        L.teacher_student_sigmoid_loss,
        (_col[0] * 4 - 2, np.array([[-2.0], [-1.0], [0.3], [1.7], [-0.5], [0.9]], dtype="float32")),
        lambda x, label: cases._tss(x.astype("float64"), label)["Y"],
        "teacher_student_sigmoid_loss",
    ),
    "label_smooth_prior": (
        lambda x, p: L.label_smooth(x, prior_dist=p, epsilon=0.2),
        (np.eye(4, dtype="float32")[[1, 0, 3]], np.array([[0.1, 0.2, 0.3, 0.4]], dtype="float32")),
        lambda x, p: 0.8 * x + 0.2 * p,
        "label_smooth",
    ),
    "cos_sim_one_y_row": (
        L.cos_sim,
        (_x, _x[:1] + 0.5),
        lambda x, y: cases._cos_sim(x, y)["Out"],
        "cos_sim",
    ),
}


@pytest.mark.parametrize("key", sorted(_LAYERS))
def test_loss_layer_appends_paddles_op_and_matches_the_reference_static_and_eager(programs, key):
    layer, inputs, reference, op_type = _LAYERS[key]
    main, _ = programs
    out = layer(*[_data(f"in{i}", v) for i, v in enumerate(inputs)])
    _only_op(main, op_type)
    want = reference(*inputs)
    (got,) = _run({f"in{i}": v for i, v in enumerate(inputs)}, [out])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_eager(layer, *inputs), want, rtol=1e-5, atol=1e-6)


def test_label_smooth_refuses_an_epsilon_outside_0_1(programs):
    with pytest.raises(ValueError, match="epsilon"):
        L.label_smooth(_data("x", _x), epsilon=1.5)


def test_loss_layers_refuse_a_label_of_the_wrong_type(programs):
    with pytest.raises(TypeError, match="teacher_student_sigmoid_loss"):
        L.teacher_student_sigmoid_loss([512, 1], _data("label", _col[0]))
    with pytest.raises(TypeError, match="rank_loss"):
        L.rank_loss(_data("label64", _col[0].astype("float64")), _data("a", _col[1]), _data("b", _col[2]))


def test_dice_loss_is_one_minus_the_dice_coefficient_averaged(programs):
    probs = np.abs(cases.rand(3, 4, low=0.1, high=1.0)).astype("float32")
    label = np.array([[1], [3], [0]], dtype="int64")
    out = L.dice_loss(_data("p", probs), _data("label", label))
    one_hot = np.eye(4)[label[:, 0]]
    want = np.mean(1 - 2 * (probs * one_hot).sum(1) / (probs.sum(1) + one_hot.sum(1) + 1e-5))
    np.testing.assert_allclose(_run({"p": probs, "label": label}, [out])[0], [want], rtol=1e-5)


def test_npair_loss_follows_paddles_composition(programs):
    anchor, positive = cases.rand(4, 3).astype("float32"), cases.rand(4, 3, seed=9).astype("float32")
    labels = np.array([1.0, 2.0, 1.0, 3.0], dtype="float32")
    out = L.npair_loss(fluid.data("a", [4, 3]), fluid.data("p", [4, 3]), fluid.data("l", [4]), l2_reg=0.002)
    same = (labels[:, None] == labels[None, :]).astype(np.float64)
    soft = same / same.sum(1, keepdims=True)
    logits = anchor @ positive.T
    log_softmax = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    ce = -(soft * log_softmax).sum(1, keepdims=True)
    l2 = ((anchor**2).sum(1).mean() + (positive**2).sum(1).mean()) * 0.25 * 0.002
    want = l2 + (soft * ce).sum(0).mean()
    got = _run({"a": anchor, "p": positive, "l": labels}, [out])[0]
    np.testing.assert_allclose(got, [want], rtol=1e-5)


def test_center_loss_moves_the_centers_toward_each_batch(programs):
    main, _ = programs
    x = cases.rand(6, 4).astype("float32")
    label = np.array([[0], [2], [2], [4], [0], [2]], dtype="int64")
    attr = ParamAttr(name="centers", initializer=Constant(0.5))
    loss = L.center_loss(_data("x", x), _data("label", label), num_classes=5, alpha=0.1, param_attr=attr)
    op = _only_op(main, "center_loss")
    assert op.inputs["CenterUpdateRate"] == ["centerloss_alpha"] and op.outputs["CentersOut"] == ["centers"]
    assert op.attrs["cluster_num"] == 5 and op.attrs["need_update"]
    scope = paddle.static.Scope()
    centers = np.full((5, 4), 0.5)
    for step in range(2):
        startup = None if step == 0 else fluid.Program()  # the startup program once
        got, now = _run({"x": x, "label": label}, [loss, "centers"], startup=startup, scope=scope)
        diff = x - centers[label[:, 0]]
        np.testing.assert_allclose(got, (diff * diff).sum(1, keepdims=True) / 2, rtol=1e-5)
        counts = 1 + np.bincount(label[:, 0], minlength=5)[:, None]
        centers = centers + 0.1 * np.stack([diff[label[:, 0] == c].sum(0) for c in range(5)]) / counts
        np.testing.assert_allclose(now, centers, rtol=1e-5)
    assert fluid.default_main_program().global_block().var("centers").stop_gradient  # no gradient reaches them


def test_mean_iou_returns_the_mean_and_the_per_class_counts(programs):
    pred = np.array([[0, 1, 2], [2, 2, 1]], dtype="int32")
    label = np.array([[0, 1, 1], [2, 0, 1]], dtype="int32")
    outs = L.mean_iou(_data("p", pred), _data("l", label), num_classes=4)
    want = cases._mean_iou(pred, label, 4)
    got = _run({"p": pred, "l": label}, list(outs))
    for g, key in zip(got, ("OutMeanIou", "OutWrong", "OutCorrect")):
        np.testing.assert_allclose(g, want[key], rtol=1e-6)


# -- CTR layers -----------------------------------------------------------------------------------


def test_cvm_with_use_cvm_logs_show_and_click_and_its_gradient_is_paddles_rule(programs):
    """test_cvm_op.py's TestCVMOpWithOutLodTensor1: the gradient's show/click columns are CVM."""
    x = cases.rand(2, 11, low=0, high=1).astype("float32")
    cvm = np.tile([[0.6, 0.4]], (2, 1)).astype("float32")
    xv = _data("x", x)
    xv.stop_gradient = False
    out = L.continuous_value_model(xv, _data("cvm", cvm), use_cvm=True)
    (dx_var,) = gradients([fluid.layers.mean(out)], [xv])
    got, dx = _run({"x": x, "cvm": cvm}, [out, dx_var])
    np.testing.assert_allclose(got, cases._cvm(x, True)["Y"], rtol=1e-6)
    want = np.full((2, 11), 1.0 / 22, dtype="float32")
    want[:, :2] = cvm
    np.testing.assert_allclose(dx, want, rtol=1e-6)


def test_filter_by_instag_keeps_the_instances_with_a_wanted_tag(programs):
    ins = LoDTensor(cases.rand(8, 3).astype("float32"), [[0, 1, 3, 6, 8]])
    tags = cases._TAGS
    out, weight = L.filter_by_instag(
        _data("ins", ins, 1), _data("tag", tags, 1), fluid.data("f", [2], "int64"), is_lod=True
    )
    main = fluid.default_main_program()
    got = fluid.Executor().run(
        main, feed={"ins": ins, "tag": tags, "f": np.array([1, 5])}, fetch_list=[out, weight], return_numpy=False
    )
    want = cases._filter_by_instag(ins, tags, np.array([1, 5]), True, 0)
    assert got[0].lod() == want["Out"].lod()
    np.testing.assert_allclose(got[0].data, want["Out"].data)
    np.testing.assert_array_equal(np.asarray(got[1]), [[1.0], [1.0], [1.0]])


def test_selected_rows_layers_merge_and_densify_a_sparse_gradient(programs):
    ids = fluid.data("ids", [-1, 1], "int64")
    emb = L.embedding(ids, size=[6, 2], is_sparse=True, param_attr=ParamAttr(name="w", initializer=Constant(1.0)))
    append_backward(fluid.layers.reduce_sum(emb))
    grad = fluid.default_main_program().global_block().var("w@GRAD")
    dense = L.get_tensor_from_selected_rows(L.merge_selected_rows(grad))
    (got,) = _run({"ids": np.array([[3], [1], [3]])}, [dense])
    np.testing.assert_array_equal(got, [[1.0, 1.0], [2.0, 2.0]])  # rows 1 and 3, row 3 summed twice
    with pytest.raises(TypeError, match="SELECTED_ROWS"):
        L.get_tensor_from_selected_rows(emb)


# -- CTC --------------------------------------------------------------------------------------------

# paddle.nn.functional.ctc_loss (the warpctc op) of Paddle 3.3.1 on these padded logits, blank 0
_CTC_LOGITS = np.array(
    [
        [
            [0.27392337, -0.46042657, -0.91805297, -0.96694475, 0.62654048],
            [0.82551116, 0.21327156, 0.45899311, 0.08724998, 0.87014484],
        ],
        [
            [0.63170713, -0.99452299, 0.71480852, -0.93282884, 0.45931089],
            [-0.64868873, 0.72635782, 0.08292244, -0.4005762, -0.15462556],
        ],
        [
            [-0.94336069, -0.75143343, 0.34124884, 0.29437903, 0.23077023],
            [-0.23264489, 0.99441987, 0.9616707, 0.37108397, 0.30091855],
        ],
        [
            [0.37689346, -0.22215715, -0.72980702, 0.44297668, 0.05070864],
            [-0.37951624, -0.02832928, 0.77897567, 0.86808705, -0.28440961],
        ],
    ],
    dtype="float32",
)
_CTC_LOSS = [4.26642656, 4.00547075]
_CTC_GRAD = np.array(
    [
        [
            [0.08759996, -0.66423357, 0.08686397, 0.08271919, 0.40705034],
            [-0.44554904, 0.14422835, 0.18440221, -0.16126238, 0.27818075],
        ],
        [
            [-0.08190066, -0.15577379, -0.07749763, 0.06274011, 0.25243169],
            [-0.2004922, 0.39734375, 0.20879783, -0.57029885, 0.16464943],
        ],
        [
            [-0.02346398, 0.02796523, -0.53881198, 0.27564892, 0.25866124],
            [-0.22054225, 0.30331442, 0.293542, -0.52791786, 0.1516035],
        ],
        [[-0.41899496, 0.14968327, -0.2184276, 0.29109669, 0.19664252], [0.0, 0.0, 0.0, 0.0, 0.0]],
    ]
)
_CTC_LABELS = np.array([[1, 2], [3, 0]], dtype="int32")
_CTC_LENGTHS = {"il": np.array([4, 3], dtype="int64"), "ll": np.array([2, 1], dtype="int64")}


def _padded_ctc(norm_by_times=False):
    logits = fluid.data("logits", [4, 2, 5], "float32")
    logits.stop_gradient = False
    loss = L.warpctc(
        logits,
        fluid.data("label", [2, 2], "int32"),
        blank=0,
        norm_by_times=norm_by_times,
        input_length=fluid.data("il", [2], "int64"),
        label_length=fluid.data("ll", [2], "int64"),
    )
    (grad,) = gradients([fluid.layers.reduce_sum(loss)], [logits])
    return _run({"logits": _CTC_LOGITS, "label": _CTC_LABELS, **_CTC_LENGTHS}, [loss, grad])


def test_warpctc_on_a_padded_batch_matches_paddles_loss_and_gradient(programs):
    loss, grad = _padded_ctc()
    np.testing.assert_allclose(loss.ravel(), _CTC_LOSS, rtol=1e-5)
    np.testing.assert_allclose(grad, _CTC_GRAD, atol=2e-6)


def test_warpctc_norm_by_times_divides_the_gradient_not_the_loss(programs):
    loss, grad = _padded_ctc(norm_by_times=True)
    np.testing.assert_allclose(loss.ravel(), _CTC_LOSS, rtol=1e-5)
    np.testing.assert_allclose(grad, _CTC_GRAD / np.array([4.0, 3.0])[None, :, None], atol=1e-6)


def test_warpctc_on_lod_sequences_matches_the_padded_batch(programs):
    rows = np.concatenate([_CTC_LOGITS[:4, 0], _CTC_LOGITS[:3, 1]])
    logits = fluid.data("logits", [-1, 5], "float32", lod_level=1)
    logits.stop_gradient = False
    loss = L.warpctc(logits, fluid.data("label", [-1, 1], "int32", lod_level=1), blank=0)
    (grad,) = gradients([fluid.layers.reduce_sum(loss)], [logits])
    feed = {
        "logits": LoDTensor(rows, [[0, 4, 7]]),
        "label": LoDTensor(np.array([[1], [2], [3]], dtype="int32"), [[0, 2, 3]]),
    }
    got, grad = fluid.Executor().run(
        fluid.default_main_program(), feed=feed, fetch_list=[loss, grad], return_numpy=False
    )
    np.testing.assert_allclose(np.asarray(got).ravel(), _CTC_LOSS, rtol=1e-5)
    assert grad.lod() == [[0, 4, 7]]
    np.testing.assert_allclose(grad.data, np.concatenate([_CTC_GRAD[:4, 0], _CTC_GRAD[:3, 1]]), atol=2e-6)


def test_warpctc_runs_eagerly_with_its_gradient():
    with fluid.dygraph.guard():
        logits = fluid.dygraph.to_variable(_CTC_LOGITS)
        logits.stop_gradient = False
        lengths = [fluid.dygraph.to_variable(v) for v in _CTC_LENGTHS.values()]
        loss = L.warpctc(logits, fluid.dygraph.to_variable(_CTC_LABELS), 0, False, *lengths)
        fluid.layers.reduce_sum(loss).backward()
        np.testing.assert_allclose(loss.numpy().ravel(), _CTC_LOSS, rtol=1e-5)
        np.testing.assert_allclose(logits.gradient(), _CTC_GRAD, atol=2e-6)


def test_ctc_greedy_decoder_takes_the_best_path_and_merges_it(programs):
    """Paddle's docstring example: per-step argmax, repeats merged, blanks (0) dropped."""
    probs = np.eye(4, dtype="float32")[[0, 1, 1, 0, 2, 2, 3, 1, 1, 0, 0]] + 0.01
    x = _data("x", LoDTensor(probs, [[0, 6, 11]]), 1)
    out = L.ctc_greedy_decoder(x, blank=0)
    main = fluid.default_main_program()
    (got,) = fluid.Executor().run(
        main, feed={"x": LoDTensor(probs, [[0, 6, 11]])}, fetch_list=[out], return_numpy=False
    )
    assert got.lod() == [[0, 2, 4]]
    np.testing.assert_array_equal(np.asarray(got.data).ravel(), [1, 2, 3, 1])


def test_ctc_greedy_decoder_on_a_padded_batch_returns_lengths(programs):
    tokens = np.array([[0, 1, 1, 0, 2, 2], [3, 3, 0, 3, 0, 0]])
    probs = np.eye(4, dtype="float32")[tokens]
    out, lengths = L.ctc_greedy_decoder(
        fluid.data("x", [2, 6, 4]), blank=0, input_length=fluid.data("n", [2, 1], "int64"), padding_value=-1
    )
    n = np.array([[6], [4]], dtype="int64")
    got, got_n = _run({"x": probs, "n": n}, [out, lengths])
    want = _ctc_align_padded(tokens, n, 0, True, -1)
    np.testing.assert_array_equal(got, want["Output"])
    np.testing.assert_array_equal(got_n, want["OutputLength"])


def test_edit_distance_erases_ignored_tokens_then_counts_edits(programs):
    hyps = LoDTensor(np.array([[1], [12], [3], [9], [5], [8], [2]], dtype="int64"), [[0, 2, 7]])
    refs = LoDTensor(np.array([[1], [12], [4], [7], [8]], dtype="int64"), [[0, 1, 5]])
    dist, count = L.edit_distance(_data("h", hyps, 1), _data("r", refs, 1), normalized=True, ignored_tokens=[9])
    got = fluid.Executor().run(fluid.default_main_program(), feed={"h": hyps, "r": refs}, fetch_list=[dist, count])
    want = [_levenshtein([1, 12], [1]) / 1, _levenshtein([3, 5, 8, 2], [12, 4, 7, 8]) / 4]
    np.testing.assert_allclose(got[0].ravel(), want, rtol=1e-6)
    np.testing.assert_array_equal(got[1], [2])


# -- auc's state, named as Paddle names it ---------------------------------------------------------------


def test_auc_state_variables_take_paddles_generated_names(programs):
    main, startup = programs
    predict, label = fluid.data("p", [-1, 2]), fluid.data("l", [-1, 1], "int64")
    auc, batch_auc, stats = L.auc(predict, label, num_thresholds=10)
    assert [v.name for v in stats] == [f"_generated_var_{i}" for i in range(4)]
    assert [v.name for v in (auc, batch_auc)] == ["auc_0.tmp_0", "auc_0.tmp_1"]
    assert all(startup.global_block().has_var(v.name) for v in stats)


# -- py_func -------------------------------------------------------------------------------------------


def _tanh_net(use_py_func: bool):
    """test_py_func_op.py's net, smaller: fc layers with tanh, through py_func or the tanh op."""
    x = fluid.data("x", [-1, 6])
    hidden = x
    for i in range(2):
        hidden = L.fc(hidden, size=5, param_attr=ParamAttr(name=f"w{i}", initializer=Constant(0.1 * (i + 1))))
        if use_py_func:
            new = (
                fluid.default_main_program()
                .current_block()
                .create_var(name=f"hidden_{i}", dtype="float32", shape=hidden.shape)
            )
            hidden = L.py_func(
                func=lambda v: np.tanh(v),
                x=hidden,
                out=new,
                backward_func=lambda y, dy: np.array(dy) * (1 - np.square(np.array(y))),
                skip_vars_in_backward_input=hidden,
            )
        else:
            hidden = L.tanh(hidden)
    loss = fluid.layers.mean(hidden)
    fluid.optimizer.SGD(learning_rate=0.5).minimize(loss)
    return loss


def test_py_func_trains_as_the_op_it_stands_for():
    feed = {"x": cases.rand(4, 6, seed=3).astype("float32")}
    losses = []
    for use_py_func in (True, False):
        main, startup = fluid.Program(), fluid.Program()
        with fluid.program_guard(main, startup), fluid.unique_name.guard():
            loss = _tanh_net(use_py_func)
        scope = paddle.static.Scope()
        losses.append([_run(feed, [loss], main, startup if i == 0 else fluid.Program(), scope)[0] for i in range(3)])
    np.testing.assert_allclose(losses[0], losses[1], rtol=1e-5)
    assert losses[0][2] < losses[0][0]


def test_py_func_calls_functions_without_inputs_or_outputs(programs):
    main, _ = programs
    seen = []
    x = fluid.data("x", [2])
    out = main.current_block().create_var(name="const", dtype="float32", shape=[1])
    L.py_func(func=lambda: np.array([7.0], dtype="float32"), x=None, out=out)
    L.py_func(func=lambda v: seen.append(np.array(v)), x=x, out=None)
    (got,) = _run({"x": np.array([1.0, 2.0], dtype="float32")}, [out])
    np.testing.assert_array_equal(got, [7.0])
    np.testing.assert_array_equal(seen[0], [1.0, 2.0])
    first = next(op for op in main.global_block().ops if op.type == "py_func")
    assert L.py_func.registered_func(first.attrs["forward_callable_id"])() == np.array([7.0])


def test_py_func_refuses_an_output_without_a_shape_and_an_unknown_skip_var(programs):
    x = fluid.data("x", [2])
    with pytest.raises(ValueError, match="shapes"):
        L.py_func(np.tanh, x, fluid.default_main_program().current_block().create_var(name="o", shape=()))
    with pytest.raises(ValueError, match="not found"):
        L.py_func(np.tanh, x, x, backward_func=np.tanh, skip_vars_in_backward_input=fluid.data("y", [2]))


# -- sampled_softmax_with_cross_entropy -------------------------------------------------------------


def _sampled_softmax(num_samples, seed, **kw):
    logits = fluid.data("logits", [-1, 50])
    label = fluid.data("label", [-1, 1], "int64")
    loss = L.sampled_softmax_with_cross_entropy(logits, label, num_samples, seed=seed, **kw)
    op = _only_op(fluid.default_main_program(), "sample_logits")
    return loss, op


@pytest.mark.parametrize("n", [10, 30])  # 10: distinct at the first draws (seed 3); 30 of 50: repeats
def test_sampled_softmax_draws_distinct_log_uniform_classes_shared_by_the_batch(programs, n):
    loss, op = _sampled_softmax(n, seed=3)
    assert [o.type for o in fluid.default_main_program().global_block().ops][-3:] == [
        "one_hot",
        "softmax_with_cross_entropy",
        "scale",
    ]
    logits = cases.rand(4, 50).astype("float32")
    label = np.array([[3], [0], [41], [7]])
    fetch = [loss, op.output("Samples")[0], op.output("Probabilities")[0], op.output("SampledLogits")[0]]
    got, samples, probs, sampled = _run({"logits": logits, "label": label}, fetch)
    np.testing.assert_array_equal(samples[:, 0], label[:, 0])
    negatives = samples[:, 1:]
    assert (negatives == negatives[0]).all() and len(set(negatives[0])) == n and negatives.max() < 50
    # Paddle's adjust_prob of the log-uniform P(v), for the number of draws it took: n P(v) when
    # the first n were distinct, else 1 - (1 - P(v))^draws
    p = np.log((samples + 2.0) / (samples + 1.0)) / np.log(51)
    adjusted = [p * n] + [-np.expm1(t * np.log1p(-p)) for t in range(n + 1, 5000)]
    assert sum(np.allclose(probs, a, rtol=1e-5) for a in adjusted) == 1
    hit = (negatives == label).astype(np.float64)
    want_logits = np.take_along_axis(logits, samples, 1) - np.log(probs) - 1e20 * np.hstack([np.zeros((4, 1)), hit])
    np.testing.assert_allclose(sampled, want_logits, rtol=1e-5)
    log_softmax = want_logits - want_logits.max(1, keepdims=True)
    log_softmax -= np.log(np.exp(log_softmax).sum(1, keepdims=True))
    np.testing.assert_allclose(got, -log_softmax[:, :1], rtol=1e-4)
    assert n == 10 or not np.allclose(probs, p * n)


def test_sampled_softmax_with_a_seed_draws_the_same_classes_every_run(programs):
    _, op = _sampled_softmax(6, seed=11)
    feed = {"logits": cases.rand(2, 50).astype("float32"), "label": np.array([[1], [2]])}
    first, second = (_run(feed, [op.output("Samples")[0]])[0] for _ in range(2))
    np.testing.assert_array_equal(first, second)


def test_sampled_softmax_with_customized_samples_trains_the_logits(programs):
    samples = fluid.data("samples", [2, 4], "int64")
    probs = fluid.data("probs", [2, 4])
    logits = fluid.data("logits", [2, 50])
    logits.stop_gradient = False
    loss = L.sampled_softmax_with_cross_entropy(
        logits,
        fluid.data("label", [2, 1], "int64"),
        3,
        use_customized_samples=True,
        customized_samples=samples,
        customized_probabilities=probs,
    )
    (grad,) = gradients([fluid.layers.reduce_sum(loss)], [logits])
    feed = {
        "logits": cases.rand(2, 50).astype("float32"),
        "label": np.array([[1], [2]]),
        "samples": np.array([[1, 4, 9, 1], [2, 7, 8, 9]]),  # row 0 draws its own label again: a hit
        "probs": np.full((2, 4), 0.25, dtype="float32"),
    }
    got, dlogits = _run(feed, [loss, grad])
    z = np.take_along_axis(feed["logits"], feed["samples"], 1) - np.log(0.25)
    z[0, 3] -= 1e20
    log_softmax = z - z.max(1, keepdims=True)
    log_softmax -= np.log(np.exp(log_softmax).sum(1, keepdims=True))
    np.testing.assert_allclose(got, -log_softmax[:, :1], rtol=1e-5)
    softmax = np.exp(log_softmax) - np.eye(4)[[0, 0]]
    np.testing.assert_allclose(dlogits[1, [2, 7, 8, 9]], softmax[1], rtol=1e-5, atol=1e-7)
    assert dlogits[0, 1] == softmax[0, 3]  # the later column's gradient wins, as Paddle's put-along


def test_ctc_and_sampled_softmax_layers_run_eagerly():
    with fluid.dygraph.guard():
        tv = fluid.dygraph.to_variable
        hyps, refs = tv(np.array([[1, 2, 3], [4, 5, 6]])), tv(np.array([[1, 2, 4], [4, 5, 6]]))
        dist, count = L.edit_distance(hyps, refs, input_length=tv(np.array([3, 2])), label_length=tv(np.array([3, 3])))
        np.testing.assert_allclose(dist.numpy().ravel(), [1 / 3, 1 / 3])
        assert count.numpy().tolist() == [2]
        decoded, lengths = L.ctc_greedy_decoder(
            tv(np.eye(3, dtype="float32")[[[0, 1, 1, 2]]]), 0, input_length=tv(np.array([[4]]))
        )
        assert decoded.numpy().tolist() == [[1, 2, 0, 0]] and lengths.numpy().tolist() == [[2]]
        logits = tv(cases.rand(2, 50).astype("float32"))
        logits.stop_gradient = False
        loss = L.sampled_softmax_with_cross_entropy(logits, tv(np.array([[1], [2]])), 5, seed=2)
        L.reduce_sum(loss).backward()
        assert loss.numpy().shape == (2, 1) and 2 <= (logits.gradient() != 0).sum(axis=1).min() <= 6


def test_a_loss_layers_name_names_its_output_as_paddles_layer_helper(programs):
    out = L.sigmoid_cross_entropy_with_logits(_data("x", _x), _data("y", _y), name="sce")
    assert out.name == "sce.tmp_0"
    assert L.bpr_loss(_data("p", _y), _data("l", _col[0].astype("int64"))).name == "bpr_loss_0.tmp_0"


# -- ONNX: cos_sim and cvm export and run as the executor --------------------------------------------


def _exports_as_the_executor(feed, fetch, tmp_path):
    """test_onnx's check: the exported model, in onnx's reference evaluator and onnxruntime, equals
    the executor (imported here: test_onnx skips itself where onnx is missing)."""
    pytest.importorskip("onnx")
    from test_onnx import _assert_exports

    import fleetgraph.onnx.to_onnx_losses  # noqa: F401  (its import fills EXPORTERS)

    main = fluid.default_main_program()
    _assert_exports(main, paddle.static.Scope(), list(feed), [v.name for v in fetch], feed, tmp_path, reload=False)


@pytest.mark.parametrize("y_rows", [4, 1])
def test_cos_sim_exports_to_onnx(programs, y_rows, tmp_path):
    x, y = cases.rand(4, 2, 3).astype("float32"), cases.rand(y_rows, 2, 3, seed=1).astype("float32")
    x[0] = 0.0  # a zero row: the 1e-8 floor keeps it finite
    out = L.cos_sim(fluid.data("x", [4, 2, 3]), fluid.data("y", [y_rows, 2, 3]))
    _exports_as_the_executor({"x": x, "y": y}, [out], tmp_path)


@pytest.mark.parametrize("use_cvm", [True, False])
def test_cvm_exports_to_onnx(programs, use_cvm, tmp_path):
    x = cases.rand(3, 6, low=0, high=5).astype("float32")
    out = L.continuous_value_model(fluid.data("x", [-1, 6]), fluid.data("cvm", [-1, 2]), use_cvm=use_cvm)
    _exports_as_the_executor({"x": x, "cvm": np.ones((3, 2), "float32")}, [out], tmp_path)
