"""Tensor manipulation ops (Paddle 1.8's types, slots and attrs; tile as Paddle 2.0's): expand_as,
tile, unstack, gather, scatter, one_hot, one_hot_v2, arg_max, arg_min and argsort, with their
gradients where Paddle has them. The shape ops the decoders stand on are in ops/tensor_shape.py."""

from __future__ import annotations

from ..ir import InferContext, make_grad_op, register_op
from ..ir.dtypes import convert_dtype
from ..ir.errors import fmt_shape
from ._common import normalize_axis
from ._xp import astype, reshape, scatter_add, scatter_last, sorted_runs, stable_argsort
from .tensor_shape import _expand_grad, _unstacked

# -- expand_as, tile: expand by a target's shape, or by repeat_times padded to a common rank ------------


def _expand_as_infer(ctx: InferContext) -> None:
    x, target = ctx.input_var("X"), ctx.input_var("target_tensor")
    if len(x.shape) != len(target.shape):
        raise ctx.error(f"X '{x.name}' {fmt_shape(x.shape)} and target_tensor {fmt_shape(target.shape)} differ in rank")
    ctx.set_output("Out", target.shape, x.dtype, lod_level=x.lod_level)


def _times_to(x_shape, target_shape) -> tuple[int, ...]:
    if any(t % d for d, t in zip(x_shape, target_shape)):
        raise ValueError(f"expand_as: target shape {tuple(target_shape)} is not a multiple of X's {tuple(x_shape)}")
    return tuple(t // d for d, t in zip(x_shape, target_shape))


register_op(
    "expand_as",
    inputs=("X", "target_tensor"),
    outputs=("Out",),
    infer_shape=_expand_as_infer,
    grad=make_grad_op(inputs=("X", "target_tensor", "Out@GRAD"), outputs=("X@GRAD",)),
    kernel=lambda xp, x, target: xp.tile(x, _times_to(x.shape, target.shape)),
)
register_op(
    "expand_as_grad",
    inputs=("X", "target_tensor", "Out@GRAD"),
    outputs=("X@GRAD",),
    kernel=lambda xp, x, target, dout: _expand_grad(xp, x, dout, expand_times=_times_to(x.shape, target.shape)),
)


def _common_rank(shape, times) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Paddle 2.0's tile: the shorter of x's shape and repeat_times gets leading ones."""
    rank = max(len(shape), len(times))
    return (1,) * (rank - len(shape)) + tuple(shape), (1,) * (rank - len(times)) + tuple(times)


def _tile_infer(ctx: InferContext) -> None:
    x = ctx.input_var("X")
    shape, times = _common_rank(x.shape, ctx.attr("repeat_times"))
    ctx.set_output("Out", tuple(-1 if d < 0 else d * t for d, t in zip(shape, times)), x.dtype)


def _tile_grad(xp, x, dout, *, repeat_times):
    shape, times = _common_rank(x.shape, repeat_times)
    return reshape(xp, _expand_grad(xp, reshape(xp, x, shape), dout, expand_times=times), x.shape)


register_op(
    "tile",
    inputs=("X",),
    outputs=("Out",),
    attrs={"repeat_times": []},
    infer_shape=_tile_infer,
    grad=make_grad_op(inputs=("X", "Out@GRAD"), outputs=("X@GRAD",)),
    kernel=lambda xp, x, *, repeat_times: xp.tile(x, _common_rank(x.shape, repeat_times)[1]),
)
register_op("tile_grad", inputs=("X", "Out@GRAD"), outputs=("X@GRAD",), attrs={"repeat_times": []}, kernel=_tile_grad)

# -- unstack: stack's inverse, its gradient a stack ---------------------------------------------------


def _unstack_infer(ctx: InferContext) -> None:
    x = ctx.input_var("X")
    axis = normalize_axis(ctx.attr("axis"), len(x.shape))
    part = x.shape[:axis] + x.shape[axis + 1 :]
    for i, _ in enumerate(ctx.op.outputs["Y"]):
        ctx.set_output("Y", part, x.dtype, i=i)


def _unstack_grad_maker(op) -> list[dict]:
    return [
        dict(
            type="unstack_grad",
            inputs={"Y@GRAD": [n + "@GRAD" for n in op.output("Y")]},
            outputs={"X@GRAD": [op.input("X")[0] + "@GRAD"]},
            attrs=dict(op.attrs),
        )
    ]


register_op(
    "unstack",
    inputs=("X",),
    outputs=("Y*",),
    attrs={"axis": 0, "num": 0},
    infer_shape=_unstack_infer,
    grad=_unstack_grad_maker,
    kernel=lambda xp, x, *, axis, num: _unstacked(xp, x, axis),
)
register_op(
    "unstack_grad",
    inputs=("Y@GRAD*",),
    outputs=("X@GRAD",),
    attrs={"axis": 0, "num": 0},
    infer_shape=lambda ctx: None,
    kernel=lambda xp, dys, *, axis, num: xp.stack(dys, axis=axis),
)

# -- gather, scatter: rows by index; the gradients scatter --------------------------


def _along(xp, axis: int, fn, *arrays):
    """fn on the arrays with `axis` moved to the front, its result moved back."""
    return xp.moveaxis(fn(*(xp.moveaxis(a, axis, 0) for a in arrays)), 0, axis)


def _gather_infer(ctx: InferContext) -> None:
    x, index = ctx.input_var("X"), ctx.input_var("Index")
    axis = normalize_axis(ctx.attr("axis"), len(x.shape))
    count = index.shape[0] if index.shape else 1
    ctx.set_output("Out", (*x.shape[:axis], count, *x.shape[axis + 1 :]), x.dtype)


def _gather_grad(xp, x, index, dout, *, overwrite, axis):
    """overwrite (Paddle's default) keeps one of the gradients of a repeated index, as Paddle's
    ScatterAssign; without it each repeat adds."""
    index, axis = reshape(xp, index, (-1,)), normalize_axis(axis, x.ndim)
    if overwrite:
        zeros = xp.zeros(x.shape, dtype=dout.dtype)
        return _along(xp, axis, lambda z, g: scatter_last(xp, z, index, g), zeros, dout)
    return _along(xp, axis, lambda g: scatter_add(xp, x.shape[axis], index, g), dout)


register_op(
    "gather",
    inputs=("X", "Index"),
    outputs=("Out",),
    attrs={"overwrite": True, "axis": 0},
    infer_shape=_gather_infer,
    grad=make_grad_op(inputs=("X", "Index", "Out@GRAD"), outputs=("X@GRAD",)),
    kernel=lambda xp, x, index, *, overwrite, axis: xp.take(x, reshape(xp, index, (-1,)), axis=axis),
)
register_op(
    "gather_grad",
    inputs=("X", "Index", "Out@GRAD"),
    outputs=("X@GRAD",),
    attrs={"overwrite": True, "axis": 0},
    kernel=_gather_grad,
)


def _scatter_infer(ctx: InferContext) -> None:
    x = ctx.input_var("X")
    ctx.set_output("Out", x.shape, x.dtype)


def _scatter(xp, x, ids, updates, *, overwrite):
    """X with its rows at Ids replaced by Updates' rows; without overwrite, the rows at Ids become
    the sum of the updates to them (Paddle's zero-then-add)."""
    ids = reshape(xp, ids, (-1,))
    if overwrite:
        return scatter_last(xp, x, ids, updates)
    _, lo, hi = sorted_runs(xp, x.shape[0], ids)
    kept = xp.where(reshape(xp, hi > lo, (-1,) + (1,) * (x.ndim - 1)), xp.zeros_like(x), x)
    return kept + scatter_add(xp, x.shape[0], ids, updates)


def _scatter_grad(xp, ids, updates, dout, *, overwrite):
    """The rows of X that Ids replaced get no gradient; Updates gets dout's rows at Ids."""
    ids = reshape(xp, ids, (-1,))
    _, lo, hi = sorted_runs(xp, dout.shape[0], ids)
    dx = xp.where(reshape(xp, hi > lo, (-1,) + (1,) * (dout.ndim - 1)), xp.zeros_like(dout), dout)
    return dx, xp.take(dout, ids, axis=0)


register_op(
    "scatter",
    inputs=("X", "Ids", "Updates"),
    outputs=("Out",),
    attrs={"overwrite": True},
    infer_shape=_scatter_infer,
    grad=make_grad_op(inputs=("Ids", "Updates", "Out@GRAD"), outputs=("X@GRAD", "Updates@GRAD")),
    kernel=_scatter,
)
register_op(
    "scatter_grad",
    inputs=("Ids", "Updates", "Out@GRAD"),
    outputs=("X@GRAD", "Updates@GRAD"),
    attrs={"overwrite": True},
    kernel=_scatter_grad,
)

# -- one_hot, one_hot_v2 ----------------------------------------------------------------------------


def _one_hot_kernel(trailing_one: bool):
    def kernel(xp, x, *, depth, dtype, allow_out_of_range):
        """x's ids as rows of `depth` (one_hot drops x's last dim of 1); an id outside [0, depth) is
        an error, or a row of zeros with allow_out_of_range."""
        ids = x[..., 0] if trailing_one else x
        if not allow_out_of_range and bool(xp.any((ids < 0) | (ids >= depth))):
            raise ValueError(f"one_hot: an id of X is outside [0, {depth}) and allow_out_of_range is false")
        return astype(xp, ids[..., None] == xp.arange(depth, dtype=ids.dtype), convert_dtype(dtype))

    return kernel


def _one_hot_infer(trailing_one: bool):
    def infer(ctx: InferContext) -> None:
        x = ctx.input_var("X")
        if trailing_one and (not x.shape or x.shape[-1] not in (1, -1)):
            raise ctx.error(f"X '{x.name}' {fmt_shape(x.shape)}: one_hot takes ids with a last dim of 1")
        lead = x.shape[:-1] if trailing_one else x.shape
        ctx.set_output("Out", (*lead, ctx.attr("depth")), convert_dtype(ctx.attr("dtype")), lod_level=x.lod_level)

    return infer


for _name, _trailing in (("one_hot", True), ("one_hot_v2", False)):
    register_op(
        _name,
        inputs=("X",),
        outputs=("Out",),
        attrs={"depth": -1, "dtype": "float32", "allow_out_of_range": False},
        infer_shape=_one_hot_infer(_trailing),
        kernel=_one_hot_kernel(_trailing),
    )

# -- arg_max, arg_min, argsort ---------------------------------------------------------------------------


def _index_dtype(dtype) -> str:
    """Paddle's dtype attr of arg_max/arg_min: -1 (its default) means int64, else 2 int32 or 3 int64."""
    return {-1: "int64", 2: "int32", 3: "int64"}.get(dtype) or convert_dtype(dtype)


def _arg_infer(ctx: InferContext) -> None:
    x, keep = ctx.input_var("X"), ctx.attr("keepdims")
    if ctx.attr("flatten"):
        shape = (1,) * len(x.shape) if keep else (1,)
    else:
        axis = normalize_axis(ctx.attr("axis"), len(x.shape))
        shape = tuple(1 if i == axis else d for i, d in enumerate(x.shape) if keep or i != axis)
    ctx.set_output("Out", shape, _index_dtype(ctx.attr("dtype")))


def _arg_kernel(pick: str):
    def kernel(xp, x, *, axis, keepdims, dtype, flatten):
        """The index of the first extreme along axis (of x flattened with flatten, Paddle 2.0's attr)."""
        if flatten:
            out = getattr(xp, pick)(reshape(xp, x, (-1,)), axis=0, keepdims=True)
            out = reshape(xp, out, (1,) * x.ndim if keepdims else (1,))
        else:
            out = getattr(xp, pick)(x, axis=normalize_axis(axis, x.ndim), keepdims=keepdims)
        return astype(xp, out, _index_dtype(dtype))

    return kernel


for _name, _pick in (("arg_max", "argmax"), ("arg_min", "argmin")):
    register_op(
        _name,
        inputs=("X",),
        outputs=("Out",),
        attrs={"axis": -1, "keepdims": False, "dtype": -1, "flatten": False},
        infer_shape=_arg_infer,
        kernel=_arg_kernel(_pick),
    )


def _argsort_infer(ctx: InferContext) -> None:
    x = ctx.input_var("X")
    ctx.set_output("Out", x.shape, x.dtype, lod_level=x.lod_level)
    ctx.set_output("Indices", x.shape, "int64", lod_level=x.lod_level)


def _argsort(xp, x, *, axis, descending):
    """Sorted along axis with the source indices; equal values keep their order (stable)."""
    idx = stable_argsort(xp, -x if descending else x, axis)
    return xp.take_along_axis(x, idx, axis=axis), astype(xp, idx, "int64")


def _argsort_grad(xp, x, indices, dout, *, axis, descending):
    """dout moved back to where each sorted value came from: through the inverse permutation."""
    return xp.take_along_axis(dout, stable_argsort(xp, indices, axis), axis=axis)


register_op(
    "argsort",
    inputs=("X",),
    outputs=("Out", "Indices"),
    attrs={"axis": -1, "descending": False},
    infer_shape=_argsort_infer,
    grad=make_grad_op(inputs=("X", "Indices", "Out@GRAD"), outputs=("X@GRAD",)),
    kernel=_argsort,
)
register_op(
    "argsort_grad",
    inputs=("X", "Indices", "Out@GRAD"),
    outputs=("X@GRAD",),
    attrs={"axis": -1, "descending": False},
    kernel=_argsort_grad,
)
