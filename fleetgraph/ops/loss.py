"""Loss ops: cross_entropy over probabilities, the fused softmax_with_cross_entropy over logits, and the
binary losses log_loss and bce_loss over probabilities in [0, 1]."""

from __future__ import annotations

import numpy as np

from ..ir import InferContext, make_grad_op, register_op
from ..ir.errors import fmt_shape
from ._common import known, normalize_axis
from ._xp import astype, copy, largest, put_along, scalar, total

_CE_ATTRS = {"soft_label": False, "ignore_index": -100}


def _check_label(ctx: InferContext, x_slot: str) -> tuple:
    x, label = ctx.input_var(x_slot), ctx.input_var("Label")
    if len(x.shape) < 2:
        raise ctx.error(f"{x_slot} '{x.name}' {fmt_shape(x.shape)}: expected rank >= 2 [batch, classes]")
    soft = ctx.attr("soft_label")
    want = x.shape if soft else x.shape[:-1] + (1,)
    if len(label.shape) != len(want) or any(a >= 0 and b >= 0 and a != b for a, b in zip(label.shape, want)):
        raise ctx.error(
            f"Label '{label.name}': expected shape {fmt_shape(want)} "
            f"({'soft' if soft else 'hard'} labels for {x_slot} {fmt_shape(x.shape)}), "
            f"got {fmt_shape(label.shape)}"
        )
    if not soft and label.dtype not in ("int64", "int32"):
        raise ctx.error(f"Label '{label.name}': expected int64 class ids, got {label.dtype}")
    return x.shape[:-1] + (1,), x.dtype


def _cross_entropy_infer(ctx: InferContext) -> None:
    shape, dtype = _check_label(ctx, "X")
    ctx.set_output("Y", shape, dtype, lod_level=ctx.input_var("X").lod_level)


def _picked(xp, p, label, ignore_index):
    """p[..., label] per row, with the ignored rows masked."""
    idx = astype(xp, label, "int64")
    mask = idx != ignore_index
    safe = xp.where(mask, idx, 0)
    return xp.take_along_axis(p, safe, axis=-1), mask, safe


def _cross_entropy(xp, x, label, *, soft_label, ignore_index):
    if soft_label:
        return -total(xp, label * xp.log(x), -1, keepdims=True)
    picked, mask, _ = _picked(xp, x, label, ignore_index)
    return astype(xp, xp.where(mask, -xp.log(picked), scalar(xp, x, 0)), x.dtype)


def _cross_entropy_grad(xp, x, label, dy, *, soft_label, ignore_index):
    if soft_label:
        return -dy * label / x
    picked, mask, safe = _picked(xp, x, label, ignore_index)
    return put_along(
        xp, xp.zeros_like(x), safe, astype(xp, xp.where(mask, -dy / picked, scalar(xp, x, 0)), x.dtype), -1
    )


register_op(
    "cross_entropy",
    inputs=("X", "Label"),
    outputs=("Y",),
    attrs=_CE_ATTRS,
    infer_shape=_cross_entropy_infer,
    grad=make_grad_op(inputs=("X", "Label", "Y@GRAD"), outputs=("X@GRAD",)),
    kernel=_cross_entropy,
)
register_op(
    "cross_entropy_grad",
    inputs=("X", "Label", "Y@GRAD"),
    outputs=("X@GRAD",),
    attrs=_CE_ATTRS,
    kernel=_cross_entropy_grad,
)

_SWCE_ATTRS = {"soft_label": False, "ignore_index": -100, "numeric_stable_mode": True, "axis": -1, "use_softmax": True}


def _swce_infer(ctx: InferContext) -> None:
    logits = ctx.input_var("Logits")
    if normalize_axis(ctx.attr("axis"), len(logits.shape)) != len(logits.shape) - 1:
        raise ctx.error(f"axis {ctx.attr('axis')}: only the last axis of Logits is supported")
    shape, dtype = _check_label(ctx, "Logits")
    ctx.set_output("Softmax", logits.shape, dtype, lod_level=logits.lod_level)
    ctx.set_output("Loss", shape, dtype, lod_level=logits.lod_level)


def _swce(xp, logits, label, *, soft_label, ignore_index, numeric_stable_mode, axis, use_softmax):
    if use_softmax:
        shifted = logits - largest(xp, logits, -1, keepdims=True)
        softmax = xp.exp(shifted)  # one exp over the logits: divided in place, and log_softmax needs its sums
        sums = total(xp, softmax, -1, keepdims=True)
        softmax /= sums
        log_softmax = shifted - xp.log(sums)
    else:
        softmax, log_softmax = logits, xp.log(logits)
    if soft_label:
        return softmax, -total(xp, label * log_softmax, -1, keepdims=True)
    picked, mask, _ = _picked(xp, log_softmax, label, ignore_index)
    return softmax, astype(xp, xp.where(mask, -picked, scalar(xp, logits, 0)), logits.dtype)


def _swce_grad(xp, label, softmax, dloss, *, soft_label, ignore_index, numeric_stable_mode, axis, use_softmax):
    if soft_label:
        return (softmax - label) * dloss
    _, mask, safe = _picked(xp, softmax, label, ignore_index)
    d = put_along(xp, copy(xp, softmax), safe, xp.take_along_axis(softmax, safe, axis=-1) - 1, -1)
    return d * astype(xp, xp.where(mask, dloss, scalar(xp, d, 0)), d.dtype)


