"""Metric ops: top_k over the last axis and the top-k classification accuracy."""

from __future__ import annotations

import threading

from ..ir import InferContext, make_grad_op, register_op
from ..ir.errors import fmt_shape
from ._xp import astype, contiguous, full, put_along, reshape, stable_argsort, total

# -- top_k ----------------------------------------------------------------------------------------


def _top_k_infer(ctx: InferContext) -> None:
    x, k = ctx.input_var("X"), ctx.attr("k")
    if not x.shape:
        raise ctx.error(f"X '{x.name}' is a scalar; expected rank >= 1")
    if k < 1 or (x.shape[-1] >= 0 and k > x.shape[-1]):
        raise ctx.error(f"k {k}: expected 1 <= k <= {x.shape[-1]}, the last dim of X '{x.name}' {fmt_shape(x.shape)}")
    shape = x.shape[:-1] + (k,)
    ctx.set_output("Out", shape, x.dtype, lod_level=x.lod_level)
    ctx.set_output("Indices", shape, "int64", lod_level=x.lod_level)


def _top_k(xp, x, *, k):
    """The k largest along the last axis, largest first; ties keep the lower index first."""
    idx = contiguous(xp, stable_argsort(xp, -x, -1)[..., :k])
    return xp.take_along_axis(x, idx, axis=-1), astype(xp, idx, "int64")


def _top_k_grad(xp, x, indices, dout, *, k):
    return put_along(xp, xp.zeros_like(x), indices, dout, -1)


register_op(
    "top_k",
    inputs=("X",),
    outputs=("Out", "Indices"),
    attrs={"k": 1},
    infer_shape=_top_k_infer,
    grad=make_grad_op(inputs=("X", "Indices", "Out@GRAD"), outputs=("X@GRAD",)),
    kernel=_top_k,
)
register_op("top_k_grad", inputs=("X", "Indices", "Out@GRAD"), outputs=("X@GRAD",), attrs={"k": 1}, kernel=_top_k_grad)


# -- top_k_v2: Paddle 2.x's paddle.topk, along any axis, largest or smallest -----------------------


def _top_k_v2_infer(ctx: InferContext) -> None:
    x, k, axis = ctx.input_var("X"), ctx.attr("k"), ctx.attr("axis")
    if not x.shape:
        raise ctx.error(f"X '{x.name}' is a scalar; expected rank >= 1")
    if not -len(x.shape) <= axis < len(x.shape):
        raise ctx.error(f"axis {axis}: expected it in [{-len(x.shape)}, {len(x.shape)}) for X {fmt_shape(x.shape)}")
    dim = x.shape[axis]
    if k < 1 or (dim >= 0 and k > dim):
        raise ctx.error(f"k {k}: expected 1 <= k <= {dim}, dim {axis} of X '{x.name}' {fmt_shape(x.shape)}")
    shape = list(x.shape)
    shape[axis] = k
    ctx.set_output("Out", shape, x.dtype, lod_level=x.lod_level)
    ctx.set_output("Indices", shape, "int64", lod_level=x.lod_level)


def _top_k_v2(xp, x, *, k, axis, largest, sorted):
    """The k largest (or smallest) along `axis`, in that order; ties keep the lower index first.
    `sorted=False` is allowed to return them in any order: here they come sorted all the same."""
    idx = stable_argsort(xp, -x if largest else x, axis)
    idx = contiguous(xp, xp.take(idx, xp.arange(k), axis=axis))
    return xp.take_along_axis(x, idx, axis=axis), astype(xp, idx, "int64")


def _top_k_v2_grad(xp, x, indices, dout, *, k, axis, largest, sorted):
    return put_along(xp, xp.zeros_like(x), indices, dout, axis)


_TOP_K_V2_ATTRS = {"k": 1, "axis": -1, "largest": True, "sorted": True}
register_op(
    "top_k_v2",
    inputs=("X",),
    outputs=("Out", "Indices"),
    attrs=_TOP_K_V2_ATTRS,
    infer_shape=_top_k_v2_infer,
    grad=make_grad_op(inputs=("X", "Indices", "Out@GRAD"), outputs=("X@GRAD",)),
    kernel=_top_k_v2,
)
register_op(
    "top_k_v2_grad",
    inputs=("X", "Indices", "Out@GRAD"),
    outputs=("X@GRAD",),
    attrs=_TOP_K_V2_ATTRS,
    kernel=_top_k_v2_grad,
)

