"""Math layer functions (elementwise, matmul, reductions, activations) and Variable's operators."""

from __future__ import annotations

from ..dygraph.dispatch import bind, bind_function
from ..ir.program import Variable
from .helper import LayerHelper


def _binary(op_type):
    def layer(x, y, axis=-1, act=None, name=None):
        out = bind(op_type, {"X": [x], "Y": [y]}, {"axis": axis}, name=name)
        return _act(out, act)

    layer.__name__ = op_type
    layer.__doc__ = f"`{op_type}` with Paddle's axis broadcasting of y into x."
    return layer


elementwise_add = _binary("elementwise_add")
elementwise_sub = _binary("elementwise_sub")
elementwise_mul = _binary("elementwise_mul")
elementwise_div = _binary("elementwise_div")
elementwise_pow = _binary("elementwise_pow")
elementwise_min = _binary("elementwise_min")
elementwise_max = _binary("elementwise_max")


def _act(x, act):
    return x if act is None else bind(act, {"X": [x]})


# `f(x, name=None)` each; on a Tensor the op's eager function runs straight away (bind's dicts cost more than relu)
relu, sigmoid, tanh, square, exp, log, sqrt, abs, sign, floor, ceil, cos = (
    bind_function(t)
    for t in ("relu", "sigmoid", "tanh", "square", "exp", "log", "sqrt", "abs", "sign", "floor", "ceil", "cos")
)


def _compare(op_type):
    def layer(x, y, force_cpu=None, cond=None, name=None):
        """`cond`: an existing bool variable to write the result into (a loop's condition), as Paddle's."""
        if cond is None:
            return bind(op_type, {"X": [x], "Y": [y]}, dtype="bool", name=name)
        LayerHelper(op_type, inputs=[x, y]).append_op(op_type, {"X": [x], "Y": [y]}, {"Out": [cond]})
        return cond

    layer.__name__ = op_type
    layer.__doc__ = f"`{op_type}`: a bool variable, elementwise with broadcasting."
    return layer


less_than, less_equal, greater_than, greater_equal, equal, not_equal = (
    _compare(t) for t in ("less_than", "less_equal", "greater_than", "greater_equal", "equal", "not_equal")
)


def _logical(op_type, unary=False):
    def layer(x, y=None, out=None, name=None):
        inputs = {"X": [x]} if unary else {"X": [x], "Y": [y]}
        if out is None:
            return bind(op_type, inputs, dtype="bool", name=name)
        LayerHelper(op_type, inputs=x).append_op(op_type, inputs, {"Out": [out]})
        return out

    layer.__name__ = op_type
    layer.__doc__ = f"`{op_type}`: elementwise on bool variables (`out`: an existing variable to write into)."
    return layer


logical_and, logical_or, logical_xor = (_logical(t) for t in ("logical_and", "logical_or", "logical_xor"))
logical_not = _logical("logical_not", unary=True)


def where(condition, x, y, name=None):
    """x where condition holds, else y (Paddle 2.x's `paddle.where`)."""
    return bind("where", {"Condition": [condition], "X": [x], "Y": [y]}, name=name)


def softmax(input, axis=-1, use_cudnn=False, name=None):
    return bind("softmax", {"X": [input]}, {"axis": axis}, name=name)


def log_softmax(x, axis=-1, name=None):
    return bind("log_softmax", {"X": [x]}, {"axis": axis}, name=name)


def mean(x, name=None):
    """Fluid's `layers.mean`: the mean of all elements, shape [1], one `mean` op as Paddle 1.x and 2.x
    emit it (2.x's `paddle.mean`, which takes an axis, is a reduce_mean)."""
    return bind("mean", {"X": [x]}, name=name)


def _reduce(op_type):
    def layer(input, dim=None, keep_dim=False, name=None):
        dims = [] if dim is None else ([dim] if isinstance(dim, int) else list(dim))
        attrs = {"dim": dims or [0], "keep_dim": keep_dim, "reduce_all": not dims}
        return bind(op_type, {"X": [input]}, attrs, name=name)

    layer.__name__ = op_type
    return layer


reduce_mean = _reduce("reduce_mean")
reduce_sum = _reduce("reduce_sum")
reduce_max = _reduce("reduce_max")
reduce_min = _reduce("reduce_min")
reduce_prod = _reduce("reduce_prod")
reduce_all = _reduce("reduce_all")
reduce_any = _reduce("reduce_any")


def scale(x, scale=1.0, bias=0.0, bias_after_scale=True, act=None, name=None):
    out = bind(
        "scale",
        {"X": [x]},
        {"scale": float(scale), "bias": float(bias), "bias_after_scale": bias_after_scale},
        name=name,
    )
    return _act(out, act)


def sums(input, out=None):
    """The elementwise sum of the list `input`, into `out` when given (an existing variable), as Paddle's."""
    if out is None:
        return bind("sum", {"X": list(input)})
    LayerHelper("sums", inputs=list(input)).append_op("sum", {"X": list(input)}, {"Out": [out]})
    return out


