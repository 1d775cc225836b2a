"""Clipping ops: clip (by value), clip_by_norm, and the two that let a sparse (SelectedRows) gradient
take part in a global norm: merge_selected_rows and get_tensor_from_selected_rows."""

from __future__ import annotations

from ..ir import InferContext, make_grad_op, register_op
from ._common import same_shape
from ._xp import astype, copy, mask, scalar, total
from .selected_rows import SelectedRows


def _clip(xp, x, *, min, max):
    if isinstance(x, SelectedRows):  # Paddle's kernel merges the rows first
        merged = x.merged(xp)
        return SelectedRows(merged.rows, xp.clip(merged.value, min, max), merged.height)
    return xp.clip(x, scalar(xp, x, min), scalar(xp, x, max))


def _clip_grad(xp, x, dout, *, min, max):
    return dout * mask(xp, (x >= min) & (x <= max), dout)


def _clip_by_norm(xp, x, *, max_norm):
    """x * max_norm / ||x|| where ||x|| > max_norm, else x (the L2 norm of all its elements)."""
    if isinstance(x, SelectedRows):
        merged = x.merged(xp)
        return SelectedRows(merged.rows, _clip_by_norm(xp, merged.value, max_norm=max_norm), merged.height)
    norm = float(xp.sqrt(total(xp, astype(xp, x, "float64") ** 2)))
    return x * scalar(xp, x, max_norm / norm) if norm > max_norm else copy(xp, x)


def _keep_type(ctx: InferContext) -> None:
    x = ctx.input_var("X")
    ctx.set_output("Out", x.shape, x.dtype, type=x.type)


_CLIP_ATTRS = {"min": -1.0, "max": 1.0}
register_op(
    "clip",
    inputs=("X",),
    outputs=("Out",),
    attrs=_CLIP_ATTRS,
    infer_shape=_keep_type,
    grad=make_grad_op(inputs=("X", "Out@GRAD"), outputs=("X@GRAD",)),
    kernel=_clip,
)
register_op(
    "clip_grad",
    inputs=("X", "Out@GRAD"),
    outputs=("X@GRAD",),
    attrs=_CLIP_ATTRS,
    infer_shape=same_shape(),
    kernel=_clip_grad,
)
register_op(
    "clip_by_norm",
    inputs=("X",),
    outputs=("Out",),
    attrs={"max_norm": 1.0},
    infer_shape=_keep_type,
    kernel=_clip_by_norm,
)
register_op(
    "merge_selected_rows",
    inputs=("X",),
    outputs=("Out",),
    infer_shape=_keep_type,
    kernel=lambda xp, x: x.merged(xp) if isinstance(x, SelectedRows) else x,
)


def _rows_infer(ctx: InferContext) -> None:
    x = ctx.input_var("X")
    ctx.set_output("Out", (-1, *x.shape[1:]), x.dtype)


register_op(
    "get_tensor_from_selected_rows",
    inputs=("X",),
    outputs=("Out",),
    infer_shape=_rows_infer,
    kernel=lambda xp, x: x.value if isinstance(x, SelectedRows) else x,
)
