"""Loss ops beyond cross entropy: sigmoid cross entropy, huber, smooth L1, KL, ranking and pairwise
losses, label smoothing, cosine similarity and the center loss, each with Paddle 1.8's kernel math
(paddle/fluid/operators/<op>_op.h): the same clips, the same zeros, the same normalizations."""

from __future__ import annotations

from ..ir import InferContext
from ..ir.errors import fmt_shape
from ._common import known
from ._losses_common import grads_shaped_as, register_with_grad, tolerable
from ._xp import astype, mask, put_along, reshape, scalar, total
from .loss import _check_pair


def _elementwise_infer(x_slot: str, label_slot: str, out_slots: tuple[str, ...]):
    """Outputs shaped as the prediction, which the label matches in shape and float dtype."""

    def infer(ctx: InferContext) -> None:
        x = _check_pair(ctx, x_slot, label_slot)
        for slot in out_slots:
            ctx.set_output(slot, x.shape, x.dtype, lod_level=x.lod_level)

    return infer


def _softplus_neg_abs(xp, x):
    """log(1 + exp(-|x|)), the stable tail of a sigmoid cross entropy."""
    return xp.log1p(xp.exp(-xp.abs(x)))


def _sigmoid(xp, x):
    return 1 / (1 + xp.exp(-x))


# -- sigmoid_cross_entropy_with_logits ------------------------------------------------------------


def _kept(xp, label, ignore_index, normalize):
    """Where the label is not ignore_index (as int, Paddle's cast), and what each element is divided by:
    with `normalize`, the count of labels further than 1e-6 from ignore_index."""
    keep = astype(xp, label, "int64") != ignore_index
    if not normalize:
        return keep, 1
    count = total(xp, astype(xp, xp.abs(label - float(ignore_index)) > 1e-6, label.dtype))
    return keep, count


def _sigmoid_ce(xp, x, label, *, ignore_index, normalize):
    keep, norm = _kept(xp, label, ignore_index, normalize)
    out = xp.maximum(x, scalar(xp, x, 0)) - x * label + _softplus_neg_abs(xp, x)
    return xp.where(keep, out, scalar(xp, x, 0)) / norm


def _sigmoid_ce_grad(xp, x, label, dout, *, ignore_index, normalize):
    keep, norm = _kept(xp, label, ignore_index, normalize)
    return xp.where(keep, dout * (_sigmoid(xp, x) - label), scalar(xp, x, 0)) / norm


register_with_grad(
    "sigmoid_cross_entropy_with_logits",
    ("X", "Label"),
    ("Out",),
    {"normalize": False, "ignore_index": -100},
    _elementwise_infer("X", "Label", ("Out",)),
    _sigmoid_ce,
    ("X", "Label", "Out@GRAD"),
    ("X@GRAD",),
    _sigmoid_ce_grad,
)

# -- huber_loss: Residual = Y - X, quadratic within delta, linear beyond ---------------------------


def _huber(xp, x, y, *, delta):
    r = y - x
    a = xp.abs(r)
    return xp.where(a <= delta, 0.5 * r * r, delta * (a - 0.5 * delta)), r


def _huber_grad(xp, residual, dout, *, delta):
    d = xp.clip(residual, -delta, delta) * dout  # the residual within delta, its sign times delta beyond
    return -d, d


register_with_grad(
    "huber_loss",
    ("X", "Y"),
    ("Out", "Residual"),
    {"delta": 1.0},
    _elementwise_infer("X", "Y", ("Out", "Residual")),
    _huber,
    ("Residual", "Out@GRAD"),
    ("X@GRAD", "Y@GRAD"),
    _huber_grad,
    grads_shaped_as(**{"X@GRAD": "Residual", "Y@GRAD": "Residual"}),
)

# -- kldiv_loss: target * (log(target) - x), 0 where target <= 0, then reduced -----------------------

_KLDIV_REDUCTIONS = ("none", "batchmean", "mean", "sum")


def _kldiv_infer(ctx: InferContext) -> None:
    x = _check_pair(ctx, "X", "Target")
    reduction = ctx.attr("reduction")
    if reduction not in _KLDIV_REDUCTIONS:
        raise ctx.error(f"reduction expected one of {list(_KLDIV_REDUCTIONS)}, got {reduction!r}")
    ctx.set_output("Loss", x.shape if reduction == "none" else (1,), x.dtype)


def _kldiv(xp, x, target, *, reduction):
    positive = target > 0
    safe = xp.where(positive, target, scalar(xp, target, 1))
    out = xp.where(positive, target * (xp.log(safe) - x), scalar(xp, x, 0))
    if reduction == "none":
        return out
    loss = total(xp, out)
    if reduction == "batchmean":
        loss = loss / x.shape[0]
    elif reduction == "mean":
        loss = loss / out.size
    return reshape(xp, loss, (1,))


