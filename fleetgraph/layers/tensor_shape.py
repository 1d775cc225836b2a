"""Shape and index layer functions, Paddle 1.8's fluid.layers spelling: unsqueeze, squeeze, expand,
stack, shape, range, zeros_like / ones_like, gather_nd, elementwise_floordiv / elementwise_mod."""

from __future__ import annotations

from ..dygraph.dispatch import bind
from ..dygraph.tensor import Tensor
from ..ir.dtypes import convert_dtype
from ..ir.program import Variable
from .math import _binary
from .tensor import fill_constant


def unsqueeze(input, axes, name=None):
    """input with size-1 axes inserted at `axes` (in the order given)."""
    axes = [axes] if isinstance(axes, int) else [int(a) for a in axes]
    return bind("unsqueeze2", {"X": [input]}, {"axes": axes}, name=name, extra_outputs=("XShape",))


def squeeze(input, axes, name=None):
    """input without its size-1 axes among `axes` (every size-1 axis when empty)."""
    axes = [axes] if isinstance(axes, int) else [int(a) for a in axes]
    return bind("squeeze2", {"X": [input]}, {"axes": axes}, name=name, extra_outputs=("XShape",))


def expand(x, expand_times, name=None):
    """x tiled expand_times[i] times along each axis i."""
    if any(isinstance(t, (Variable, Tensor)) for t in expand_times):
        raise TypeError("expand: expand_times must be ints here; a tensor of times is not supported")
    return bind("expand", {"X": [x]}, {"expand_times": [int(t) for t in expand_times]}, name=name)


def stack(x, axis=0, name=None):
    """The variables of the list x stacked along a new axis `axis`."""
    xs = list(x) if isinstance(x, (list, tuple)) else [x]
    return bind("stack", {"X": xs}, {"axis": int(axis)}, out_slot="Y", name=name)


def shape(input):
    """input's shape as an int32 tensor (its run-time shape)."""
    return bind("shape", {"Input": [input]}, dtype="int32")


def _as_tensor(value, dtype):
    if isinstance(value, (Variable, Tensor)):
        return value
    return fill_constant([1], dtype, value)


def range(start, end, step, dtype, name=None):  # noqa: A001 (Paddle's name)
    """[start, end) by step, of `dtype`; each bound a number or a one-element tensor."""
    dtype = convert_dtype(dtype)
    bounds = [_as_tensor(v, dtype) for v in (start, end, step)]
    return bind("range", {"Start": [bounds[0]], "End": [bounds[1]], "Step": [bounds[2]]}, dtype=dtype, name=name)


def fill_like(x, value, out=None, dtype=None, name=None):
    """`value` in the shape of x, of `dtype` (else x's): the fill_any_like op the *_like functions
    share (`out`: an existing variable to fill)."""
    attrs = {"value": float(value), "dtype": "" if dtype is None else convert_dtype(dtype)}
    if out is None:
        return bind("fill_any_like", {"X": [x]}, attrs, dtype=attrs["dtype"] or None, name=name)
    bind("fill_any_like", {"X": [x]}, attrs, {"Out": [out]})
    return out


def zeros_like(x, out=None, dtype=None, name=None):
    """Zeros shaped as x (`out`: an existing variable to fill)."""
    return fill_like(x, 0.0, out, dtype, name)


def ones_like(x, out=None, dtype=None, name=None):
    """Ones shaped as x (`out`: an existing variable to fill)."""
    return fill_like(x, 1.0, out, dtype, name)


def gather_nd(input, index, name=None):
    """input at each index tuple of `index`'s last axis."""
    return bind("gather_nd", {"X": [input], "Index": [index]}, name=name)


elementwise_floordiv = _binary("elementwise_floordiv")
elementwise_mod = _binary("elementwise_mod")
