"""Registry cases for the ops of ops/losses.py, ops/similarity.py, ops/ctr.py and ops/py_func.py,
with the NumPy references of Paddle 1.8's unit tests (test_<op>_op.py)."""

import math

import numpy as np

from fleetgraph.ops.lod_tensor import LoDTensor
from fleetgraph.ops.py_func import register_callable

from . import NOT_DIFFERENTIABLE, NOT_EXPORTED, case, rand

_TRAINING_ONLY = (
    "training only: a loss the inference program does not compute; export prunes the program to inference (ir/prune.py)"
)
NOT_EXPORTED.update(
    dict.fromkeys(
        (
            "sigmoid_cross_entropy_with_logits",
            "huber_loss",
            "kldiv_loss",
            "smooth_l1_loss",
            "margin_rank_loss",
            "rank_loss",
            "bpr_loss",
            "teacher_student_sigmoid_loss",
            "label_smooth",
            "center_loss",
        ),
        _TRAINING_ONLY,
    )
)
NOT_EXPORTED.update(
    {
        "mean_iou": "an evaluation metric that accumulates counts; export prunes the program to inference",
        "filter_by_instag": "its output rows and LoD depend on the tag values; ONNX tensors carry no LoD",
        "py_func": "calls a Python function of the building process: nothing an ONNX runtime can run",
    }
)
NOT_DIFFERENTIABLE.update({"mean_iou": "integer class ids in, counts out; Paddle registers no gradient"})


def _sigmoid_ce(X, Label, ignore_index, normalize, **_):
    out = np.maximum(X, 0) - X * Label + np.log1p(np.exp(-np.abs(X)))
    out = np.where(Label.astype(np.int64) == ignore_index, 0, out)
    if normalize:
        out = out / np.sum(np.abs(Label - ignore_index) > 1e-6)
    return {"Out": out}


_probs = rand(5, 4, low=0.05, high=0.95, seed=1)
_ignored = np.where(rand(5, 4, seed=2) > 0.3, _probs, -1.0)
for _name, _label, _attrs in (
    ("probability_labels", _probs, {"ignore_index": -100, "normalize": False}),
    ("ignore_index_normalized", _ignored, {"ignore_index": -1, "normalize": True}),
):
    case(
        "sigmoid_cross_entropy_with_logits",
        {"X": rand(5, 4, low=-3, high=3), "Label": _label},
        attrs=_attrs,
        reference=_sigmoid_ce,
        no_grad=("Label",),
        name=_name,
    )


def _huber(X, Y, delta, **_):
    r = Y - X
    return {"Residual": r, "Out": np.where(np.abs(r) <= delta, 0.5 * r * r, delta * (np.abs(r) - 0.5 * delta))}


case(
    "huber_loss",
    {"X": rand(6, 1, low=0, high=1), "Y": rand(6, 1, low=0, high=1, seed=3)},
    attrs={"delta": 0.2},
    outputs={"Out": 1, "Residual": 1},
    reference=_huber,
    loss_outputs=("Out",),
)


def _kldiv(X, Target, reduction, **_):
    out = np.where(Target > 0, Target * np.log(np.where(Target > 0, Target, 1)) - Target * X, 0)
    if reduction == "none":
        return {"Loss": out}
    scale = {"batchmean": X.shape[0], "mean": out.size, "sum": 1}[reduction]
    return {"Loss": np.array([out.sum() / scale])}


for _reduction in ("none", "batchmean", "mean", "sum"):
    case(
        "kldiv_loss",
        {"X": rand(4, 5, 3, low=-10, high=10), "Target": rand(4, 5, 3, low=-10, high=10, seed=4)},
        attrs={"reduction": _reduction},
        outputs={"Loss": 1},
        reference=_kldiv,
        no_grad=("Target",),
        name=_reduction,
    )


def _smooth_l1(X, Y, sigma, InsideWeight=None, OutsideWeight=None, **_):
    s2 = sigma * sigma
    diff = X - Y if InsideWeight is None else (X - Y) * InsideWeight
    err = np.where(np.abs(diff) < 1 / s2, 0.5 * diff * diff * s2, np.abs(diff) - 0.5 / s2)
    if OutsideWeight is not None:
        err = err * OutsideWeight
    return {"Diff": diff, "Out": err.reshape(X.shape[0], -1).sum(1, keepdims=True)}


_SL1 = {"X": rand(5, 6, low=0, high=1), "Y": rand(5, 6, low=0, high=1, seed=5)}
case(
    "smooth_l1_loss",
    _SL1,
    attrs={"sigma": 3.0},
    outputs={"Diff": 1, "Out": 1},
    reference=_smooth_l1,
    loss_outputs=("Out",),
    name="unweighted",
)
case(
    "smooth_l1_loss",
    {**_SL1, "InsideWeight": rand(5, 6, low=0, high=1, seed=6), "OutsideWeight": rand(5, 6, low=0, high=1, seed=7)},
    attrs={"sigma": 3.0},
    outputs={"Diff": 1, "Out": 1},
    reference=_smooth_l1,
    no_grad=("InsideWeight", "OutsideWeight"),
    loss_outputs=("Out",),
    name="weighted",
)