# -- accuracy -------------------------------------------------------------------------------------


def _accuracy_infer(ctx: InferContext) -> None:
    out, idx, label = ctx.input_var("Out"), ctx.input_var("Indices"), ctx.input_var("Label")
    ctx.check_rank("Indices", (2,))
    if out.shape != idx.shape:
        raise ctx.error(
            f"Out '{out.name}' {fmt_shape(out.shape)} and Indices '{idx.name}' {fmt_shape(idx.shape)}: "
            "expected the same [batch, k] shape"
        )
    n = idx.shape[0]
    if len(label.shape) != 2 or label.shape[1] != 1 or (n >= 0 and label.shape[0] >= 0 and label.shape[0] != n):
        raise ctx.error(
            f"Label '{label.name}': expected shape [{n}, 1] (one class id per row of Indices "
            f"'{idx.name}' {fmt_shape(idx.shape)}), got {fmt_shape(label.shape)}"
        )
    ctx.set_output("Accuracy", (1,), "float32")
    ctx.set_output("Correct", (1,), "int32")
    ctx.set_output("Total", (1,), "int32")


def _accuracy(xp, out, indices, label):
    """A row is correct when its label is among its k indices."""
    n = indices.shape[0]
    hits = xp.any(indices == astype(xp, reshape(xp, label, (n, 1)), indices.dtype), axis=1)
    correct = reshape(xp, astype(xp, xp.sum(astype(xp, hits, "int64")), "int32"), (1,))
    accuracy = astype(xp, correct, "float32") / float(max(n, 1))
    return accuracy, correct, full(xp, (1,), n, "int32")


register_op(
    "accuracy",
    inputs=("Out", "Indices", "Label"),
    outputs=("Accuracy", "Correct", "Total"),
    infer_shape=_accuracy_infer,
    kernel=_accuracy,
)


# -- auc ----------------------------------------------------------------------------------------------


def stat_shape(num_thresholds: int, slide_steps: int) -> tuple[int, ...]:
    """Paddle's layout of an auc op's histograms: [1, bins] for the whole run; for a window of the
    last `slide_steps` batches, one row of bins per batch (a ring), their sum, and the step count."""
    bins = num_thresholds + 1
    return (1, bins) if slide_steps == 0 else ((1 + slide_steps) * bins + 1,)


def _auc_infer(ctx: InferContext) -> None:
    predict = ctx.input_var("Predict")
    if len(predict.shape) != 2 or predict.shape[1] not in (-1, 1, 2):
        raise ctx.error(
            f"Predict '{predict.name}': expected [batch, 2] class probabilities, got {fmt_shape(predict.shape)}"
        )
    want = stat_shape(ctx.attr("num_thresholds"), ctx.attr("slide_steps"))
    for slot in ("StatPos", "StatNeg"):
        stat = ctx.input_var(slot)
        if tuple(stat.shape) != want:
            raise ctx.error(f"{slot} '{stat.name}': expected shape {fmt_shape(want)}, got {fmt_shape(stat.shape)}")
        ctx.set_output(slot + "Out", stat.shape, stat.dtype)
    ctx.set_output("AUC", (1,), "float64")


_STATS_LOCK = threading.Lock()


def _auc(xp, predict, label, stat_pos, stat_neg, *, curve, num_thresholds, slide_steps, need):
    """Histogram this batch's positive-class scores (the last column) into num_thresholds + 1 buckets
    per label, add them to the run's histograms or put them in the window's ring (taking the oldest
    batch out of the window's sum), and integrate the ROC curve of the result, as Paddle's kernel."""
    if "StatPosOut" not in need:  # not bound to the state: compute without touching it
        stat_pos, stat_neg = stat_pos.copy(), stat_neg.copy()
    scores = predict[:, -1]
    if scores.size and not (float(scores.min()) >= 0 and float(scores.max()) <= 1):  # NaN fails too
        raise ValueError(
            f"Predict holds {float(scores.min()):g} to {float(scores.max()):g}; expected probabilities in [0, 1]"
        )
    bins = num_thresholds + 1
    bucket = (scores * num_thresholds).astype("int64")
    labels = label.reshape(-1)
    batch_pos = xp.bincount(bucket[labels > 0], minlength=bins)
    batch_neg = xp.bincount(bucket[labels == 0], minlength=bins)
    with _STATS_LOCK:  # training threads share the statistics (train_from_dataset): no count is lost
        pos, neg = (
            _add_batch(stat_pos.reshape(-1), batch_pos, slide_steps, bins),
            _add_batch(stat_neg.reshape(-1), batch_neg, slide_steps, bins),
        )
    return xp.asarray([_roc_auc(xp, pos, neg)]), stat_pos, stat_neg


