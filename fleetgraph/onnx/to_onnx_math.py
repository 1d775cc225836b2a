"""Export rules of the arithmetic ops: elementwise with Paddle's axis, products, activations, reductions."""

from __future__ import annotations

from ..ops._common import aligned_y_shape
from .emitter import Emitter, UnsupportedOp, exports, onnx_dtype


def _aligned_y(e: Emitter, x: str, y: str, axis: int) -> str:
    """Y reshaped so ONNX's NumPy broadcasting lines it up with X from `axis`, as Paddle does."""
    xr, ys = len(e.shape(x)), e.shape(y)
    if axis == -1 or len(ys) > xr or axis + len(ys) == xr:
        return y
    target = list(aligned_y_shape(xr, ys, axis))
    if target.count(-1) > 1:
        raise UnsupportedOp(f"Y '{y}' {list(ys)}: more than one dim known only at run time to align at axis {axis}")
    return e.node("Reshape", [y, e.const(target)])


_BINARY = {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "pow": "Pow", "min": "Min", "max": "Max"}
_COMPARE = {
    "less_than": "Less",
    "less_equal": "LessOrEqual",
    "greater_than": "Greater",
    "greater_equal": "GreaterOrEqual",
    "equal": "Equal",
}


@exports(*(f"elementwise_{k}" for k in _BINARY), *_COMPARE, "not_equal")
def _binary(e: Emitter, op) -> None:
    x, y = e.x(op, "X"), e.x(op, "Y")
    y = _aligned_y(e, x, y, op.attr("axis"))
    if op.type == "not_equal":
        e.node("Not", [e.node("Equal", [x, y])], e.out(op, "Out"))
        return
    onnx_type = _COMPARE.get(op.type) or _BINARY[op.type.removeprefix("elementwise_")]
    e.node(onnx_type, [x, y], e.out(op, "Out"))


_LOGICAL = {"logical_and": "And", "logical_or": "Or", "logical_xor": "Xor"}


@exports(*_LOGICAL)
def _logical(e: Emitter, op) -> None:
    e.node(_LOGICAL[op.type], [e.x(op, "X"), e.x(op, "Y")], e.out(op, "Out"))


_UNARY = {
    "relu": "Relu",
    "sigmoid": "Sigmoid",
    "tanh": "Tanh",
    "exp": "Exp",
    "log": "Log",
    "sqrt": "Sqrt",
    "abs": "Abs",
    "floor": "Floor",
    "ceil": "Ceil",
    "cos": "Cos",
    "sign": "Sign",
    "assign": "Identity",
    "logical_not": "Not",
}


@exports("print")
def _print(e: Emitter, op) -> None:
    """An exported model does not print: the value passes through."""
    e.node("Identity", [e.x(op, "In")], e.out(op, "Out"))


@exports(*_UNARY)
def _unary(e: Emitter, op) -> None:
    e.node(_UNARY[op.type], [e.x(op, "X")], e.out(op, "Out"))


@exports("square")
def _square(e: Emitter, op) -> None:
    x = e.x(op, "X")
    e.node("Mul", [x, x], e.out(op, "Out"))


@exports("softmax")
def _softmax(e: Emitter, op) -> None:
    e.node("Softmax", [e.x(op, "X")], e.out(op, "Out"), axis=op.attr("axis"))


@exports("log_softmax")
def _log_softmax(e: Emitter, op) -> None:
    e.node("LogSoftmax", [e.x(op, "X")], e.out(op, "Out"), axis=op.attr("axis"))


@exports("clip")
def _clip(e: Emitter, op) -> None:
    x = e.x(op, "X")
    e.node("Clip", [x, e.scalar(op.attr("min"), x), e.scalar(op.attr("max"), x)], e.out(op, "Out"))


@exports("scale")
def _scale(e: Emitter, op) -> None:
    x, s, b = e.x(op, "X"), op.attr("scale"), op.attr("bias")
    if b == 0.0:
        e.node("Mul", [x, e.scalar(s, x)], e.out(op, "Out"))
    elif op.attr("bias_after_scale"):
        e.node("Add", [e.node("Mul", [x, e.scalar(s, x)]), e.scalar(b, x)], e.out(op, "Out"))
    else:
        e.node("Mul", [e.node("Add", [x, e.scalar(b, x)]), e.scalar(s, x)], e.out(op, "Out"))


@exports("increment")
def _increment(e: Emitter, op) -> None:
    x = e.x(op, "X")
    e.node("Add", [x, e.scalar(op.attr("step"), x)], e.out(op, "Out"))