_PAIR_LABEL = np.where(rand(6, 1, seed=8) > 0, 1.0, -1.0)
case(
    "margin_rank_loss",
    {"Label": _PAIR_LABEL, "X1": rand(6, 1, seed=9), "X2": rand(6, 1, seed=10)},
    attrs={"margin": 0.5},
    outputs={"Out": 1, "Activated": 1},
    reference=lambda Label, X1, X2, margin, **_: {
        "Out": np.maximum(0, -Label * (X1 - X2) + margin),
        "Activated": (np.maximum(0, -Label * (X1 - X2) + margin) > 0).astype(np.float64),
    },
    no_grad=("Label",),
    loss_outputs=("Out",),
)
case(
    "rank_loss",
    {"Label": rand(5, 1, low=0, high=1, seed=11), "Left": rand(5, 1, seed=12), "Right": rand(5, 1, seed=13)},
    reference=lambda Label, Left, Right, **_: {"Out": rank_loss_reference(Label, Left, Right)},
    no_grad=("Label",),
)


def _bpr(X, Label, **_):
    rows, classes = X.shape
    out = np.zeros((rows, 1))
    for i in range(rows):
        pos = X[i, Label[i, 0]]
        out[i, 0] = -sum(-np.log(1 + np.exp(X[i, j] - pos)) for j in range(classes) if j != Label[i, 0]) / (classes - 1)
    return {"Y": out}


case(
    "bpr_loss",
    {"X": rand(6, 5, low=0, high=1), "Label": np.array([[0], [4], [2], [2], [1], [3]], dtype=np.int64)},
    outputs={"Y": 1},
    reference=_bpr,
)


def _tss(X, Label, **_):
    out = []
    for x, label in zip(X.ravel(), Label.ravel()):
        sp = math.log(1.0 + math.exp(-abs(x)))
        if label < -1.0:
            out.append(max(x, 0.0) + sp)
        elif label < 0.0:
            out.append(max(x, 0.0) - x + sp)
        elif label < 1.0:
            out.append(max(x, 0.0) + sp + max(x, 0.0) - x * label + sp)
        else:
            out.append(max(x, 0.0) - x + sp + max(x, 0.0) - x * (label - 1.0) + sp)
    return {"Y": np.array(out).reshape(X.shape)}


case(
    "teacher_student_sigmoid_loss",
    {"X": rand(8, 1, low=-4, high=4), "Label": np.array([[-2.0], [-1.0], [0.3], [1.7], [-1.5], [-0.5], [0.9], [1.2]])},
    attrs={"soft_max_up_bound": 15.0, "soft_max_lower_bound": -15.0},
    outputs={"Y": 1},
    reference=_tss,
    no_grad=("Label",),
)

_LABELS = np.eye(6)[[1, 0, 5, 3]]
case(
    "label_smooth",
    {"X": _LABELS},
    attrs={"epsilon": 0.1},
    reference=lambda X, epsilon, **_: {"Out": (1 - epsilon) * X + epsilon / X.shape[-1]},
    name="uniform",
)
_PRIOR = np.array([[0.1, 0.3, 0.2, 0.1, 0.2, 0.1]])
case(
    "label_smooth",
    {"X": _LABELS, "PriorDist": _PRIOR},
    attrs={"epsilon": 0.1},
    reference=lambda X, PriorDist, epsilon, **_: {"Out": (1 - epsilon) * X + epsilon * PriorDist},
    no_grad=("PriorDist",),
    name="prior_dist",
)


def _cos_sim(X, Y, **_):
    xs, ys = X.reshape(X.shape[0], -1), Y.reshape(Y.shape[0], -1)
    xn = np.sqrt((xs * xs).sum(1, keepdims=True))
    yn = np.sqrt((ys * ys).sum(1, keepdims=True))
    return {"Out": (xs * ys).sum(1, keepdims=True) / xn / yn, "XNorm": xn, "YNorm": yn}


for _name, _y in (("row_pairs", rand(4, 5, seed=14)), ("one_y_row", rand(1, 5, seed=15))):
    case(
        "cos_sim",
        {"X": rand(4, 5), "Y": _y},
        outputs={"Out": 1, "XNorm": 1, "YNorm": 1},
        reference=_cos_sim,
        loss_outputs=("Out",),
        name=_name,
    )
