"""Layer functions over the ops of ops/losses.py and ops/similarity.py (Paddle 1.8's fluid.layers
losses), plus dice_loss and npair_loss, which Paddle builds from other layers, and mean_iou."""

from __future__ import annotations

from ..initializer import Constant
from ..ir.program import Variable
from . import ctr
from .ctr import *  # noqa: F401,F403
from .helper import LayerHelper
from .loss import softmax_with_cross_entropy
from .manipulation import one_hot
from .math import equal, matmul, reduce_mean, reduce_sum, square
from .sampled import _check
from .tensor import cast, reshape, transpose
from .tensor_shape import expand

_FLOATS = ("float32", "float64")


def _one_op(op_type, inputs, out_slots, attrs=None, dtype=None, name=None):
    """Append `op_type` writing a new variable into each of `out_slots` (of `dtype`, else the first
    input's), named after `name` as Paddle's LayerHelper names them; returns them in that order."""
    first = next(iter(inputs.values()))[0]
    helper = LayerHelper(op_type, name, inputs=[v[0] for v in inputs.values() if v])
    outs = {s: helper.create_variable_for_type_inference(dtype or first.dtype) for s in out_slots}
    helper.append_op(op_type, inputs, {s: [v] for s, v in outs.items()}, attrs or {})
    return [outs[s] for s in out_slots]


def sigmoid_cross_entropy_with_logits(x, label, ignore_index=-100, name=None, normalize=False):
    """Elementwise max(x, 0) - x * label + log(1 + exp(-|x|)), 0 where label == ignore_index; with
    `normalize`, divided by the number of labels that are not ignore_index."""
    _check("sigmoid_cross_entropy_with_logits", "x", x, ("float16", *_FLOATS))
    attrs = {"ignore_index": int(ignore_index), "normalize": bool(normalize)}
    inputs = {"X": [x], "Label": [label]}
    return _one_op("sigmoid_cross_entropy_with_logits", inputs, ("Out",), attrs, name=name)[0]


def huber_loss(input, label, delta):
    """0.5 * r^2 where |r| <= delta, else delta * (|r| - delta / 2), with r = label - input."""
    _check("huber_loss", "input", input, _FLOATS)
    _check("huber_loss", "label", label, _FLOATS)
    return _one_op("huber_loss", {"X": [input], "Y": [label]}, ("Out", "Residual"), {"delta": float(delta)})[0]


def kldiv_loss(x, target, reduction="mean", name=None):
    """target * (log(target) - x), reduced by 'none', 'batchmean', 'mean' or 'sum'."""
    _check("kldiv_loss", "x", x, _FLOATS)
    _check("kldiv_loss", "target", target, _FLOATS)
    if not isinstance(reduction, str):
        raise TypeError(f"kldiv_loss: reduction expected a str, got {type(reduction).__name__}")
    inputs = {"X": [x], "Target": [target]}
    return _one_op("kldiv_loss", inputs, ("Loss",), {"reduction": reduction}, name=name)[0]


def smooth_l1(x, y, inside_weight=None, outside_weight=None, sigma=None):
    """Per sample, the sum over its elements of the smooth L1 of (x - y) * inside_weight, times
    outside_weight: 0.5 * (sigma * d)^2 where |d| < 1 / sigma^2, else |d| - 0.5 / sigma^2."""
    _check("smooth_l1_loss", "X", x, _FLOATS)
    _check("smooth_l1_loss", "Y", y, _FLOATS)
    inputs = {"X": [x], "Y": [y]}
    for slot, weight in (("InsideWeight", inside_weight), ("OutsideWeight", outside_weight)):
        if weight is not None:
            inputs[slot] = [weight]
    attrs = {"sigma": float(sigma) if sigma is not None else 1.0}
    return _one_op("smooth_l1_loss", inputs, ("Diff", "Out"), attrs)[1]


def margin_rank_loss(label, left, right, margin=0.1, name=None):
    """max(0, -label * (left - right) + margin)."""
    for what, v in (("label", label), ("left", left), ("right", right)):
        _check("margin_rank_loss", what, v, ("float32",))
    inputs = {"Label": [label], "X1": [left], "X2": [right]}
    attrs = {"margin": float(margin)}
    return _one_op("margin_rank_loss", inputs, ("Out", "Activated"), attrs, dtype=left.dtype, name=name)[0]


def rank_loss(label, left, right, name=None):
    """RankNet's log(1 + exp(left - right)) - label * (left - right)."""
    for what, v in (("label", label), ("left", left), ("right", right)):
        _check("rank_loss", what, v, ("float32",))
    inputs = {"Label": [label], "Left": [left], "Right": [right]}
    return _one_op("rank_loss", inputs, ("Out",), dtype="float32", name=name)[0]


