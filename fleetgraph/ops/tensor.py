"""Tensor-making and -shaping ops: fill_constant, random init, assign, cast, reshape2, transpose2,
concat and split."""

from __future__ import annotations

import numpy as np

from ..ir import InferContext, make_grad_op, register_op
from ..ir.dtypes import convert_dtype
from ..ir.errors import fmt_shape
from ._common import normalize_axis, prod, same_shape
from ._xp import astype, contiguous, copy, dtype_of, full, reshape, scalar, split
from .counter_rng import draw_full
from .lod_tensor import LoDTensor
from .selected_rows import SelectedRows

# -- constants and random init --------------------------------------------------------------------


def _from_attrs(ctx: InferContext) -> None:
    ctx.set_output("Out", ctx.attr("shape"), convert_dtype(ctx.attr("dtype")))


register_op(
    "fill_constant",
    outputs=("Out",),
    attrs={"shape": [1], "value": 0.0, "dtype": "float32", "str_value": "", "force_cpu": False},
    infer_shape=_from_attrs,
    kernel=lambda xp, *, shape, value, dtype, str_value, force_cpu: full(
        xp, shape, float(str_value) if str_value else value, dtype
    ),
)


def _zeros_like(xp, x):
    """Zeros shaped as x; for a tensor array, an array of zeros shaped as its elements (the gradient
    of an array nobody read)."""
    if isinstance(x, list):
        return [None if v is None else _zeros_like(xp, v) for v in x]
    if isinstance(x, LoDTensor):
        return LoDTensor(xp.zeros_like(x.data), x.levels)
    return xp.zeros_like(x)


register_op(
    "fill_zeros_like",
    inputs=("X",),
    outputs=("Out",),
    infer_shape=same_shape(),
    kernel=_zeros_like,
    takes_lod=True,
)


def _random_init(op_type: str):
    """Element i of the variable depends only on the op's key and i (ops/counter_rng.py), so any
    rows of it can be drawn alone and match."""

    def kernel(xp, *, shape, seed, dtype, rng, **attrs):
        return xp.asarray(draw_full(op_type, attrs, rng, shape, dtype))

    return kernel


register_op(
    "uniform_random",
    outputs=("Out",),
    attrs={"shape": [1], "min": -1.0, "max": 1.0, "seed": 0, "dtype": "float32"},
    infer_shape=_from_attrs,
    kernel=_random_init("uniform_random"),
    random=True,
)
for _name in ("gaussian_random", "truncated_gaussian_random"):
    register_op(
        _name,
        outputs=("Out",),
        attrs={"shape": [1], "mean": 0.0, "std": 1.0, "seed": 0, "dtype": "float32"},
        infer_shape=_from_attrs,
        kernel=_random_init(_name),
        random=True,
    )

# -- assign, cast --------------------------------------------------------------------------------


def _assign_grad_maker(op) -> list[dict]:
    return [
        dict(
            type="assign",
            inputs={"X": [op.output("Out")[0] + "@GRAD"]},
            outputs={"Out": [op.input("X")[0] + "@GRAD"]},
            attrs={},
        )
    ]


register_op(
    "assign",
    inputs=("X",),
    outputs=("Out",),
    infer_shape=same_shape(),
    grad=_assign_grad_maker,
    kernel=lambda xp, x: copy(xp, x),
)

# assign_value: a constant array held in the op (Paddle's values attr of the dtype's kind)
VALUE_ATTRS = {"float32": "fp32_values", "float64": "fp64_values", "int32": "int32_values", "int64": "int64_values"}
VALUE_ATTRS["bool"] = "bool_values"


def _assign_value(xp, *, shape, dtype, fp32_values, fp64_values, int32_values, int64_values, bool_values):
    values = {"fp32_values": fp32_values, "fp64_values": fp64_values, "int32_values": int32_values}
    values.update(int64_values=int64_values, bool_values=bool_values)
    return reshape(xp, xp.asarray(values[VALUE_ATTRS[dtype]], dtype=dtype_of(xp, dtype)), shape)


