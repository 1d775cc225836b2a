"""Shape and index ops (Paddle 1.8's types, slots and attrs): unsqueeze2, squeeze2, expand, stack,
shape, range, fill_any_like and gather_nd, with their gradients where Paddle has them."""

from __future__ import annotations

import numpy as np

from ..ir import InferContext, make_grad_op, register_op
from ..ir.dtypes import convert_dtype
from ..ir.errors import fmt_shape
from ._common import normalize_axis, prod
from ._xp import full, host, reshape, scatter_add, total

# -- unsqueeze2 / squeeze2: a reshape that adds or drops size-1 axes ------------------------------


def _unsqueezed(shape, axes) -> tuple[int, ...]:
    out = list(shape)
    for a in axes:  # Paddle inserts in the order given, each axis counted in the growing shape
        a = a + len(out) + 1 if a < 0 else a
        if not 0 <= a <= len(out):
            raise ValueError(f"axis {a} is out of range for rank {len(out)}")
        out.insert(a, 1)
    return tuple(out)


def _squeezed(shape, axes) -> tuple[int, ...]:
    if not axes:
        return tuple(d for d in shape if d != 1)
    drop = {normalize_axis(a, len(shape)) for a in axes}
    return tuple(d for i, d in enumerate(shape) if not (i in drop and d == 1))  # a non-1 axis stays, as Paddle


def _xshape_grad_infer(ctx: InferContext) -> None:
    xshape = ctx.input_var("XShape")
    ctx.set_output("X@GRAD", xshape.shape[1:], xshape.dtype)


def _reshaping(name: str, new_shape):
    def infer(ctx: InferContext) -> None:
        x = ctx.input_var("X")
        try:
            shape = new_shape(x.shape, ctx.attr("axes"))
        except ValueError as e:
            raise ctx.error(f"X '{x.name}' {fmt_shape(x.shape)}: {e}") from None
        ctx.set_output("Out", shape, x.dtype, lod_level=x.lod_level)
        ctx.set_output("XShape", (0, *x.shape), x.dtype)

    def kernel(xp, x, *, axes):  # XShape holds x's shape in an empty array, as reshape2's
        return reshape(xp, x, new_shape(x.shape, axes)), xp.empty((0, *x.shape), dtype=x.dtype)

    register_op(
        name,
        inputs=("X",),
        outputs=("Out", "XShape?"),
        attrs={"axes": []},
        infer_shape=infer,
        grad=make_grad_op(inputs=("XShape", "Out@GRAD"), outputs=("X@GRAD",)),
        kernel=kernel,
    )
    register_op(
        name + "_grad",
        inputs=("XShape", "Out@GRAD"),
        outputs=("X@GRAD",),
        attrs={"axes": []},
        infer_shape=_xshape_grad_infer,
        kernel=lambda xp, xshape, dout, *, axes: reshape(xp, dout, xshape.shape[1:]),
    )


_reshaping("unsqueeze2", _unsqueezed)
_reshaping("squeeze2", _squeezed)

# -- expand: tile each axis expand_times[i] times ----------------------------------------------


def _expand_infer(ctx: InferContext) -> None:
    x, times = ctx.input_var("X"), ctx.attr("expand_times")
    if len(times) != len(x.shape):
        raise ctx.error(f"expand_times {times} has {len(times)} entries for X '{x.name}' {fmt_shape(x.shape)}")
    shape = tuple(-1 if d < 0 or t < 0 else d * t for d, t in zip(x.shape, times))
    ctx.set_output("Out", shape, x.dtype, lod_level=x.lod_level)


def _expand(xp, x, *, expand_times):
    return xp.tile(x, tuple(expand_times))


def _expand_grad(xp, x, dout, *, expand_times):
    """The sum of dout over the copies of each element: dout as [t0, d0, t1, d1, ...] summed over the t's."""
    split = tuple(v for t, d in zip(expand_times, x.shape) for v in (t, d))
    return total(xp, reshape(xp, dout, split), axis=tuple(range(0, 2 * x.ndim, 2)))


register_op(
    "expand",
    inputs=("X",),
    outputs=("Out",),
    attrs={"expand_times": []},
    infer_shape=_expand_infer,
    grad=make_grad_op(inputs=("X", "Out@GRAD"), outputs=("X@GRAD",)),
    kernel=_expand,
)
register_op(
    "expand_grad", inputs=("X", "Out@GRAD"), outputs=("X@GRAD",), attrs={"expand_times": []}, kernel=_expand_grad
)

# -- stack --------------------------------------------------------------------------------------------


def _stack_infer(ctx: InferContext) -> None:
    xs = ctx.input_vars("X")
    first = xs[0]
    for v in xs[1:]:
        if len(v.shape) != len(first.shape) or any(a >= 0 and b >= 0 and a != b for a, b in zip(v.shape, first.shape)):
            raise ctx.error(f"X '{v.name}' {fmt_shape(v.shape)} differs from '{first.name}' {fmt_shape(first.shape)}")
    axis = normalize_axis(ctx.attr("axis"), len(first.shape) + 1)
    ctx.set_output("Y", (*first.shape[:axis], len(xs), *first.shape[axis:]), first.dtype)


