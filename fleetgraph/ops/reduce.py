"""Reduction ops: reduce_sum, reduce_mean, reduce_max, reduce_min, reduce_prod and mean (over
everything, to one element), with their gradients; reduce_all and reduce_any on bools."""

from __future__ import annotations

import numpy as np

from ..ir import InferContext, make_grad_op, register_op
from ..ir.errors import fmt_shape
from ._common import normalize_axis, prod
from ._xp import reshape, scalar, total


def _reduce_axes(shape_len: int, dim, reduce_all: bool) -> tuple[int, ...]:
    if reduce_all or not dim:
        return tuple(range(shape_len))
    return tuple(sorted(normalize_axis(d, shape_len) for d in dim))


def _reduce_infer(ctx: InferContext) -> None:
    x = ctx.input_var("X")
    dim, keep = ctx.attr("dim"), ctx.attr("keep_dim")
    for d in dim:
        if not -len(x.shape) <= d < max(1, len(x.shape)):
            raise ctx.error(f"dim {d} is out of range for X '{x.name}' {fmt_shape(x.shape)}")
    axes = _reduce_axes(len(x.shape), dim, ctx.attr("reduce_all"))
    if keep:
        shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    else:
        shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    ctx.set_output("Out", shape or (1,), x.dtype)


def _reduced(out, xp):
    return reshape(xp, out, (1,)) if out.ndim == 0 else out


def _reduce_sum(xp, x, *, dim, keep_dim, reduce_all):
    return _reduced(total(xp, x, _reduce_axes(x.ndim, dim, reduce_all), keepdims=keep_dim), xp)


def _reduce_mean(xp, x, *, dim, keep_dim, reduce_all):
    axes = None if reduce_all or not dim else _reduce_axes(x.ndim, dim, reduce_all)
    return _reduced(_mean(xp, x, axes, keep_dim), xp)


def _mean(xp, x, axis, keepdims):
    """x.mean(axis, keepdims) as NumPy 2 computes it for float32/64 (the sum divided by the count in
    x's dtype), without NumPy's Python wrapper, which costs more than the arithmetic on small tensors."""
    if xp is not np:
        return xp.mean(x, axis=axis, keepdims=keepdims)
    if x.dtype.kind != "f" or x.dtype.itemsize < 4:  # ints and float16 accumulate wider: NumPy's rules
        return x.mean(axis=axis, keepdims=keepdims)
    summed = x.sum(axis=axis, keepdims=keepdims)
    return summed / summed.dtype.type(x.size if axis is None else prod(x.shape[a] for a in axis))


def _kept_shape(x, axes) -> tuple[int, ...]:
    """x's shape with the reduced axes kept as 1: where a reduction's output broadcasts back over x."""
    return tuple(1 if i in axes else d for i, d in enumerate(x.shape))


def _expand_back(xp, x, dout, dim, reduce_all, mean: bool):
    """dout spread back over x's shape (divided by the count of each sum, for a mean): an array of
    x's shape filled by assignment, which broadcasts in C (xp.broadcast_to costs microseconds)."""
    axes = _reduce_axes(x.ndim, dim, reduce_all)
    g = reshape(xp, dout, _kept_shape(x, axes))
    if mean:
        g = g / scalar(xp, x, prod(x.shape[i] for i in axes))
    out = xp.empty(x.shape, dtype=g.dtype)
    out[...] = g
    return out


def _reduce_sum_grad(xp, x, dout, *, dim, keep_dim, reduce_all):
    return _expand_back(xp, x, dout, dim, reduce_all, mean=False)


def _reduce_mean_grad(xp, x, dout, *, dim, keep_dim, reduce_all):
    return _expand_back(xp, x, dout, dim, reduce_all, mean=True)


_REDUCE_ATTRS = {"dim": [0], "keep_dim": False, "reduce_all": False}


def _register_reduction(name: str, forward, backward, grad_inputs=("X", "Out@GRAD")) -> None:
    """A reduction op over `dim` (or everything) and its gradient op reading `grad_inputs`."""
    register_op(
        name,
        inputs=("X",),
        outputs=("Out",),
        attrs=_REDUCE_ATTRS,
        infer_shape=_reduce_infer,
        grad=make_grad_op(inputs=grad_inputs, outputs=("X@GRAD",)),
        kernel=forward,
    )
    register_op(name + "_grad", inputs=grad_inputs, outputs=("X@GRAD",), attrs=_REDUCE_ATTRS, kernel=backward)


_register_reduction("reduce_sum", _reduce_sum, _reduce_sum_grad)
_register_reduction("reduce_mean", _reduce_mean, _reduce_mean_grad)


def _extreme(fn: str):
    def kernel(xp, x, *, dim, keep_dim, reduce_all):
        return _reduced(getattr(xp, fn)(x, axis=_reduce_axes(x.ndim, dim, reduce_all), keepdims=keep_dim), xp)

    return kernel


def _extreme_grad(xp, x, out, dout, *, dim, keep_dim, reduce_all):
    """dout to every element equal to the extreme (each of a tie gets all of it), as Paddle's kernel."""
    kept = _kept_shape(x, _reduce_axes(x.ndim, dim, reduce_all))
    hit = x == reshape(xp, out, kept)
    return xp.where(hit, reshape(xp, dout, kept), xp.zeros_like(x))


def _reduce_prod(xp, x, *, dim, keep_dim, reduce_all):
    return _reduced(xp.prod(x, axis=_reduce_axes(x.ndim, dim, reduce_all), keepdims=keep_dim), xp)


def _reduce_prod_grad(xp, x, out, dout, *, dim, keep_dim, reduce_all):
    """dout * out / x, Paddle's formula (a zero element's gradient is not defined by it)."""
    kept = _kept_shape(x, _reduce_axes(x.ndim, dim, reduce_all))
    return reshape(xp, dout, kept) * reshape(xp, out, kept) / x


_WITH_OUT = ("X", "Out", "Out@GRAD")
_register_reduction("reduce_max", _extreme("max"), _extreme_grad, _WITH_OUT)
_register_reduction("reduce_min", _extreme("min"), _extreme_grad, _WITH_OUT)
_register_reduction("reduce_prod", _reduce_prod, _reduce_prod_grad, _WITH_OUT)


def _logical_reduce_infer(ctx: InferContext) -> None:
    x = ctx.input_var("X")
    if x.dtype != "bool":
        raise ctx.error(f"X '{x.name}' is {x.dtype}; expected bool")
    _reduce_infer(ctx)


for _name, _fn in (("reduce_all", "all"), ("reduce_any", "any")):
    register_op(
        _name,
        inputs=("X",),
        outputs=("Out",),
        attrs=_REDUCE_ATTRS,
        infer_shape=_logical_reduce_infer,
        kernel=_extreme(_fn),
    )


def _mean_infer(ctx: InferContext) -> None:
    ctx.set_output("Out", (1,), ctx.input_dtype("X"))


register_op(
    "mean",
    inputs=("X",),
    outputs=("Out",),
    infer_shape=_mean_infer,
    grad=make_grad_op(inputs=("X", "Out@GRAD"), outputs=("X@GRAD",)),
    kernel=lambda xp, x: reshape(xp, _mean(xp, x, None, False), (1,)),
)
register_op(
    "mean_grad",
    inputs=("X", "Out@GRAD"),
    outputs=("X@GRAD",),
    kernel=lambda xp, x, dout: xp.full(x.shape, float(reshape(xp, dout, ()) / x.size), dtype=x.dtype),
)