register_op(
    "assign_value",
    outputs=("Out",),
    attrs={"shape": [1], "dtype": "float32", **{attr: [] for attr in VALUE_ATTRS.values()}},
    infer_shape=_from_attrs,
    kernel=_assign_value,
)


def _cast_infer(ctx: InferContext) -> None:
    x = ctx.input_var("X")
    if convert_dtype(ctx.attr("in_dtype")) != x.dtype:
        raise ctx.error(f"in_dtype {ctx.attr('in_dtype')} does not match X '{x.name}' dtype {x.dtype}")
    ctx.set_output("Out", x.shape, convert_dtype(ctx.attr("out_dtype")), lod_level=x.lod_level)


def _cast_grad_maker(op) -> list[dict]:
    return [
        dict(
            type="cast",
            inputs={"X": [op.output("Out")[0] + "@GRAD"]},
            outputs={"Out": [op.input("X")[0] + "@GRAD"]},
            attrs={"in_dtype": op.attr("out_dtype"), "out_dtype": op.attr("in_dtype")},
        )
    ]


register_op(
    "cast",
    inputs=("X",),
    outputs=("Out",),
    attrs={"in_dtype": "float32", "out_dtype": "float32"},
    infer_shape=_cast_infer,
    grad=_cast_grad_maker,
    kernel=lambda xp, x, *, in_dtype, out_dtype: _cast(xp, x, out_dtype),
)


def _cast(xp, x, out_dtype):
    """A SelectedRows casts its values: the gradient of a sparse embedding weight that auto_cast cast."""
    if isinstance(x, SelectedRows):
        return SelectedRows(x.rows, astype(xp, x.value, out_dtype), x.height)
    return astype(xp, x, out_dtype)


# -- where ----------------------------------------------------------------------------------------


def _where_infer(ctx: InferContext) -> None:
    cond, x, y = ctx.input_var("Condition"), ctx.input_var("X"), ctx.input_var("Y")
    if cond.dtype != "bool":
        raise ctx.error(f"Condition '{cond.name}' is {cond.dtype}; expected bool")
    if x.dtype != y.dtype:
        raise ctx.error(f"X '{x.name}' is {x.dtype} but Y '{y.name}' is {y.dtype}; expected the same dtype")
    ctx.set_output("Out", x.shape, x.dtype)


def _where_grad(xp, cond, x, y, dout, *, need):
    zero = scalar(xp, dout, 0)
    return (
        xp.where(cond, dout, zero) if "X@GRAD" in need else None,
        xp.where(cond, zero, dout) if "Y@GRAD" in need else None,
    )


register_op(
    "where",
    inputs=("Condition", "X", "Y"),
    outputs=("Out",),
    infer_shape=_where_infer,
    grad=make_grad_op(inputs=("Condition", "X", "Y", "Out@GRAD"), outputs=("X@GRAD", "Y@GRAD")),
    kernel=lambda xp, cond, x, y: xp.where(cond, x, y),
)
register_op(
    "where_grad",
    inputs=("Condition", "X", "Y", "Out@GRAD"),
    outputs=("X@GRAD", "Y@GRAD"),
    kernel=_where_grad,
    wants_outputs=True,
)

# -- reshape2, transpose2 ------------------------------------------------------------------------