case(
    "cos_sim",
    {"X": rand(3, 2, 4, seed=16), "Y": rand(3, 2, 4, seed=17)},
    outputs={"Out": 1, "XNorm": 1, "YNorm": 1},
    reference=_cos_sim,
    loss_outputs=("Out",),
    name="rank3",
)


def _center_loss(X, Label, Centers, CenterUpdateRate, cluster_num, need_update, **_):
    """test_center_loss.py's reference; the moved centers (CentersOut, in place) are checked in
    test_losses_ctc.py."""
    ids = Label.ravel()
    diff = X - Centers[ids]
    out = {"SampleCenterDiff": diff, "Loss": (diff * diff).sum(1, keepdims=True) / 2}
    return out


for _update in (True, False):
    case(
        "center_loss",
        {
            "X": rand(6, 4),
            "Label": np.array([[0], [2], [2], [4], [0], [2]], dtype=np.int64),
            "Centers": rand(5, 4, seed=18),
            "CenterUpdateRate": np.array([0.1]),
        },
        attrs={"cluster_num": 5, "need_update": _update},
        outputs={"SampleCenterDiff": 1, "Loss": 1},
        reference=_center_loss,
        no_grad=("Centers", "CenterUpdateRate"),
        loss_outputs=("Loss",),
        name="update" if _update else "fixed_centers",
    )


def _mean_iou(Predictions, Labels, num_classes, InWrongs=(), InCorrects=(), InMeanIou=(), **_):
    """test_mean_iou.py's compute_mean_iou."""
    wrong = np.zeros(num_classes, dtype=np.int32) + sum(InWrongs)
    correct = np.zeros(num_classes, dtype=np.int32) + sum(InCorrects)
    for p, t in zip(Predictions.ravel(), Labels.ravel()):
        if p == t:
            correct[p] += 1
        else:
            wrong[p] += 1
            wrong[t] += 1
    denominator = wrong + correct
    mean = (correct / np.where(denominator > 0, denominator, 1)).sum() / (denominator != 0).sum()
    return {
        "OutMeanIou": np.array([mean + sum(m[0] for m in InMeanIou)], dtype=np.float32),
        "OutWrong": wrong,
        "OutCorrect": correct,
    }


_seg = np.random.default_rng(19)
case(
    "mean_iou",
    {
        "Predictions": _seg.integers(0, 5, (4, 6)).astype(np.int32),
        "Labels": _seg.integers(0, 5, (4, 6)).astype(np.int32),
    },
    attrs={"num_classes": 6},
    outputs={"OutMeanIou": 1, "OutWrong": 1, "OutCorrect": 1},
    reference=_mean_iou,
    name="absent_class",
)
case(
    "mean_iou",
    {
        "Predictions": _seg.integers(0, 3, (10,)).astype(np.int32),
        "Labels": _seg.integers(0, 3, (10,)).astype(np.int32),
        "InWrongs": [_seg.integers(0, 10, 3).astype(np.int32) for _ in range(2)],
        "InCorrects": [_seg.integers(0, 10, 3).astype(np.int32) for _ in range(2)],
        "InMeanIou": [np.array([0.25], dtype=np.float32)],
    },
    attrs={"num_classes": 3},
    outputs={"OutMeanIou": 1, "OutWrong": 1, "OutCorrect": 1},
    reference=_mean_iou,
    atol=1e-6,
    name="accumulated",
)


def _cvm(X, use_cvm, **_):
    """test_cvm_op.py's cvm_compute."""
    if isinstance(X, LoDTensor):
        return {"Y": LoDTensor(_cvm(X.data, use_cvm)["Y"], X.levels)}
    if not use_cvm:
        return {"Y": X[:, 2:]}
    y = X.copy()
    y[:, 0] = np.log(X[:, 0] + 1)
    y[:, 1] = np.log(X[:, 1] + 1) - y[:, 0]
    return {"Y": y}


# cvm's gradient is Paddle's rule, not a derivative: the show/click columns get the CVM input. With
# use_cvm=False and a zero CVM that rule is the derivative (the columns are dropped), which these
# cases check; test_losses_ctc.py checks use_cvm=True against test_cvm_op.py's values and gradients.
for _name, _x in (("rows", rand(3, 6, low=0, high=1)), ("lod", LoDTensor(rand(4, 5, low=0, high=1), [[0, 1, 4]]))):
    case(
        "cvm",
        {"X": _x, "CVM": np.zeros((3 if _name == "rows" else 2, 2))},
        attrs={"use_cvm": False},
        outputs={"Y": 1},
        reference=_cvm,
        no_grad=("CVM",),
        name=_name,
    )


