"""Product and distance layer functions, Paddle 1.8's fluid.layers spelling and signatures: t, dot,
bmm, addmm, addcmul, kron, cross, trace, dist and fsp_matrix (over the ops of ops/products.py)."""

from __future__ import annotations

from ..dygraph.dispatch import bind
from ..ir.dtypes import convert_dtype
from ..ops.products import DEFAULT_DIM
from .tensor import transpose

__all__ = ["t", "dot", "bmm", "addmm", "addcmul", "kron", "cross", "trace", "dist", "fsp_matrix"]

_FLOATS = ("float32", "float64")
_NUMBERS = ("float32", "float64", "int32", "int64")


def _check_dtype(layer: str, what: str, x, allowed) -> None:
    dtype = convert_dtype(x.dtype)
    if dtype not in allowed:
        raise TypeError(f"{layer}: {what} of dtype {dtype}; expected one of {', '.join(allowed)}")


def _into(op_type: str, inputs: dict, attrs: dict | None, out, name):
    """The op's output: a new variable, or `out` (an existing one) written in place, as Paddle's
    `out=` arguments."""
    if out is None:
        return bind(op_type, inputs, attrs, name=name)
    bind(op_type, inputs, attrs, {"Out": [out]})
    return out


def t(input, name=None):
    """A matrix transposed (transpose2 with axis [1, 0]); a vector is returned as it is. More than
    two dims is an error (paddle.transpose takes those)."""
    if len(input.shape) > 2:
        raise ValueError(f"t: input of shape {list(input.shape)}; expected at most 2 dims (transpose takes more)")
    if len(input.shape) < 2:
        return input
    return transpose(input, [1, 0], name=name)


def dot(x, y, name=None):
    """The inner product of two vectors, [1], or of each row pair of two [N, D] matrices, [N, 1]."""
    for what, v in (("x", x), ("y", y)):
        _check_dtype("dot", what, v, _NUMBERS)
    return bind("dot", {"X": [x], "Y": [y]}, name=name)


def bmm(x, y, name=None):
    """The batched matrix product of [B, M, K] and [B, K, N]."""
    return bind("bmm", {"X": [x], "Y": [y]}, name=name)


def addmm(input, x, y, alpha=1.0, beta=1.0, name=None):
    """beta * input + alpha * (x @ y), input broadcast to [M, N]."""
    for what, v in (("input", input), ("x", x), ("y", y)):
        _check_dtype("addmm", what, v, _FLOATS)
    attrs = {"Alpha": float(alpha), "Beta": float(beta)}
    return bind("addmm", {"Input": [input], "X": [x], "Y": [y]}, attrs, dtype=x.dtype, name=name)


def addcmul(input, tensor1, tensor2, value=1.0, out=None, name=None):
    """input + value * tensor1 * tensor2, built as Paddle 1.8 builds it: elementwise_mul, scale,
    elementwise_add. `value` is a float for float inputs and an int for integer ones."""
    for what, v in (("input", input), ("tensor1", tensor1), ("tensor2", tensor2)):
        _check_dtype("addcmul", what, v, _NUMBERS)
    kind = float if convert_dtype(input.dtype) in _FLOATS else int
    if not isinstance(value, kind) or isinstance(value, bool):
        raise TypeError(f"addcmul: value {value!r}; expected a {kind.__name__} for {convert_dtype(input.dtype)} input")
    product = bind("elementwise_mul", {"X": [tensor1], "Y": [tensor2]}, {"axis": -1})
    scaled = bind("scale", {"X": [product]}, {"scale": float(value), "bias": 0.0, "bias_after_scale": True})
    return _into("elementwise_add", {"X": [input], "Y": [scaled]}, {"axis": -1}, out, name)


def kron(x, y, out=None, name=None):
    """The Kronecker product; the operand of lower rank gets leading dims of 1."""
    return _into("kron", {"X": [x], "Y": [y]}, None, out, name)


def cross(input, other, dim=None):
    """The cross product of 3-vectors along `dim`. As Paddle 1.8's, a `dim` of None or 0 leaves the
    op's default: the first axis of size 3."""
    attrs = {"dim": int(dim) if dim else DEFAULT_DIM}
    return bind("cross", {"X": [input], "Y": [other]}, attrs)


def trace(input, offset=0, dim1=0, dim2=1, out=None, name=None):
    """The sums along the `offset` diagonal of the planes (dim1, dim2): the other dims remain, [1]
    for a matrix."""
    rank = len(input.shape)
    if rank < 2:
        raise ValueError(f"trace: input of shape {list(input.shape)}; expected at least 2 dims")
    for what, d in (("dim1", dim1), ("dim2", dim2)):
        if not -rank <= d < rank:
            raise ValueError(f"trace: {what} {d}; expected an axis in [{-rank}, {rank - 1}]")
    if dim1 % rank == dim2 % rank:
        raise ValueError(f"trace: dim1 {dim1} and dim2 {dim2} are one axis; expected two")
    attrs = {"offset": int(offset), "dim1": int(dim1), "dim2": int(dim2)}
    return _into("trace", {"Input": [input]}, attrs, out, name)


def dist(x, y, p=2):
    """The p-norm of x - y (broadcast together) as a [1] tensor: p = 0 counts the nonzero
    differences, inf / -inf take the largest / smallest."""
    for what, v in (("x", x), ("y", y)):
        _check_dtype("dist", what, v, _FLOATS)
    if not isinstance(p, (float, int)) or isinstance(p, bool):
        raise TypeError(f"dist: p {p!r}; expected a float or an int")
    return bind("dist", {"X": [x], "Y": [y]}, {"p": float(p)})


def fsp_matrix(x, y):
    """The FSP matrix of two feature maps [N, C1, H, W] and [N, C2, H, W]: x's channels times y's,
    averaged over the H * W positions, [N, C1, C2] (the fsp op)."""
    for what, v in (("x", x), ("y", y)):
        _check_dtype("fsp_matrix", what, v, _FLOATS)
    return bind("fsp", {"X": [x], "Y": [y]})