def _reshape_target(ctx: InferContext, x_shape, shape) -> tuple[int, ...]:
    """Paddle's rules: 0 copies X's dim at that index, one -1 is inferred from the rest. Copied dims
    cancel out, so the -1 is known whenever X's other dims are (e.g. [-1, 8, 1, 1] -> [0, -1])."""
    shape = list(shape)
    if shape.count(-1) > 1:
        raise ctx.error(f"shape {fmt_shape(shape)} has more than one -1")
    copied = {i for i, d in enumerate(shape) if d == 0}
    out = [x_shape[i] if i in copied else d for i, d in enumerate(shape)]
    if -1 in shape:
        at = shape.index(-1)
        rest_x = [d for i, d in enumerate(x_shape) if i not in copied]
        known = prod(d for i, d in enumerate(shape) if i not in copied and i != at)
        if all(d >= 0 for d in rest_x):
            if known == 0 or prod(rest_x) % known:
                raise ctx.error(f"cannot reshape {fmt_shape(x_shape)} into {fmt_shape(shape)}")
            out[at] = prod(rest_x) // known
    elif all(d >= 0 for d in x_shape) and prod(out) != prod(x_shape):
        raise ctx.error(
            f"cannot reshape {fmt_shape(x_shape)} ({prod(x_shape)} elements) into "
            f"{fmt_shape(shape)} ({prod(out)} elements)"
        )
    return tuple(out)


def _reshape_infer(ctx: InferContext) -> None:
    x = ctx.input_var("X")
    out = _reshape_target(ctx, x.shape, ctx.attr("shape"))
    # the sequences stay valid only while the rows do (Paddle shares the LoD when dim 0 is unchanged)
    ctx.set_output("Out", out, x.dtype, lod_level=x.lod_level if out[:1] == x.shape[:1] else 0)
    ctx.set_output("XShape", (0,) + x.shape, x.dtype)


def _reshape_kernel(xp, x, *, shape):
    target = [x.shape[i] if d == 0 else d for i, d in enumerate(shape)]
    return reshape(xp, x, target), xp.empty((0,) + x.shape, dtype=x.dtype)


register_op(
    "reshape2",
    inputs=("X",),
    outputs=("Out", "XShape?"),
    attrs={"shape": [-1]},
    infer_shape=_reshape_infer,
    grad=make_grad_op(inputs=("XShape", "Out@GRAD"), outputs=("X@GRAD",)),
    kernel=_reshape_kernel,
)


def _xshape_grad_infer(ctx: InferContext) -> None:
    xshape = ctx.input_var("XShape")
    ctx.set_output("X@GRAD", xshape.shape[1:], xshape.dtype)


register_op(
    "reshape2_grad",
    inputs=("XShape", "Out@GRAD"),
    outputs=("X@GRAD",),
    attrs={"shape": [-1]},
    infer_shape=_xshape_grad_infer,
    kernel=lambda xp, xshape, dout, *, shape: reshape(xp, dout, xshape.shape[1:]),
)


def _transpose_infer(ctx: InferContext) -> None:
    x, axis = ctx.input_var("X"), ctx.attr("axis")
    if sorted(normalize_axis(a, len(x.shape)) for a in axis) != list(range(len(x.shape))):
        raise ctx.error(
            f"axis {axis} is not a permutation of the {len(x.shape)} dims of X '{x.name}' {fmt_shape(x.shape)}"
        )
    ctx.set_output("Out", tuple(x.shape[a] for a in axis), x.dtype)
    ctx.set_output("XShape", (0,) + x.shape, x.dtype)


register_op(
    "transpose2",
    inputs=("X",),
    outputs=("Out", "XShape?"),
    attrs={"axis": [0]},
    infer_shape=_transpose_infer,
    grad=make_grad_op(inputs=("XShape", "Out@GRAD"), outputs=("X@GRAD",)),
    kernel=lambda xp, x, *, axis: (xp.permute_dims(x, tuple(axis)), xp.empty((0,) + x.shape, dtype=x.dtype)),
)
register_op(
    "transpose2_grad",
    inputs=("XShape", "Out@GRAD"),
    outputs=("X@GRAD",),
    attrs={"axis": [0]},
    infer_shape=_xshape_grad_infer,
    kernel=lambda xp, xshape, dout, *, axis: contiguous(xp, xp.permute_dims(dout, tuple(np.argsort(axis).tolist()))),
)

# -- concat, split -------------------------------------------------------------------------------