def _add_batch(flat, batch, slide_steps: int, bins: int):
    """Count a batch into a histogram buffer (in place); returns the histogram the AUC is taken of."""
    if slide_steps == 0:
        flat[:bins] += batch
        return flat[:bins].copy()
    ring = int(flat[-1]) % slide_steps
    current, total = slice(ring * bins, (ring + 1) * bins), slice(slide_steps * bins, (slide_steps + 1) * bins)
    flat[total] -= flat[current]
    flat[current] = batch
    flat[total] += batch
    flat[-1] += 1
    return flat[total].copy()


def _roc_auc(xp, pos, neg) -> float:
    """Area under the ROC curve from score histograms, walking from the highest bucket down."""
    tp = xp.cumsum(pos[::-1]).astype("float64")
    fp = xp.cumsum(neg[::-1]).astype("float64")
    if tp[-1] == 0 or fp[-1] == 0:
        return 0.0
    prev_tp = xp.concatenate([xp.zeros(1), tp[:-1]])
    prev_fp = xp.concatenate([xp.zeros(1), fp[:-1]])
    return float(((fp - prev_fp) * (tp + prev_tp) / 2).sum() / (tp[-1] * fp[-1]))


register_op(
    "auc",
    inputs=("Predict", "Label", "StatPos", "StatNeg"),
    outputs=("AUC", "StatPosOut?", "StatNegOut?"),
    attrs={"curve": "ROC", "num_thresholds": 4095, "slide_steps": 1},
    infer_shape=_auc_infer,
    kernel=_auc,
    inplace={"StatPosOut": "StatPos", "StatNegOut": "StatNeg"},
    wants_outputs=True,
)


# -- mean_iou -------------------------------------------------------------------------------------


def _mean_iou_infer(ctx: InferContext) -> None:
    pred, label = ctx.input_var("Predictions"), ctx.input_var("Labels")
    if len(pred.shape) != len(label.shape) or any(
        a != b and a >= 0 and b >= 0 for a, b in zip(pred.shape, label.shape)
    ):
        raise ctx.error(
            f"Labels '{label.name}' {fmt_shape(label.shape)}: expected the shape of Predictions "
            f"'{pred.name}' {fmt_shape(pred.shape)}"
        )
    classes = ctx.attr("num_classes")
    ctx.set_output("OutMeanIou", (1,), "float32")
    ctx.set_output("OutWrong", (classes,), "int32")
    ctx.set_output("OutCorrect", (classes,), "int32")


def _mean_iou(xp, predictions, labels, in_wrongs, in_corrects, in_mean_ious, *, num_classes):
    """Per class, the pixels predicted right (correct) and the pixels it was wrongly predicted for or
    as (wrong), plus the counts handed in; the mean of correct / (correct + wrong) over the classes
    that occur, plus the means handed in (Paddle's kernel adds them, as it does)."""
    pred = reshape(xp, astype(xp, predictions, "int64"), (-1, 1))
    label = reshape(xp, astype(xp, labels, "int64"), (-1, 1))
    classes = xp.arange(num_classes)
    hit = pred == label

    def count(m):
        return astype(xp, total(xp, astype(xp, m, "int64"), 0), "int32")

    correct = count(hit & (pred == classes))
    wrong = count(~hit & (pred == classes)) + count(~hit & (label == classes))
    for w in in_wrongs or ():
        wrong = wrong + w
    for c in in_corrects or ():
        correct = correct + c
    denominator = wrong + correct
    valid = total(xp, astype(xp, denominator > 0, "float32"))
    safe = astype(xp, xp.where(denominator > 0, denominator, xp.ones_like(denominator)), "float32")
    mean = reshape(xp, total(xp, astype(xp, correct, "float32") / safe) / valid, (1,))
    for m in in_mean_ious or ():
        mean = mean + m
    return mean, wrong, correct


register_op(
    "mean_iou",
    inputs=("Predictions", "Labels", "InWrongs*?", "InCorrects*?", "InMeanIou*?"),
    outputs=("OutMeanIou", "OutWrong", "OutCorrect"),
    attrs={"num_classes": 2},
    infer_shape=_mean_iou_infer,
    kernel=_mean_iou,
)