def bpr_loss(input, label, name=None):
    """Bayesian personalized ranking: per row, the mean over the other classes j of
    -log(sigmoid(input[label] - input[j]))."""
    _check("bpr_loss", "input", input, ("float16", *_FLOATS))
    return _one_op("bpr_loss", {"X": [input], "Label": [label]}, ("Y",), name=name)[0]


def teacher_student_sigmoid_loss(input, label, soft_max_up_bound=15.0, soft_max_lower_bound=-15.0):
    """The sigmoid cross entropy of a click (label < 0: -2 no click, -1 click) or of a click and a
    teacher's score z (label = z, or 1 + z with a click); the gradient is 0 outside the bounds."""
    _check("teacher_student_sigmoid_loss", "input", input, _FLOATS)
    _check("teacher_student_sigmoid_loss", "label", label, _FLOATS)
    attrs = {"soft_max_lower_bound": float(soft_max_lower_bound), "soft_max_up_bound": float(soft_max_up_bound)}
    return _one_op("teacher_student_sigmoid_loss", {"X": [input], "Label": [label]}, ("Y",), attrs)[0]


def label_smooth(label, prior_dist=None, epsilon=0.1, dtype="float32", name=None):
    """(1 - epsilon) * label + epsilon * prior_dist (uniform over the classes without one)."""
    if epsilon > 1.0 or epsilon < 0.0:
        raise ValueError(f"label_smooth: epsilon expected in [0, 1], got {epsilon}")
    _check("label_smooth", "label", label, _FLOATS)
    label.stop_gradient = True
    inputs = {"X": [label]} if prior_dist is None else {"X": [label], "PriorDist": [prior_dist]}
    return _one_op("label_smooth", inputs, ("Out",), {"epsilon": float(epsilon)}, dtype, name=name)[0]


def cos_sim(X, Y):
    """The cosine similarity of each row of X with Y's row (Y of one row, or of X's rows), [N, 1]."""
    _check("cos_sim", "X", X, ("float32",))
    _check("cos_sim", "Y", Y, ("float32",))
    return _one_op("cos_sim", {"X": [X], "Y": [Y]}, ("Out", "XNorm", "YNorm"))[0]


def center_loss(input, label, num_classes, alpha, param_attr, update_center=True):
    """Half the squared distance of each sample to its class's center, [N, 1]. The centers are a
    parameter [num_classes, D] that the op itself moves toward the batch (by `alpha`, a float or
    a Variable) when `update_center`; no gradient reaches them."""
    helper = LayerHelper("center_loss", inputs=[input, label])
    centers = helper.create_parameter(param_attr, [num_classes, input.shape[1]], input.dtype)
    centers.stop_gradient = True
    if isinstance(alpha, Variable):
        rate = alpha
    else:
        if not isinstance(alpha, float):
            raise TypeError(f"center_loss: alpha expected a float or a Variable, got {type(alpha).__name__}")
        rate = helper.create_global_variable([1], "float32", persistable=True, name="centerloss_alpha")
        rate.stop_gradient = True
        helper.set_variable_initializer(rate, Constant(alpha))
    diff = helper.create_variable_for_type_inference(input.dtype)
    loss = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op(
        "center_loss",
        {"X": [input], "Label": [label], "Centers": [centers], "CenterUpdateRate": [rate]},
        {"SampleCenterDiff": [diff], "Loss": [loss], "CentersOut": [centers]},
        {"cluster_num": int(num_classes), "need_update": bool(update_center)},
    )
    return loss


def dice_loss(input, label, epsilon=0.00001, name=None):
    """1 - 2 |input * one_hot(label)| / (|input| + |one_hot(label)| + epsilon) per sample, averaged
    (the layers Paddle composes)."""
    label = one_hot(label, depth=input.shape[-1])
    dims = list(range(1, len(input.shape)))
    inse = reduce_sum(input * label, dim=dims)
    denominator = reduce_sum(input, dim=dims) + reduce_sum(label, dim=dims)
    return reduce_mean(1 - inse * 2 / (denominator + epsilon))


