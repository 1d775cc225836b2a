"""Products and distances (Paddle 1.8's op types, slots and attrs): dot, bmm, addmm, kron, cross,
trace, dist and fsp, each with its gradient op."""

from __future__ import annotations

from ..ir import InferContext, make_grad_op, register_op
from ..ir.errors import fmt_shape
from ._common import normalize_axis
from ._xp import astype, reshape, scalar, total
from .math import unbroadcast


def _register_with_grad(op_type: str, inputs: tuple[str, ...], attrs: dict, infer_shape, kernel, grad_kernel,
                        grad_inputs: tuple[str, ...] | None = None) -> None:  # fmt: skip
    """`op_type` and `<op_type>_grad`, whose inputs are the forward inputs (and `grad_inputs`' extra
    slots) plus Out@GRAD, and whose outputs are the inputs' gradients."""
    grad_ins = (*inputs, *(grad_inputs or ()), "Out@GRAD")
    grad_outs = tuple(s + "@GRAD" for s in inputs)
    register_op(
        op_type,
        inputs=inputs,
        outputs=("Out",),
        attrs=attrs,
        infer_shape=infer_shape,
        grad=make_grad_op(inputs=grad_ins, outputs=grad_outs),
        kernel=kernel,
    )
    register_op(op_type + "_grad", inputs=grad_ins, outputs=grad_outs, attrs=attrs, kernel=grad_kernel)


def _same_shapes(ctx: InferContext, ranks: tuple[int, ...] | None = None) -> tuple:
    x, y = ctx.input_var("X"), ctx.input_var("Y")
    if ranks is not None:
        ctx.check_rank("X", ranks)
    if len(x.shape) != len(y.shape) or any(a != b and a >= 0 and b >= 0 for a, b in zip(x.shape, y.shape)):
        raise ctx.error(f"X '{x.name}' {fmt_shape(x.shape)} and Y '{y.name}' {fmt_shape(y.shape)}; expected one shape")
    return x, y


# -- dot: the inner product along the last axis, kept as a dim of 1 -------------------------------


def _dot_infer(ctx: InferContext) -> None:
    x, _ = _same_shapes(ctx, (1, 2))
    ctx.set_output("Out", (*x.shape[:-1], 1), x.dtype)


_register_with_grad(
    "dot",
    ("X", "Y"),
    {},
    _dot_infer,
    lambda xp, x, y: total(xp, x * y, axis=-1, keepdims=True),
    lambda xp, x, y, dout: (dout * y, dout * x),
)

# -- bmm, addmm: batched and scaled-and-added matrix products ---------------------------------------


def _bmm_infer(ctx: InferContext) -> None:
    x, y = ctx.input_var("X"), ctx.input_var("Y")
    ctx.check_rank("X", (3,))
    ctx.check_rank("Y", (3,))
    if (x.shape[0] != y.shape[0] and min(x.shape[0], y.shape[0]) >= 0) or (
        x.shape[2] != y.shape[1] and min(x.shape[2], y.shape[1]) >= 0
    ):
        raise ctx.error(
            f"X '{x.name}' {fmt_shape(x.shape)} and Y '{y.name}' {fmt_shape(y.shape)}; expected [B, M, K] and [B, K, N]"
        )
    ctx.set_output("Out", (x.shape[0], x.shape[1], y.shape[2]), x.dtype)


def _t(xp, a):
    """The batch of matrices `a` transposed."""
    return xp.permute_dims(a, (*range(a.ndim - 2), a.ndim - 1, a.ndim - 2))


_register_with_grad(
    "bmm",
    ("X", "Y"),
    {},
    _bmm_infer,
    lambda xp, x, y: xp.matmul(x, y),
    lambda xp, x, y, dout: (xp.matmul(dout, _t(xp, y)), xp.matmul(_t(xp, x), dout)),
)


def _addmm_infer(ctx: InferContext) -> None:
    for slot in ("Input", "X", "Y"):
        ctx.check_rank(slot, (2,))
    inp, x, y = ctx.input_var("Input"), ctx.input_var("X"), ctx.input_var("Y")
    out = (x.shape[0], y.shape[1])
    fits = all(i in (1, o) or min(i, o) < 0 for i, o in zip(inp.shape, out))
    if not fits or (x.shape[1] != y.shape[0] and min(x.shape[1], y.shape[0]) >= 0):
        raise ctx.error(
            f"Input {fmt_shape(inp.shape)}, X {fmt_shape(x.shape)}, Y {fmt_shape(y.shape)}; expected X [M, K], "
            "Y [K, N] and Input broadcastable to [M, N]"
        )
    ctx.set_output("Out", out, x.dtype, lod_level=inp.lod_level)


def _addmm(xp, inp, x, y, *, Alpha, Beta, use_mkldnn):
    return scalar(xp, x, Beta) * inp + scalar(xp, x, Alpha) * xp.matmul(x, y)