def _filter_by_instag(Ins, Ins_tag, Filter_tag, is_lod, out_val_if_empty, **_):
    """test_filter_by_instag_op.py's expectations: the kept instances' rows, a weight of 1 each and
    IndexMap rows (out start, ins start, rows)."""
    tags, wanted = Ins_tag.levels[0], set(Filter_tag.tolist())
    starts = Ins.levels[0] if is_lod else np.arange(Ins.shape[0] + 1)
    rows = Ins.data if is_lod else Ins
    kept = [i for i in range(len(tags) - 1) if wanted & set(Ins_tag.data[tags[i] : tags[i + 1], 0].tolist())]
    if not kept:
        return {
            "Out": LoDTensor(np.full((1, rows.shape[1]), out_val_if_empty, rows.dtype), [[0, 1]]),
            "LossWeight": LoDTensor(np.zeros((1, 1), np.float32), [[0, 1]]),
            "IndexMap": LoDTensor(np.array([[0, 1, 1]]), [[0, 1]]),
        }
    out = np.concatenate([rows[starts[i] : starts[i + 1]] for i in kept])
    lod = np.cumsum([0] + [starts[i + 1] - starts[i] for i in kept])
    per = [np.arange(len(kept) + 1)]
    index_map = np.stack([lod[:-1], starts[kept], np.diff(lod)], axis=1)
    return {
        "Out": LoDTensor(out, [lod]),
        "LossWeight": LoDTensor(np.ones((len(kept), 1), np.float32), per),
        "IndexMap": LoDTensor(index_map, per),
    }


_TAGS = LoDTensor(np.array([[1], [2], [3], [1], [4], [5], [3]], dtype=np.int64), [[0, 2, 3, 5, 7]])
for _name, _ins, _filter, _is_lod, _empty_value in (
    ("lod_instances", LoDTensor(rand(8, 3), [[0, 1, 3, 6, 8]]), [1, 5], True, 0),
    ("row_instances", rand(4, 3, seed=1), [3], False, 0),
    ("none_kept", rand(4, 3, seed=2), [9], False, 7),
):
    case(
        "filter_by_instag",
        {"Ins": _ins, "Ins_tag": _TAGS, "Filter_tag": np.array(_filter, np.int64)},
        attrs={"is_lod": _is_lod, "out_val_if_empty": _empty_value},
        outputs={"Out": 1, "LossWeight": 1, "IndexMap": 1},
        reference=_filter_by_instag,
        no_grad=("Ins_tag", "Filter_tag"),
        loss_outputs=("Out",),
        name=_name,
    )

_TANH = register_callable(lambda x: np.tanh(np.asarray(x)))
_TANH_GRAD = register_callable(lambda x, y, dy: np.asarray(dy) * (1 - np.square(np.asarray(y))))
case(
    "py_func",
    {"X": [rand(3, 4)]},
    attrs={"forward_callable_id": _TANH, "backward_callable_id": _TANH_GRAD, "backward_skip_vars": []},
    reference=lambda X, **_: {"Out": [np.tanh(X[0])]},
    outputs={"Out": 1},
)


def rank_loss_reference(label, left, right):
    return np.log(1 + np.exp(left - right)) - label * (left - right)


def _sample_logits(Logits, Labels, CustomizedSamples, CustomizedProbabilities, remove_accidental_hits, **_):
    """test_sample_logits_op.py's reference with customized samples: the logits at the samples, an
    accidental hit (a true class among the negatives) less 1e20, less log Q."""
    picked = np.take_along_axis(Logits, CustomizedSamples, axis=1)
    true = Labels.shape[1]
    if remove_accidental_hits:
        for i in range(Logits.shape[0]):
            for j in range(true, CustomizedSamples.shape[1]):
                if CustomizedSamples[i, j] in Labels[i]:
                    picked[i, j] -= 1e20
    return {
        "SampledLogits": picked - np.log(CustomizedProbabilities),
        "SampledLabels": np.tile(np.arange(true), (Logits.shape[0], 1)),
    }


NOT_EXPORTED["sample_logits"] = _TRAINING_ONLY
_SAMPLES = np.array([[1, 4, 0, 6], [3, 4, 1, 6], [5, 0, 2, 3]], dtype=np.int64)
for _name, _samples, _remove in (("customized", _SAMPLES, True), ("accidental_hit_kept", _SAMPLES, False)):
    case(
        "sample_logits",
        {
            "Logits": rand(3, 8),
            "Labels": _SAMPLES[:, :1].copy(),
            "CustomizedSamples": _samples,
            "CustomizedProbabilities": rand(3, 4, low=0.1, high=0.9, seed=4),
        },
        attrs={"use_customized_samples": True, "num_samples": 3, "remove_accidental_hits": _remove},
        outputs={
            "Samples": 1,
            "Probabilities": 1,
            "LogitsDim": 1,
            "LabelsDim": 1,
            "SampledLogits": 1,
            "SampledLabels": 1,
        },
        reference=_sample_logits,
        no_grad=("CustomizedProbabilities",),
        loss_outputs=("SampledLogits",),
        name=_name,
    )