@exports("cast")
def _cast(e: Emitter, op) -> None:
    e.node("Cast", [e.x(op, "X")], e.out(op, "Out"), to=onnx_dtype(op.attr("out_dtype")))


@exports("mul")
def _mul(e: Emitter, op) -> None:
    """X flattened at x_num_col_dims times Y flattened at y_num_col_dims; a MatMul when no flattening
    is needed (X [..., K] times Y [K, N], fc's usual case)."""
    x, y = e.x(op, "X"), e.x(op, "Y")
    xn, yn = op.attr("x_num_col_dims"), op.attr("y_num_col_dims")
    xs, ys = e.shape(x), e.shape(y)
    if len(xs) == xn + 1 and len(ys) == 2 and yn == 1:
        e.node("MatMul", [x, y], e.out(op, "Out"))
        return
    if any(d < 0 for d in ys):
        raise UnsupportedOp(f"Y '{y}' {list(ys)}: expected a static shape to flatten")
    product = e.node("MatMul", [e.node("Flatten", [x], axis=xn), e.node("Flatten", [y], axis=yn)])
    if xn == 1:  # [rows, ...Y's tail]: a constant shape, so load reads it back as one reshape2
        e.node("Reshape", [product, e.const([-1, *ys[yn:]])], e.out(op, "Out"))
        return
    lead = e.node("Shape", [x], end=xn)
    e.node("Reshape", [product, e.node("Concat", [lead, e.const(list(ys[yn:]))], axis=0)], e.out(op, "Out"))


def _swap_last(e: Emitter, name: str) -> str:
    rank = len(e.shape(name))
    if rank < 2:
        return name
    perm = list(range(rank))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return e.node("Transpose", [name], perm=perm)


@exports("matmul")
def _matmul(e: Emitter, op) -> None:
    x, y = e.x(op, "X"), e.x(op, "Y")
    x = _swap_last(e, x) if op.attr("transpose_X") else x
    y = _swap_last(e, y) if op.attr("transpose_Y") else y
    out = e.out(op, "Out")
    scalar = len(e.shape(e.x(op, "X"))) == 1 and len(e.shape(e.x(op, "Y"))) == 1
    alpha = op.attr("alpha")
    if alpha == 1.0 and not scalar:
        e.node("MatMul", [x, y], out)
        return
    product = e.node("MatMul", [x, y])
    if alpha != 1.0:
        product = e.node("Mul", [product, e.scalar(alpha, e.x(op, "X"))])
    e.node("Reshape", [product, e.const([1])], out) if scalar else e.node("Identity", [product], out)


@exports("sum")
def _sum(e: Emitter, op) -> None:
    e.node("Sum", e.xs(op, "X"), e.out(op, "Out"))


@exports("mean")
def _mean(e: Emitter, op) -> None:
    reduced = e.node("ReduceMean", [e.x(op, "X")], keepdims=0)
    e.node("Reshape", [reduced, e.const([1])], e.out(op, "Out"))


_REDUCE = {
    "reduce_sum": "ReduceSum",
    "reduce_mean": "ReduceMean",
    "reduce_max": "ReduceMax",
    "reduce_min": "ReduceMin",
    "reduce_prod": "ReduceProd",
    "reduce_all": "ReduceMin",  # on the bools as 0/1, then back to bool
    "reduce_any": "ReduceMax",
}


@exports(*_REDUCE)
def _reduce(e: Emitter, op) -> None:
    name = e.x(op, "X")
    logical = op.type in ("reduce_all", "reduce_any")
    x = e.node("Cast", [name], to=onnx_dtype("int32")) if logical else name
    keep, dims = op.attr("keep_dim"), op.attr("dim")
    every = op.attr("reduce_all") or not dims
    inputs = [x] if every else [x, e.const([int(d) for d in dims])]
    rank_after = len(e.shape(name)) if keep else (0 if every else len(e.shape(name)) - len(set(dims)))
    steps = [] if rank_after else [lambda v, out=None: e.node("Reshape", [v, e.const([1])], out)]
    if logical:
        steps.append(lambda v, out=None: e.node("Cast", [v], out, to=onnx_dtype("bool")))
    if not steps:
        e.node(_REDUCE[op.type], inputs, e.out(op, "Out"), keepdims=int(keep))
        return
    value = e.node(_REDUCE[op.type], inputs, keepdims=int(keep))
    for step in steps[:-1]:
        value = step(value)
    steps[-1](value, e.out(op, "Out"))


@exports("where")
def _where(e: Emitter, op) -> None:
    e.node("Where", [e.x(op, "Condition"), e.x(op, "X"), e.x(op, "Y")], e.out(op, "Out"))