def _kldiv_grad(xp, target, dloss, *, reduction):
    d = xp.where(target > 0, -target * dloss, scalar(xp, target, 0))
    if reduction == "mean":
        return d / target.size
    return d / target.shape[0] if reduction == "batchmean" else d


register_with_grad(
    "kldiv_loss",
    ("X", "Target"),
    ("Loss",),
    {"reduction": "mean"},
    _kldiv_infer,
    _kldiv,
    ("Target", "Loss@GRAD"),
    ("X@GRAD",),
    _kldiv_grad,
    grads_shaped_as(**{"X@GRAD": "Target"}),
)

# -- smooth_l1_loss: per sample, the sum of the smooth L1 of (X - Y) * inside, times outside --------


def _smooth_l1_infer(ctx: InferContext) -> None:
    x = _check_pair(ctx, "X", "Y")
    for slot in ("InsideWeight", "OutsideWeight"):
        if ctx.has_input(slot):
            _check_pair(ctx, "X", slot)
    if ctx.has_input("InsideWeight") != ctx.has_input("OutsideWeight"):
        raise ctx.error("InsideWeight and OutsideWeight: expected both or neither")
    ctx.set_output("Diff", x.shape, x.dtype)
    ctx.set_output("Out", (x.shape[0], 1), x.dtype)


def _smooth_l1(xp, x, y, inside, outside, *, sigma):
    sigma2 = sigma * sigma
    diff = x - y if inside is None else (x - y) * inside
    a = xp.abs(diff)
    err = xp.where(a < 1.0 / sigma2, 0.5 * diff * diff * sigma2, a - 0.5 / sigma2)
    if outside is not None:
        err = err * outside
    return diff, total(xp, reshape(xp, err, (x.shape[0], -1)), 1, keepdims=True)


def _smooth_l1_grad(xp, inside, outside, diff, dout, *, sigma):
    sigma2 = sigma * sigma
    d = xp.where(xp.abs(diff) < 1.0 / sigma2, sigma2 * diff, xp.sign(diff))
    if inside is not None and outside is not None:
        d = d * inside * outside
    d = reshape(xp, reshape(xp, d, (diff.shape[0], -1)) * dout, diff.shape)
    return d, -d


register_with_grad(
    "smooth_l1_loss",
    ("X", "Y", "InsideWeight?", "OutsideWeight?"),
    ("Diff", "Out"),
    {"sigma": 1.0},
    _smooth_l1_infer,
    _smooth_l1,
    ("InsideWeight?", "OutsideWeight?", "Diff", "Out@GRAD"),
    ("X@GRAD", "Y@GRAD"),
    _smooth_l1_grad,
    grads_shaped_as(**{"X@GRAD": "Diff", "Y@GRAD": "Diff"}),
)

# -- margin_rank_loss and rank_loss: a pair's scores X1/Left, X2/Right against Label ---------------


def _pair_infer(a_slot: str, b_slot: str, outs: tuple[str, ...]):
    def infer(ctx: InferContext) -> None:
        label = _check_pair(ctx, a_slot, "Label")
        _check_pair(ctx, a_slot, b_slot)
        for slot in outs:
            ctx.set_output(slot, label.shape, label.dtype)

    return infer


def _margin_rank(xp, label, x1, x2, *, margin):
    out = xp.maximum(-label * (x1 - x2) + margin, scalar(xp, x1, 0))
    return out, astype(xp, out > 0, out.dtype)


def _margin_rank_grad(xp, label, activated, dout, *, margin):
    d = dout * activated * label
    return -d, d


register_with_grad(
    "margin_rank_loss",
    ("Label", "X1", "X2"),
    ("Out", "Activated"),
    {"margin": 0.1},
    _pair_infer("X1", "X2", ("Out", "Activated")),
    _margin_rank,
    ("Label", "Activated", "Out@GRAD"),
    ("X1@GRAD", "X2@GRAD"),
    _margin_rank_grad,
    grads_shaped_as(**{"X1@GRAD": "Label", "X2@GRAD": "Label"}),
)


def _rank(xp, label, left, right):
    return xp.log(1 + xp.exp(left - right)) - label * (left - right)


def _rank_grad(xp, label, left, right, dout):
    d = dout * (1 / (1 + xp.exp(right - left)) - label)
    return d, -d


register_with_grad(
    "rank_loss",
    ("Label", "Left", "Right"),
    ("Out",),
    {},
    _pair_infer("Left", "Right", ("Out",)),
    _rank,
    ("Label", "Left", "Right", "Out@GRAD"),
    ("Left@GRAD", "Right@GRAD"),
    _rank_grad,
)

# -- bpr_loss: -mean over the other classes j of log(sigmoid(x[label] - x[j])) ------------------------