def _unstacked(xp, y, axis: int) -> list:
    axis = normalize_axis(axis, y.ndim)
    return [y[(slice(None),) * axis + (i, Ellipsis)] for i in range(y.shape[axis])]


def _stack_grad_maker(op) -> list[dict]:
    return [
        dict(
            type="stack_grad",
            inputs={"Y@GRAD": [op.output("Y")[0] + "@GRAD"]},
            outputs={"X@GRAD": [n + "@GRAD" for n in op.input("X")]},
            attrs={"axis": op.attrs["axis"]},
        )
    ]


register_op(
    "stack",
    inputs=("X*",),
    outputs=("Y",),
    attrs={"axis": 0},
    infer_shape=_stack_infer,
    grad=_stack_grad_maker,
    kernel=lambda xp, xs, *, axis: xp.stack(xs, axis=axis),
)
register_op(
    "stack_grad",
    inputs=("Y@GRAD",),
    outputs=("X@GRAD*",),
    attrs={"axis": 0},
    infer_shape=lambda ctx: None,
    kernel=lambda xp, dy, *, axis: _unstacked(xp, dy, axis),
)

# -- shape, range, fill_any_like: no gradient ------------------------------------------------------


def _shape_infer(ctx: InferContext) -> None:
    ctx.set_output("Out", (len(ctx.input_var("Input").shape),), "int32")


register_op(
    "shape",
    inputs=("Input",),
    outputs=("Out",),
    infer_shape=_shape_infer,
    kernel=lambda xp, x: xp.asarray(list(x.shape), dtype=xp.int32),
)


def _range_infer(ctx: InferContext) -> None:
    start = ctx.input_var("Start")
    ctx.set_output("Out", (-1,), start.dtype)


def _scalar_of(a):
    return host(a).reshape(-1)[0].item()


def _range(xp, start, end, step):
    """[start, end) by step, of Start's dtype (Paddle's range op: all three are tensors)."""
    first, last, by = _scalar_of(start), _scalar_of(end), _scalar_of(step)
    if by == 0:
        raise ValueError("range: Step is 0")
    count = max(0, int(np.ceil((last - first) / by)))
    return xp.asarray(first + by * np.arange(count), dtype=start.dtype)


register_op("range", inputs=("Start", "End", "Step"), outputs=("Out",), infer_shape=_range_infer, kernel=_range)


def _fill_any_like_infer(ctx: InferContext) -> None:
    x, dtype = ctx.input_var("X"), ctx.attr("dtype")
    ctx.set_output("Out", x.shape, x.dtype if dtype in ("", -1) else convert_dtype(dtype))


def _fill_any_like(xp, x, *, value, dtype):
    return full(xp, x.shape, value, x.dtype if dtype in ("", -1) else convert_dtype(dtype))


register_op(
    "fill_any_like",
    inputs=("X",),
    outputs=("Out",),
    attrs={"value": 0.0, "dtype": ""},
    infer_shape=_fill_any_like_infer,
    kernel=_fill_any_like,
)

# -- gather_nd --------------------------------------------------------------------------------------


def _gather_nd_infer(ctx: InferContext) -> None:
    x, index = ctx.input_var("X"), ctx.input_var("Index")
    depth = index.shape[-1]
    if depth < 0 or depth > len(x.shape):
        raise ctx.error(f"Index '{index.name}' {fmt_shape(index.shape)}: its last dim must be at most X's rank")
    ctx.set_output("Out", (*index.shape[:-1], *x.shape[depth:]), x.dtype)


def _flat_positions(xp, x_shape, index):
    """Each index tuple as a position in x's first index.shape[-1] axes, flattened."""
    depth = index.shape[-1]
    strides = np.cumprod([1, *x_shape[:depth][::-1]])[:-1][::-1].astype(np.int64)
    flat = total(xp, xp.astype(index, xp.int64) * xp.asarray(strides), axis=-1)
    return reshape(xp, flat, (-1,)), depth


def _gather_nd(xp, x, index):
    positions, depth = _flat_positions(xp, x.shape, index)
    rows = reshape(xp, x, (prod(x.shape[:depth]), *x.shape[depth:]))
    return reshape(xp, xp.take(rows, positions, axis=0), (*index.shape[:-1], *x.shape[depth:]))


def _gather_nd_grad(xp, x, index, dout):
    """dout added back at each gathered position, an index met twice getting both (scatter_add:
    add.at where the module has it, else sums over the sorted positions)."""
    positions, depth = _flat_positions(xp, x.shape, index)
    rows = scatter_add(xp, prod(x.shape[:depth]), positions, reshape(xp, dout, (positions.shape[0], -1)))
    return reshape(xp, rows, x.shape)


register_op(
    "gather_nd",
    inputs=("X", "Index"),
    outputs=("Out",),
    infer_shape=_gather_nd_infer,
    grad=make_grad_op(inputs=("X", "Index", "Out@GRAD"), outputs=("X@GRAD",)),
    kernel=_gather_nd,
)
register_op("gather_nd_grad", inputs=("X", "Index", "Out@GRAD"), outputs=("X@GRAD",), kernel=_gather_nd_grad)