def _concat_infer(ctx: InferContext) -> None:
    xs = ctx.input_vars("X")
    rank = len(xs[0].shape)
    axis = normalize_axis(ctx.attr("axis"), rank)
    if not 0 <= axis < rank:
        raise ctx.error(f"axis {ctx.attr('axis')} is out of range for rank {rank}")
    out = list(xs[0].shape)
    for v in xs[1:]:
        if len(v.shape) != rank or any(
            i != axis and a >= 0 and b >= 0 and a != b for i, (a, b) in enumerate(zip(xs[0].shape, v.shape))
        ):
            raise ctx.error(
                f"input '{v.name}' {fmt_shape(v.shape)} does not match '{xs[0].name}' "
                f"{fmt_shape(xs[0].shape)} outside axis {axis}"
            )
        out[axis] = -1 if out[axis] < 0 or v.shape[axis] < 0 else out[axis] + v.shape[axis]
    ctx.set_output("Out", out, xs[0].dtype, lod_level=xs[0].lod_level if axis else 0)


def _concat_grad(xp, xs, dout, *, axis):
    axis = normalize_axis(axis, dout.ndim)
    return [contiguous(xp, p) for p in split(xp, dout, [x.shape[axis] for x in xs], axis)]


register_op(
    "concat",
    inputs=("X*",),
    outputs=("Out",),
    attrs={"axis": 0},
    infer_shape=_concat_infer,
    grad=make_grad_op(inputs=("X", "Out@GRAD"), outputs=("X@GRAD",)),
    kernel=lambda xp, xs, *, axis: xp.concat(xs, axis=normalize_axis(axis, xs[0].ndim)),
)
register_op("concat_grad", inputs=("X*", "Out@GRAD"), outputs=("X@GRAD*",), attrs={"axis": 0}, kernel=_concat_grad)