def matmul(x, y, transpose_x=False, transpose_y=False, alpha=1.0, name=None):
    return bind(
        "matmul",
        {"X": [x], "Y": [y]},
        {"transpose_X": transpose_x, "transpose_Y": transpose_y, "alpha": float(alpha)},
        name=name,
    )


def mul(x, y, x_num_col_dims=1, y_num_col_dims=1, name=None):
    return bind(
        "mul", {"X": [x], "Y": [y]}, {"x_num_col_dims": x_num_col_dims, "y_num_col_dims": y_num_col_dims}, name=name
    )


# -- Variable operators: x + y, x * 2.0, -x, ... -------------------------------------------------


def _scalar_op(x, scale_=1.0, bias=0.0):
    return scale(x, scale_, bias)


def _constant_op(op_type, x, c):
    """x (op) c for a number c: the number as a one-element tensor of x's dtype."""
    from .tensor import fill_constant

    return bind(op_type, {"X": [x], "Y": [fill_constant([1], x.dtype, c)]}, {"axis": -1})


def _operator(op_type, reverse=False, scalar=None):
    def method(self, other):
        if isinstance(other, (int, float)):
            return scalar(self, float(other))
        a, b = (other, self) if reverse else (self, other)
        return bind(op_type, {"X": [a], "Y": [b]}, {"axis": -1})

    return method


def monkey_patch_variable() -> None:
    Variable.__add__ = Variable.__radd__ = _operator("elementwise_add", scalar=lambda x, c: _scalar_op(x, 1.0, c))
    Variable.__sub__ = _operator("elementwise_sub", scalar=lambda x, c: _scalar_op(x, 1.0, -c))
    Variable.__rsub__ = _operator("elementwise_sub", reverse=True, scalar=lambda x, c: _scalar_op(x, -1.0, c))
    Variable.__mul__ = Variable.__rmul__ = _operator("elementwise_mul", scalar=lambda x, c: _scalar_op(x, c))
    Variable.__truediv__ = _operator("elementwise_div", scalar=lambda x, c: _scalar_op(x, 1.0 / c))
    Variable.__floordiv__ = _operator(
        "elementwise_floordiv", scalar=lambda x, c: _constant_op("elementwise_floordiv", x, c)
    )
    Variable.__mod__ = _operator("elementwise_mod", scalar=lambda x, c: _constant_op("elementwise_mod", x, c))
    Variable.__neg__ = lambda self: _scalar_op(self, -1.0)
    Variable.__matmul__ = lambda self, other: matmul(self, other)
    Variable.__getitem__ = _getitem
    # comparisons but not == and != : Variables stay hashable and comparable by identity in lists
    Variable.__lt__, Variable.__le__ = _comparison("less_than"), _comparison("less_equal")
    Variable.__gt__, Variable.__ge__ = _comparison("greater_than"), _comparison("greater_equal")


def _comparison(op_type):
    def method(self, other):
        if isinstance(other, (int, float)):
            from .tensor import fill_constant

            other = fill_constant([1], self.dtype, other)
        return bind(op_type, {"X": [self], "Y": [other]}, dtype="bool")

    return method


_BIG = 2**31 - 1  # an open end, as Paddle writes it


def _getitem(self, item):
    """x[1], x[:, 0:2], x[..., -1]: one `slice` op (ints drop their axis: decrease_axis); with a
    step other than 1 (x[::2], x[::-1]) one `strided_slice` op, bounds as Paddle 2.0 writes them."""
    items = item if isinstance(item, tuple) else (item,)
    if sum(i is Ellipsis for i in items) > 1:
        raise IndexError(f"{self.name}[{item!r}]: at most one Ellipsis")
    if Ellipsis in items:
        at = items.index(Ellipsis)
        items = items[:at] + (slice(None),) * (len(self.shape) - len(items) + 1) + items[at + 1 :]
    if len(items) > len(self.shape):
        raise IndexError(f"{self.name}[{item!r}]: {len(items)} indices for a variable of rank {len(self.shape)}")
    axes, starts, ends, strides, decrease = [], [], [], [], []
    for axis, index in enumerate(items):
        if isinstance(index, bool) or not isinstance(index, (int, slice)):
            raise TypeError(f"{self.name}[{item!r}]: expected ints and slices, got {type(index).__name__}")
        if isinstance(index, int):
            axes.append(axis), starts.append(index), ends.append(index + 1 if index != -1 else _BIG)
            strides.append(1), decrease.append(axis)
        elif index != slice(None):
            step = 1 if index.step is None else index.step
            if step == 0:
                raise ValueError(f"{self.name}[{item!r}]: slice step cannot be zero")
            axes.append(axis), strides.append(step)
            starts.append((0 if step > 0 else -1) if index.start is None else index.start)
            ends.append((_BIG if step > 0 else -1) if index.stop is None else index.stop)  # -1 back: past the front
    if not axes:
        return self
    attrs = {"axes": axes, "starts": starts, "ends": ends, "decrease_axis": decrease}
    if any(s != 1 for s in strides):
        return bind("strided_slice", {"Input": [self]}, {**attrs, "strides": strides, "infer_flags": [1] * len(axes)})
    return bind("slice", {"Input": [self]}, attrs)