def _addmm_grad(xp, inp, x, y, dout, *, Alpha, Beta, use_mkldnn):
    alpha = scalar(xp, x, Alpha)
    dinp = scalar(xp, x, Beta) * unbroadcast(xp, dout, inp.shape)
    return dinp, alpha * xp.matmul(dout, _t(xp, y)), alpha * xp.matmul(_t(xp, x), dout)


_register_with_grad(
    "addmm", ("Input", "X", "Y"), {"use_mkldnn": False, "Alpha": 1.0, "Beta": 1.0}, _addmm_infer, _addmm, _addmm_grad
)

# -- kron: the Kronecker product, the lower-rank operand padded with leading 1s ---------------------


def _padded(x_shape, y_shape) -> tuple[tuple, tuple]:
    rank = max(len(x_shape), len(y_shape))
    return (1,) * (rank - len(x_shape)) + tuple(x_shape), (1,) * (rank - len(y_shape)) + tuple(y_shape)


def _kron_infer(ctx: InferContext) -> None:
    x, y = ctx.input_var("X"), ctx.input_var("Y")
    xs, ys = _padded(x.shape, y.shape)
    ctx.set_output("Out", tuple(a * b if min(a, b) >= 0 else -1 for a, b in zip(xs, ys)), x.dtype)


def _interleaved(xp, x, y):
    """x as [a0, 1, a1, 1, ...] and y as [1, b0, 1, b1, ...]: their product is the Kronecker
    product with each output axis split in two."""
    xs, ys = _padded(x.shape, y.shape)
    return (
        reshape(xp, x, [d for a in xs for d in (a, 1)]),
        reshape(xp, y, [d for b in ys for d in (1, b)]),
        tuple(a * b for a, b in zip(xs, ys)),
    )


def _kron(xp, x, y):
    xi, yi, shape = _interleaved(xp, x, y)
    return reshape(xp, xi * yi, shape)


def _kron_grad(xp, x, y, dout):
    xi, yi, _ = _interleaved(xp, x, y)
    split = reshape(xp, dout, [max(a, b) for a, b in zip(xi.shape, yi.shape)])
    rank = xi.ndim // 2
    dx = total(xp, split * yi, axis=tuple(2 * i + 1 for i in range(rank)))
    dy = total(xp, split * xi, axis=tuple(2 * i for i in range(rank)))
    return reshape(xp, dx, x.shape), reshape(xp, dy, y.shape)


_register_with_grad("kron", ("X", "Y"), {}, _kron_infer, _kron, _kron_grad)

# -- cross: the 3-vector cross product along `dim` (default: the first axis of size 3) --------------

DEFAULT_DIM = 9  # Paddle's kDefaultDim (DDim::kMaxRank): no dim given


def cross_axis(shape, dim: int) -> int:
    """The axis cross works along: `dim`, or with none given the first axis of size 3."""
    if dim != DEFAULT_DIM:
        return normalize_axis(dim, len(shape))
    axis = next((i for i, d in enumerate(shape) if d == 3), None)
    if axis is None:
        raise ValueError(f"cross: no axis of size 3 in shape {fmt_shape(shape)}; expected one when dim is not given")
    return axis


def _cross_infer(ctx: InferContext) -> None:
    x, _ = _same_shapes(ctx)
    dim = ctx.attr("dim")
    if dim != DEFAULT_DIM:
        if not -len(x.shape) <= dim < len(x.shape):
            raise ctx.error(f"dim {dim}: expected an axis of X {fmt_shape(x.shape)}")
        if x.shape[normalize_axis(dim, len(x.shape))] not in (3, -1):
            raise ctx.error(f"dim {dim}: X {fmt_shape(x.shape)} has size {x.shape[dim]} there; expected 3")
    ctx.set_output("Out", x.shape, x.dtype)


def _cross3(xp, a, b, axis: int):
    a, b = xp.moveaxis(a, axis, -1), xp.moveaxis(b, axis, -1)
    parts = [a[..., i] * b[..., j] - a[..., j] * b[..., i] for i, j in ((1, 2), (2, 0), (0, 1))]
    return xp.moveaxis(xp.stack(parts, axis=-1), -1, axis)


_register_with_grad(
    "cross",
    ("X", "Y"),
    {"dim": DEFAULT_DIM},
    _cross_infer,
    lambda xp, x, y, *, dim: _cross3(xp, x, y, cross_axis(x.shape, dim)),
    lambda xp, x, y, dout, *, dim: (
        _cross3(xp, y, dout, cross_axis(x.shape, dim)),
        _cross3(xp, dout, x, cross_axis(x.shape, dim)),
    ),
)

# -- trace: the sum of a diagonal of the planes (dim1, dim2) ---------------------------------------


def _trace_axes(ndim: int, dim1: int, dim2: int) -> tuple[int, int]:
    return normalize_axis(dim1, ndim), normalize_axis(dim2, ndim)