def npair_loss(anchor, positive, labels, l2_reg=0.002):
    """N-pair loss: the soft-label cross entropy of the anchor-positive similarity matrix against the
    rows' label agreement, plus l2_reg / 4 times the mean squared norms (Paddle's composition)."""
    _check("npair_loss", "anchor", anchor, _FLOATS)
    _check("npair_loss", "positive", positive, _FLOATS)
    _check("npair_loss", "labels", labels, (*_FLOATS, "int64"))
    beta, batch = 0.25, labels.shape[0]
    labels = expand(reshape(labels, shape=[batch, 1]), expand_times=[1, batch])
    labels = cast(equal(labels, transpose(labels, perm=[1, 0])), "float32")
    labels = labels / reduce_sum(labels, dim=1, keep_dim=True)
    l2loss = reduce_mean(reduce_sum(square(anchor), 1)) + reduce_mean(reduce_sum(square(positive), 1))
    l2loss = l2loss * beta * l2_reg
    similarity = matmul(anchor, positive, transpose_x=False, transpose_y=True)
    softmax_ce = softmax_with_cross_entropy(logits=similarity, label=labels, soft_label=True)
    return l2loss + reduce_mean(reduce_sum(labels * softmax_ce, 0))


def sampled_softmax_with_cross_entropy(
    logits,
    label,
    num_samples,
    num_true=1,
    remove_accidental_hits=True,
    use_customized_samples=False,
    customized_samples=None,
    customized_probabilities=None,
    seed=0,
):
    """Softmax cross entropy over each row's true classes and num_samples classes drawn from a
    log-uniform law (or `customized_samples` with their probabilities), logits less log Q: the
    sample_logits op, one_hot of the sampled labels, a soft-label softmax_with_cross_entropy, and
    the loss divided by num_true, as Paddle builds it."""
    helper = LayerHelper("sample_logits", inputs=[logits, label])
    if use_customized_samples:
        samples, probabilities = customized_samples, customized_probabilities
    else:
        samples = helper.create_variable_for_type_inference("int64", stop_gradient=True)
        probabilities = helper.create_variable_for_type_inference(logits.dtype, stop_gradient=True)
    sampled_logits = helper.create_variable_for_type_inference(logits.dtype)
    sampled_label = helper.create_variable_for_type_inference("int64", stop_gradient=True)
    logits_dim, labels_dim = (helper.create_variable_for_type_inference(logits.dtype, True) for _ in range(2))
    inputs = {"Logits": [logits], "Labels": [label]}
    if use_customized_samples:
        inputs.update(CustomizedSamples=[customized_samples], CustomizedProbabilities=[customized_probabilities])
    helper.append_op(
        "sample_logits",
        inputs,
        {
            "Samples": [samples],
            "Probabilities": [probabilities],
            "SampledLabels": [sampled_label],
            "SampledLogits": [sampled_logits],
            "LogitsDim": [logits_dim],
            "LabelsDim": [labels_dim],
        },
        {
            "use_customized_samples": bool(use_customized_samples),
            "uniq": True,
            "remove_accidental_hits": bool(remove_accidental_hits),
            "num_samples": int(num_samples),
            "seed": int(seed),
        },
    )
    soft_label = one_hot(sampled_label, depth=num_samples + 1)
    softmax = helper.create_variable_for_type_inference(logits.dtype)
    loss = helper.create_variable_for_type_inference(logits.dtype)
    helper.append_op(
        "softmax_with_cross_entropy",
        {"Logits": [sampled_logits], "Label": [soft_label]},
        {"Softmax": [softmax], "Loss": [loss]},
        {"soft_label": True, "ignore_index": 0, "numeric_stable_mode": False},  # Paddle's False, an int attr
    )
    return loss / num_true


def mean_iou(input, label, num_classes):
    """The mean over classes present of correct / (correct + wrong) pixels; returns (mean_iou
    [1] float32, wrong [num_classes] int32, correct [num_classes] int32)."""
    _check("mean_iou", "Predictions", input, ("int32", "int64"))
    _check("mean_iou", "Labels", label, ("int32", "int64"))
    helper = LayerHelper("mean_iou", inputs=[input, label])
    outs = [helper.create_variable_for_type_inference(d, stop_gradient=True) for d in ("float32", "int32", "int32")]
    helper.append_op(
        "mean_iou",
        {"Predictions": [input], "Labels": [label]},
        dict(zip(("OutMeanIou", "OutWrong", "OutCorrect"), ([v] for v in outs))),
        {"num_classes": int(num_classes)},
    )
    return tuple(outs)


__all__ = [
    "bpr_loss",
    "center_loss",
    "cos_sim",
    "dice_loss",
    "huber_loss",
    "kldiv_loss",
    "label_smooth",
    "margin_rank_loss",
    "mean_iou",
    "npair_loss",
    "rank_loss",
    "sampled_softmax_with_cross_entropy",
    "sigmoid_cross_entropy_with_logits",
    "smooth_l1",
    "teacher_student_sigmoid_loss",
    *ctr.__all__,
]