def _split_sizes(dim: int, num: int, sections: list[int]) -> list[int]:
    if sections:
        if -1 in sections and dim >= 0:
            sections = list(sections)
            sections[sections.index(-1)] = dim - sum(s for s in sections if s != -1)
        return list(sections)
    return [dim // num if dim >= 0 else -1] * num


def _split_infer(ctx: InferContext) -> None:
    x = ctx.input_var("X")
    axis = normalize_axis(ctx.attr("axis"), len(x.shape))
    num, sections = ctx.attr("num"), ctx.attr("sections")
    dim = x.shape[axis]
    if not sections and (num <= 0 or (dim >= 0 and dim % num)):
        raise ctx.error(f"X '{x.name}' dim {axis} of size {dim} cannot be split into {num} equal parts")
    sizes = _split_sizes(dim, num, sections)
    if dim >= 0 and sum(sizes) != dim:
        raise ctx.error(f"sections {sections} do not add up to X '{x.name}' dim {axis} of size {dim}")
    n_out = len(ctx.op.outputs.get("Out", []))
    if n_out != len(sizes):
        raise ctx.error(f"{len(sizes)} parts but {n_out} output variables")
    for i, size in enumerate(sizes):
        shape = list(x.shape)
        shape[axis] = size
        ctx.set_output("Out", shape, x.dtype, i=i)


def _split_kernel(xp, x, *, num, sections, axis):
    axis = normalize_axis(axis, x.ndim)
    sizes = _split_sizes(x.shape[axis], num, sections)
    return split(xp, x, sizes, axis)


def _split_grad_maker(op) -> list[dict]:
    return [
        dict(
            type="concat",
            inputs={"X": [n + "@GRAD" for n in op.output("Out")]},
            outputs={"Out": [op.input("X")[0] + "@GRAD"]},
            attrs={"axis": op.attr("axis")},
        )
    ]


register_op(
    "split",
    inputs=("X",),
    outputs=("Out*",),
    attrs={"num": 0, "sections": [], "axis": 0},
    infer_shape=_split_infer,
    grad=_split_grad_maker,
    kernel=_split_kernel,
)


# -- slice ------------------------------------------------------------------------------------------


def _slice_index(shape, axes, starts, ends) -> tuple:
    index = [slice(None)] * len(shape)
    for axis, start, end in zip(axes, starts, ends):
        index[normalize_axis(axis, len(shape))] = slice(start, end)
    return tuple(index)


def _slice_infer(ctx: InferContext) -> None:
    x = ctx.input_var("Input")
    axes, starts, ends = ctx.attr("axes"), ctx.attr("starts"), ctx.attr("ends")
    if not len(axes) == len(starts) == len(ends):
        raise ctx.error(f"axes {axes}, starts {starts} and ends {ends}: expected the same length")
    shape = list(x.shape)
    for axis, start, end in zip(axes, starts, ends):
        a = normalize_axis(axis, len(shape))
        if not 0 <= a < len(shape):
            raise ctx.error(f"axis {axis} is out of range for Input '{x.name}' {fmt_shape(x.shape)}")
        if shape[a] >= 0:
            shape[a] = len(range(*slice(start, end).indices(shape[a])))
    decrease = [normalize_axis(a, len(shape)) for a in ctx.attr("decrease_axis")]
    if any(shape[a] not in (1, -1) for a in decrease):
        raise ctx.error(f"decrease_axis {ctx.attr('decrease_axis')}: the sliced axes hold {shape}; expected size 1")
    ctx.set_output("Out", _decreased(shape, decrease), x.dtype)


def _decreased(shape, decrease) -> list:
    """The shape without the decreased axes ([1] when none is left, as Paddle's)."""
    kept = [d for i, d in enumerate(shape) if i not in decrease]
    return kept or [1]


def _slice(xp, x, *, axes, starts, ends, decrease_axis):
    out = contiguous(xp, x[_slice_index(x.shape, axes, starts, ends)])
    if decrease_axis:
        out = reshape(xp, out, _decreased(out.shape, [normalize_axis(a, x.ndim) for a in decrease_axis]))
    return out


def _slice_grad(xp, x, dout, *, axes, starts, ends, decrease_axis):
    dx = xp.zeros_like(x)
    index = _slice_index(x.shape, axes, starts, ends)
    dx[index] = reshape(xp, dout, dx[index].shape)
    return dx


_SLICE_ATTRS = {"axes": [0], "starts": [0], "ends": [1], "decrease_axis": []}
register_op(
    "slice",
    inputs=("Input",),
    outputs=("Out",),
    attrs=_SLICE_ATTRS,
    infer_shape=_slice_infer,
    grad=make_grad_op(inputs=("Input", "Out@GRAD"), outputs=("Input@GRAD",)),
    kernel=_slice,
)
register_op("slice_grad", inputs=("Input", "Out@GRAD"), outputs=("Input@GRAD",), attrs=_SLICE_ATTRS, kernel=_slice_grad)


# -- fill_constant_batch_size_like ---------------------------------------------------------------------


def _fill_like_infer(ctx: InferContext) -> None:
    x = ctx.input_var("Input")
    shape = list(ctx.attr("shape"))
    shape[ctx.attr("output_dim_idx")] = x.shape[ctx.attr("input_dim_idx")]
    ctx.set_output("Out", shape, convert_dtype(ctx.attr("dtype")))


def _fill_like(xp, x, *, shape, value, dtype, input_dim_idx, output_dim_idx, str_value, force_cpu):
    shape = list(shape)
    shape[output_dim_idx] = np.shape(x)[input_dim_idx]
    return full(xp, shape, float(str_value) if str_value else value, dtype)


register_op(
    "fill_constant_batch_size_like",
    inputs=("Input",),
    outputs=("Out",),
    attrs={
        "shape": [1],
        "value": 0.0,
        "dtype": "float32",
        "input_dim_idx": 0,
        "output_dim_idx": 0,
        "str_value": "",
        "force_cpu": False,
    },
    infer_shape=_fill_like_infer,
    kernel=_fill_like,
)