def _bpr_infer(ctx: InferContext) -> None:
    x, label = ctx.input_var("X"), ctx.input_var("Label")
    if len(label.shape) != len(x.shape) or (known(label.shape[-1]) and label.shape[-1] != 1):
        raise ctx.error(
            f"Label '{label.name}' {fmt_shape(label.shape)}: expected one class id per row of X "
            f"'{x.name}' {fmt_shape(x.shape)}, shape {fmt_shape(x.shape[:-1] + (1,))}"
        )
    ctx.set_output("Y", x.shape[:-1] + (1,), x.dtype)


def _bpr_parts(xp, x, label):
    classes = x.shape[-1]
    idx = astype(xp, label, "int64")
    positive = xp.take_along_axis(x, idx, axis=-1)
    others = xp.arange(classes) != idx
    return classes, idx, positive, others


def _bpr(xp, x, label):
    classes, _, positive, others = _bpr_parts(xp, x, label)
    terms = tolerable(xp, -xp.log(1 + tolerable(xp, xp.exp(x - positive))))
    return -total(xp, xp.where(others, terms, scalar(xp, x, 0)), -1, keepdims=True) / (classes - 1)


def _bpr_grad(xp, x, label, dy):
    classes, idx, positive, others = _bpr_parts(xp, x, label)
    g = -dy / ((classes - 1) * (1 + tolerable(xp, xp.exp(positive - x))))
    g = xp.where(others, g, scalar(xp, x, 0))
    at_label = total(xp, g, -1, keepdims=True)
    return put_along(xp, -g, idx, at_label, -1)


register_with_grad(
    "bpr_loss", ("X", "Label"), ("Y",), {}, _bpr_infer, _bpr, ("X", "Label", "Y@GRAD"), ("X@GRAD",), _bpr_grad
)

# -- teacher_student_sigmoid_loss: a click label (< 0) or a teacher's score plus a click (>= 0) -----


def _tss_infer(ctx: InferContext) -> None:
    x = _check_pair(ctx, "X", "Label")
    ctx.set_output("Y", x.shape, x.dtype)


def _tss(xp, x, label, *, soft_max_up_bound, soft_max_lower_bound):
    base = xp.maximum(x, scalar(xp, x, 0)) + _softplus_neg_abs(xp, x)  # the loss of a 0 label
    return xp.where(
        label < -1.0,
        base,
        xp.where(label < 0.0, base - x, xp.where(label < 1.0, 2 * base - x * label, 2 * base - x - x * (label - 1.0))),
    )


def _tss_grad(xp, x, label, dy, *, soft_max_up_bound, soft_max_lower_bound):
    clipped = xp.clip(x, soft_max_lower_bound, soft_max_up_bound)
    pred = _sigmoid(xp, clipped)
    d = xp.where(label < -1.0, -pred, xp.where(label < 0.0, 1 - pred, label - 2 * pred))
    inside = (clipped < soft_max_up_bound) & (clipped > soft_max_lower_bound)
    return -d * mask(xp, inside, d) * dy


register_with_grad(
    "teacher_student_sigmoid_loss",
    ("X", "Label"),
    ("Y",),
    {"soft_max_up_bound": 15.0, "soft_max_lower_bound": -15.0},
    _tss_infer,
    _tss,
    ("X", "Label", "Y@GRAD"),
    ("X@GRAD",),
    _tss_grad,
)

# -- label_smooth: (1 - epsilon) * X + epsilon * (PriorDist, else uniform over the last axis) ------


def _label_smooth_infer(ctx: InferContext) -> None:
    x = ctx.input_var("X")
    if ctx.has_input("PriorDist"):
        dist = ctx.input_var("PriorDist")
        if known(x.shape[-1]) and dist.shape[-1] not in (-1, x.shape[-1]):
            raise ctx.error(
                f"PriorDist '{dist.name}' {fmt_shape(dist.shape)}: expected {x.shape[-1]} probabilities, "
                f"one per class of X '{x.name}' {fmt_shape(x.shape)}"
            )
    ctx.set_output("Out", x.shape, x.dtype, lod_level=x.lod_level)


def _label_smooth(xp, x, prior, *, epsilon):
    if prior is None:
        return (1 - epsilon) * x + epsilon / x.shape[-1]
    return (1 - epsilon) * x + epsilon * reshape(xp, prior, (-1,))


def _label_smooth_grad(xp, dout, *, epsilon):
    return (1 - epsilon) * dout


register_with_grad(
    "label_smooth",
    ("X", "PriorDist?"),
    ("Out",),
    {"epsilon": 0.0},
    _label_smooth_infer,
    _label_smooth,
    ("Out@GRAD",),
    ("X@GRAD",),
    _label_smooth_grad,
    grads_shaped_as(**{"X@GRAD": "Out@GRAD"}),
)


# the families of this module's layers whose ops live beside it, registered with it
from . import ctr, py_func, sample_logits, similarity  # noqa: E402,F401