def _trace_infer(ctx: InferContext) -> None:
    x = ctx.input_var("Input")
    rank = len(x.shape)
    dim1, dim2 = ctx.attr("dim1"), ctx.attr("dim2")
    if rank < 2 or not (-rank <= dim1 < rank and -rank <= dim2 < rank):
        raise ctx.error(f"dim1 {dim1}, dim2 {dim2}: expected two axes of Input {fmt_shape(x.shape)} (rank >= 2)")
    a, b = _trace_axes(rank, dim1, dim2)
    if a == b:
        raise ctx.error(f"dim1 {dim1} and dim2 {dim2} name one axis; expected two")
    rest = tuple(d for i, d in enumerate(x.shape) if i not in (a, b))
    ctx.set_output("Out", rest or (1,), x.dtype)


def _diagonal_mask(xp, x, dim1: int, dim2: int, offset: int):
    """x with axes dim1, dim2 moved last, and the 0/1 matrix of its `offset` diagonal."""
    a, b = _trace_axes(x.ndim, dim1, dim2)
    moved = xp.moveaxis(x, (a, b), (-2, -1))
    return moved, xp.eye(moved.shape[-2], moved.shape[-1], k=offset, dtype=x.dtype)


def _trace(xp, x, *, offset, dim1, dim2):
    moved, eye = _diagonal_mask(xp, x, dim1, dim2, offset)
    out = total(xp, moved * eye, axis=(-2, -1))
    return reshape(xp, out, (1,)) if x.ndim == 2 else out


def _trace_grad(xp, x, dout, *, offset, dim1, dim2):
    moved, eye = _diagonal_mask(xp, x, dim1, dim2, offset)
    grad = reshape(xp, dout, (*moved.shape[:-2], 1, 1)) * eye
    a, b = _trace_axes(x.ndim, dim1, dim2)
    return xp.moveaxis(grad, (-2, -1), (a, b))


_register_with_grad("trace", ("Input",), {"offset": 0, "dim1": -2, "dim2": -1}, _trace_infer, _trace, _trace_grad)

# -- dist: the p-norm of x - y (broadcast), as one element -------------------------------------------


def _dist_infer(ctx: InferContext) -> None:
    ctx.set_output("Out", (1,), ctx.input_var("X").dtype)


def _dist(xp, x, y, *, p):
    d = xp.abs(x - y)
    if p == 0:
        out = total(xp, astype(xp, d != 0, x.dtype))
    elif p == float("inf"):
        out = xp.max(d)
    elif p == float("-inf"):
        out = xp.min(d)
    else:
        out = total(xp, d ** scalar(xp, d, p)) ** scalar(xp, d, 1.0 / p)
    return reshape(xp, out, (1,))


def _dist_grad(xp, x, y, out, dout, *, p):
    """Paddle's dist_grad: zero for p=0; for +-inf the sign where |x - y| is the norm; else
    sign(x - y) (|x - y| / norm)^(p - 1). Each summed back over the dims broadcasting added."""
    diff = x - y
    sign = xp.sign(diff)
    if p == 0:
        grad = xp.zeros_like(diff)
    elif p in (float("inf"), float("-inf")):
        grad = astype(xp, xp.abs(diff) == out, x.dtype) * sign * dout
    else:
        grad = (xp.abs(diff) / out) ** scalar(xp, diff, p - 1) * sign * dout
    return unbroadcast(xp, grad, x.shape), -unbroadcast(xp, grad, y.shape)


_register_with_grad("dist", ("X", "Y"), {"p": 2.0}, _dist_infer, _dist, _dist_grad, grad_inputs=("Out",))

# -- fsp: the flow-of-solution-procedure matrix of two feature maps ---------------------------------


def _fsp_infer(ctx: InferContext) -> None:
    ctx.check_rank("X", (4,))
    ctx.check_rank("Y", (4,))
    x, y = ctx.input_var("X"), ctx.input_var("Y")
    if any(a != b and min(a, b) >= 0 for i, (a, b) in enumerate(zip(x.shape, y.shape)) if i != 1):
        raise ctx.error(
            f"X '{x.name}' {fmt_shape(x.shape)} and Y '{y.name}' {fmt_shape(y.shape)}; expected one batch "
            "size, height and width"
        )
    ctx.set_output("Out", (x.shape[0], x.shape[1], y.shape[1]), x.dtype)


def _flat_maps(xp, x, y):
    """x as [N, C1, H*W], y as [N, C2, H*W], and 1 / (H*W)."""
    n, hw = x.shape[0], x.shape[2] * x.shape[3]
    return reshape(xp, x, (n, x.shape[1], hw)), reshape(xp, y, (n, y.shape[1], hw)), scalar(xp, x, 1.0 / hw)


def _fsp(xp, x, y):
    xf, yf, scale = _flat_maps(xp, x, y)
    return xp.matmul(xf, _t(xp, yf)) * scale


def _fsp_grad(xp, x, y, dout):
    xf, yf, scale = _flat_maps(xp, x, y)
    dx = xp.matmul(dout, yf) * scale
    dy = xp.matmul(_t(xp, dout), xf) * scale
    return reshape(xp, dx, x.shape), reshape(xp, dy, y.shape)


_register_with_grad("fsp", ("X", "Y"), {}, _fsp_infer, _fsp, _fsp_grad)
