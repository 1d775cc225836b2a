"""Loss ops: cross_entropy over probabilities and the fused softmax_with_cross_entropy over logits."""

from __future__ import annotations

from ..ir import InferContext, make_grad_op, register_op
from ..ir.errors import fmt_shape
from ._common import normalize_axis

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
    idx = label.astype("int64")
    mask = idx != ignore_index
    safe = xp.where(mask, idx, 0)
    return xp.take_along_axis(p, safe, axis=-1), mask, safe


def _cross_entropy(xp, x, label, *, soft_label, ignore_index):
    if soft_label:
        return -(label * xp.log(x)).sum(axis=-1, keepdims=True)
    picked, mask, _ = _picked(xp, x, label, ignore_index)
    return xp.where(mask, -xp.log(picked), 0).astype(x.dtype)


def _cross_entropy_grad(xp, x, label, dy, *, soft_label, ignore_index):
    if soft_label:
        return -dy * label / x
    picked, mask, safe = _picked(xp, x, label, ignore_index)
    dx = xp.zeros_like(x)
    xp.put_along_axis(dx, safe, xp.where(mask, -dy / picked, 0).astype(x.dtype), axis=-1)
    return dx


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
        shifted = logits - logits.max(axis=-1, keepdims=True)
        log_softmax = shifted - xp.log(xp.exp(shifted).sum(axis=-1, keepdims=True))
        softmax = xp.exp(log_softmax)
    else:
        softmax, log_softmax = logits, xp.log(logits)
    if soft_label:
        return softmax, -(label * log_softmax).sum(axis=-1, keepdims=True)
    picked, mask, _ = _picked(xp, log_softmax, label, ignore_index)
    return softmax, xp.where(mask, -picked, 0).astype(logits.dtype)


def _swce_grad(xp, label, softmax, dloss, *, soft_label, ignore_index, numeric_stable_mode, axis, use_softmax):
    if soft_label:
        return (softmax - label) * dloss
    _, mask, safe = _picked(xp, softmax, label, ignore_index)
    d = softmax.copy()
    xp.put_along_axis(d, safe, xp.take_along_axis(d, safe, axis=-1) - 1, axis=-1)
    return d * xp.where(mask, dloss, 0).astype(d.dtype)


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
