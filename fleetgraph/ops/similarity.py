"""Metric-learning ops: cos_sim (the cosine similarity of row pairs) and center_loss (each sample's
distance to its class center, the centers updated in the same op), as Paddle 1.8's kernels."""

from __future__ import annotations

from ..ir import InferContext, make_grad_op, register_op
from ..ir.errors import fmt_shape
from ._common import known
from ._losses_common import register_with_grad
from ._xp import astype, reshape, scalar, total

# -- cos_sim: per row, X . Y / (|X| |Y|); Y is one row for all of X's or one per row ---------------

_COS_EPS = 1e-8  # Paddle's floor on each squared norm


def _cos_sim_infer(ctx: InferContext) -> None:
    x, y = ctx.input_var("X"), ctx.input_var("Y")
    if (
        len(x.shape) < 2
        or len(x.shape) != len(y.shape)
        or any(known(a) and known(b) and a != b for a, b in zip(x.shape[1:], y.shape[1:]))
    ):
        raise ctx.error(
            f"X '{x.name}' {fmt_shape(x.shape)} and Y '{y.name}' {fmt_shape(y.shape)}: expected the same "
            "rank >= 2 and the same dims after the first"
        )
    if known(y.shape[0]) and y.shape[0] != 1 and known(x.shape[0]) and y.shape[0] != x.shape[0]:
        raise ctx.error(f"Y '{y.name}' {fmt_shape(y.shape)}: expected 1 row or as many as X's {x.shape[0]}")
    ctx.set_output("Out", (x.shape[0], 1), x.dtype, lod_level=x.lod_level)
    ctx.set_output("XNorm", (x.shape[0], 1), x.dtype)
    ctx.set_output("YNorm", (y.shape[0], 1), x.dtype)


def _rows(xp, a):
    return reshape(xp, a, (a.shape[0], -1))


def _norm(xp, a):
    return xp.sqrt(xp.maximum(total(xp, a * a, 1, keepdims=True), scalar(xp, a, _COS_EPS)))


def _cos_sim(xp, x, y):
    xs, ys = _rows(xp, x), _rows(xp, y)
    x_norm, y_norm = _norm(xp, xs), _norm(xp, ys)
    return total(xp, xs * ys, 1, keepdims=True) / (x_norm * y_norm), x_norm, y_norm


def _cos_sim_grad(xp, x, y, out, x_norm, y_norm, dout):
    xs, ys = _rows(xp, x), _rows(xp, y)
    dx = dout * (ys / (x_norm * y_norm) - out * xs / (x_norm * x_norm))
    dy = dout * (xs / (x_norm * y_norm) - out * ys / (y_norm * y_norm))
    if ys.shape[0] != xs.shape[0]:  # one Y row served every X row
        dy = total(xp, dy, 0, keepdims=True)
    return reshape(xp, dx, x.shape), reshape(xp, dy, y.shape)


register_with_grad(
    "cos_sim",
    ("X", "Y"),
    ("Out", "XNorm", "YNorm"),
    {},
    _cos_sim_infer,
    _cos_sim,
    ("X", "Y", "Out", "XNorm", "YNorm", "Out@GRAD"),
    ("X@GRAD", "Y@GRAD"),
    _cos_sim_grad,
)

# -- center_loss: half the squared distance of each sample to its class center; the centers move ---


def _center_loss_infer(ctx: InferContext) -> None:
    x, centers = ctx.input_var("X"), ctx.input_var("Centers")
    ctx.check_rank("X", (2,))
    if len(centers.shape) != 2 or (known(centers.shape[1]) and known(x.shape[1]) and centers.shape[1] != x.shape[1]):
        raise ctx.error(
            f"Centers '{centers.name}' {fmt_shape(centers.shape)}: expected [cluster_num, {x.shape[1]}], "
            f"one center per class of X '{x.name}' {fmt_shape(x.shape)}"
        )
    ctx.set_output("SampleCenterDiff", x.shape, x.dtype)
    ctx.set_output("Loss", (x.shape[0], 1), x.dtype)
    ctx.set_output("CentersOut", centers.shape, centers.dtype)


def _center_loss(xp, x, label, centers, rate, *, cluster_num, need_update):
    """As Paddle's kernel: each class's center moves by rate * (sum of its samples' x - center) /
    (1 + its samples in the batch)."""
    ids = astype(xp, reshape(xp, label, (-1,)), "int64")
    diff = x - xp.take(centers, ids, axis=0)
    loss = total(xp, diff * diff, 1, keepdims=True) / 2
    if not need_update:
        return centers, diff, loss
    one_hot = astype(xp, reshape(xp, ids, (-1, 1)) == xp.arange(cluster_num), x.dtype)  # [N, classes]
    sums = xp.matmul(xp.matrix_transpose(one_hot), diff)
    counts = 1 + total(xp, one_hot, 0, keepdims=True)
    step = astype(xp, reshape(xp, rate, (1, 1)), x.dtype) * sums / xp.matrix_transpose(counts)
    return centers + astype(xp, step, centers.dtype), diff, loss


def _center_loss_grad(xp, x, diff, dloss, *, cluster_num, need_update):
    return dloss * diff


register_op(
    "center_loss",
    inputs=("X", "Label", "Centers", "CenterUpdateRate"),
    outputs=("CentersOut?", "SampleCenterDiff", "Loss"),
    attrs={"cluster_num": 1, "need_update": True},
    infer_shape=_center_loss_infer,
    grad=make_grad_op(inputs=("X", "SampleCenterDiff", "Loss@GRAD"), outputs=("X@GRAD",)),
    kernel=_center_loss,
    inplace={"CentersOut": "Centers"},
)
register_op(
    "center_loss_grad",
    inputs=("X", "SampleCenterDiff", "Loss@GRAD"),
    outputs=("X@GRAD",),
    attrs={"cluster_num": 1, "need_update": True},
    kernel=_center_loss_grad,
)