register_op(
    "softmax_with_cross_entropy",
    inputs=("Logits", "Label"),
    outputs=("Softmax", "Loss"),
    attrs=_SWCE_ATTRS,
    infer_shape=_swce_infer,
    grad=make_grad_op(inputs=("Label", "Softmax", "Loss@GRAD"), outputs=("Logits@GRAD",)),
    kernel=_swce,
)


def _swce_grad_infer(ctx: InferContext) -> None:
    softmax = ctx.input_var("Softmax")
    ctx.set_output("Logits@GRAD", softmax.shape, softmax.dtype)


register_op(
    "softmax_with_cross_entropy_grad",
    inputs=("Label", "Softmax", "Loss@GRAD"),
    outputs=("Logits@GRAD",),
    attrs=_SWCE_ATTRS,
    infer_shape=_swce_grad_infer,
    kernel=_swce_grad,
)


# -- binary losses over probabilities ------------------------------------------------------------


def _check_pair(ctx: InferContext, p_slot: str, label_slot: str):
    """The prediction and the label: the same float dtype and, where known, the same shape."""
    p, label = ctx.input_var(p_slot), ctx.input_var(label_slot)
    if label.dtype != p.dtype or not p.dtype.startswith("float"):
        raise ctx.error(
            f"{label_slot} '{label.name}' is {label.dtype} and {p_slot} '{p.name}' is {p.dtype}; expected "
            "the same float dtype (cast an integer label to float first)"
        )
    same = len(p.shape) == len(label.shape) and all(
        a == b or not known(a) or not known(b) for a, b in zip(p.shape, label.shape)
    )
    if not same:
        raise ctx.error(
            f"{label_slot} '{label.name}' {fmt_shape(label.shape)} differs from {p_slot} '{p.name}' "
            f"{fmt_shape(p.shape)}; expected the same shape"
        )
    return p


def _log_loss_infer(ctx: InferContext) -> None:
    p = _check_pair(ctx, "Predicted", "Labels")
    if len(p.shape) != 2 or (known(p.shape[1]) and p.shape[1] != 1):
        raise ctx.error(
            f"Predicted '{p.name}': expected shape [N, 1] (one probability per row), got {fmt_shape(p.shape)}"
        )
    ctx.set_output("Loss", (p.shape[0], 1), p.dtype, lod_level=p.lod_level)


def _log_loss(xp, p, label, *, epsilon):
    eps = scalar(xp, p, epsilon)
    return -label * xp.log(p + eps) - (1 - label) * xp.log(1 - p + eps)


def _log_loss_grad(xp, p, label, dloss, *, epsilon):
    eps = scalar(xp, p, epsilon)
    return dloss * (-label / (p + eps) + (1 - label) / (1 - p + eps))


register_op(
    "log_loss",
    inputs=("Predicted", "Labels"),
    outputs=("Loss",),
    attrs={"epsilon": 1e-4},
    infer_shape=_log_loss_infer,
    grad=make_grad_op(inputs=("Predicted", "Labels", "Loss@GRAD"), outputs=("Predicted@GRAD",)),
    kernel=_log_loss,
)
register_op(
    "log_loss_grad",
    inputs=("Predicted", "Labels", "Loss@GRAD"),
    outputs=("Predicted@GRAD",),
    attrs={"epsilon": 1e-4},
    kernel=_log_loss_grad,
)

# Paddle's bce_loss kernel: each log is clipped at -100, so a probability of exactly 0 or 1 costs 100
# rather than inf; its gradient divides by max(x * (1 - x), 1e-12) for the same reason.
_BCE_LOG_MIN, _BCE_GRAD_EPS = -100.0, 1e-12


def _bce_infer(ctx: InferContext) -> None:
    x = _check_pair(ctx, "X", "Label")
    ctx.set_output("Out", x.shape, x.dtype, lod_level=x.lod_level)


def _bce_loss(xp, x, label):
    outside = (x < 0) | (x > 1)
    if bool(xp.any(outside)):
        bad = float(x[outside][0])
        raise ValueError(f"bce_loss: X is not a probability; expected values in [0, 1], got {bad}")
    with np.errstate(divide="ignore"):  # log(0) = -inf is clipped below
        log_x = xp.maximum(xp.log(x), _BCE_LOG_MIN)
        log_1mx = xp.maximum(xp.log(1 - x), _BCE_LOG_MIN)
    return astype(xp, (label - 1) * log_1mx - label * log_x, x.dtype)


def _bce_loss_grad(xp, x, label, dout):
    return astype(xp, dout * (x - label) / xp.maximum((1 - x) * x, _BCE_GRAD_EPS), x.dtype)


register_op(
    "bce_loss",
    inputs=("X", "Label"),
    outputs=("Out",),
    infer_shape=_bce_infer,
    grad=make_grad_op(inputs=("X", "Label", "Out@GRAD"), outputs=("X@GRAD",)),
    kernel=_bce_loss,
)
register_op("bce_loss_grad", inputs=("X", "Label", "Out@GRAD"), outputs=("X@GRAD",), kernel=_bce_loss_grad)
