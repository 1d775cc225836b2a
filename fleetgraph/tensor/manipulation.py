"""`paddle` tensor functions: manipulation (Paddle 2.0's python/paddle/tensor/manipulation.py), in
2.0's signatures over the Fluid layer functions of layers/{tensor_shape,manipulation,indexing}.py.
The gathering, scattering and unique functions are in gather_scatter.py; this module lists them
too, as Paddle's does. (cast, concat, flatten, reshape, split and transpose are tensor_api's.)

The in-place forms (reshape_, squeeze_, unsqueeze_, scatter_) write into x on eager Tensors, as
Paddle 2.0's dygraph ones; on static Variables they build the out-of-place op, as Paddle's do."""

from __future__ import annotations

from .. import tensor_api
from ..dygraph.tensor import Tensor
from ..ir.program import Variable
from ..layers import indexing, tensor_shape
from ..layers import manipulation as fluid_manipulation
from ..layers import tensor as fluid_tensor
from .gather_scatter import (
    gather,
    gather_nd,
    in_place,
    scatter,
    scatter_,
    scatter_nd,
    scatter_nd_add,
    shard_index,
    unique,
)

__all__ = [
    "squeeze",
    "squeeze_",
    "unsqueeze",
    "unsqueeze_",
    "reshape_",
    "stack",
    "unstack",
    "unbind",
    "chunk",
    "flip",
    "reverse",
    "roll",
    "tile",
    "expand",
    "broadcast_to",
    "expand_as",
    "broadcast_shape",
    "slice",
    "strided_slice",
    "crop",
    "gather",
    "gather_nd",
    "scatter",
    "scatter_",
    "scatter_nd",
    "scatter_nd_add",
    "shard_index",
    "unique",
]


def _axes(axis) -> list[int]:
    """An axis argument (None, an int, a list or tuple of ints or one-element Tensors) as a list."""
    if axis is None:
        return []
    if isinstance(axis, Variable):
        if not isinstance(axis, Tensor):
            raise NotImplementedError("axis given as a static Variable is not supported; pass ints")
        return [int(a) for a in axis.numpy().reshape(-1)]
    if isinstance(axis, int):
        return [axis]
    return [int(a) for a in axis]


def squeeze(x, axis=None, name=None):
    """x without its size-1 axes among axis (every size-1 axis when None)."""
    return tensor_shape.squeeze(x, _axes(axis), name)


def squeeze_(x, axis=None, name=None):
    """squeeze, in place on an eager x."""
    return in_place("squeeze_", x, lambda x: squeeze(x, axis, name))


def unsqueeze(x, axis, name=None):
    """x with size-1 axes inserted at axis (an int, a list or a Tensor)."""
    return tensor_shape.unsqueeze(x, _axes(axis), name)


def unsqueeze_(x, axis, name=None):
    """unsqueeze, in place on an eager x."""
    return in_place("unsqueeze_", x, lambda x: unsqueeze(x, axis, name))


def reshape_(x, shape, name=None):
    """paddle.reshape, in place on an eager x."""
    return in_place("reshape_", x, lambda x: fluid_tensor.reshape(x, shape, name=name))


def stack(x, axis=0, name=None):
    """The tensors of the list x stacked along a new axis."""
    return tensor_shape.stack(x, axis, name)


def unstack(x, axis=0, num=None):
    """The slices of x along axis, a list."""
    return fluid_manipulation.unstack(x, axis, num)


def unbind(input, axis=0):
    """The slices of input along axis, a list (unstack)."""
    if not isinstance(axis, int):
        raise TypeError(f"unbind: axis {axis!r}; expected an int")
    return fluid_manipulation.unstack(input, axis)


def chunk(x, chunks, axis=0, name=None):
    """x split into `chunks` equal parts along axis."""
    if isinstance(axis, Variable):
        raise NotImplementedError("chunk: axis given as a tensor is not supported; pass an int")
    return fluid_tensor.split(x, chunks, axis, name=name)


def flip(x, axis, name=None):
    """x reversed along each axis in axis (an int or a list)."""
    return indexing.flip(x, _axes(axis), name)


reverse = flip


def roll(x, shifts, axis=None, name=None):
    """x's entries moved shifts places along axis, wrapping around (along flattened x when None)."""
    rank = len(x.shape)
    for a in _axes(axis):
        if not -rank <= a < rank:
            raise ValueError(f"roll: axis {axis}; expected axes in [{-rank}, {rank})")
    return indexing.roll(x, shifts, None if axis is None else _axes(axis))


def tile(x, repeat_times, name=None):
    """x repeated repeat_times[i] times along axis i."""
    if isinstance(repeat_times, Variable) or any(isinstance(t, Variable) for t in repeat_times):
        raise NotImplementedError("tile: repeat_times given as a tensor is not supported; pass ints")
    return fluid_manipulation.tile(x, repeat_times, name)


def broadcast_shape(x_shape, y_shape):
    """The shape x_shape and y_shape broadcast to (NumPy's rule), a list."""
    rank = max(len(x_shape), len(y_shape))
    xs = [1] * (rank - len(x_shape)) + list(x_shape)
    ys = [1] * (rank - len(y_shape)) + list(y_shape)
    out = []
    for a, b in zip(xs, ys):
        if a != b and 1 not in (a, b):
            raise ValueError(f"broadcast_shape: {list(x_shape)} and {list(y_shape)} do not broadcast (dims {a}, {b})")
        out.append(b if a == 1 else a)
    return out


def _expand_to(where: str, x, shape, name=None):
    """x broadcast to shape (-1 keeps x's dim): x's missing leading axes added, then each size-1
    axis tiled (the expand op)."""
    if isinstance(shape, Variable) or any(isinstance(d, Variable) for d in shape):
        raise NotImplementedError(f"{where}: shape given as a tensor is not supported; pass ints")
    shape = [int(d) for d in shape]
    lead = len(shape) - len(x.shape)
    if lead < 0:
        raise ValueError(f"{where}: shape {shape} has fewer dims than x {list(x.shape)}")
    if lead:
        x = tensor_shape.unsqueeze(x, list(range(lead)))
    times = []
    for i, (have, want) in enumerate(zip(x.shape, shape)):
        if want == -1 or want == have:
            times.append(1)
        elif have == 1 and want > 0:
            times.append(want)
        else:
            raise ValueError(f"{where}: x's dim {i - lead} is {have}; expected 1 or {want} (shape {shape})")
    if all(t == 1 for t in times):
        return fluid_tensor.assign(x) if not lead else x
    return tensor_shape.expand(x, times, name)


def expand(x, shape, name=None):
    """x broadcast to shape (-1 keeps x's dim; the dims expanded must be 1)."""
    return _expand_to("expand", x, shape, name)


def broadcast_to(x, shape, name=None):
    """x broadcast to shape (the same as expand)."""
    return _expand_to("broadcast_to", x, shape, name)


def expand_as(x, y, name=None):
    """x broadcast to y's shape."""
    return _expand_to("expand_as", x, list(y.shape), name)


def slice(input, axes, starts, ends):  # noqa: A001 (Paddle's name)
    """input[starts[i]:ends[i]] along each of axes, every axis kept."""
    return indexing.slice(input, axes, starts, ends)


def strided_slice(x, axes, starts, ends, strides, name=None):
    """x[starts[i]:ends[i]:strides[i]] along each of axes."""
    return indexing.strided_slice(x, axes, starts, ends, strides)


def crop(x, shape=None, offsets=None, name=None):
    """x's window of shape (-1: to the axis' end) at offsets (zeros when None)."""
    return indexing.crop_tensor(x, shape, offsets, name)


# Paddle 2.0's Tensor has every function of this family as a method, tensor_api's among them
TENSOR_METHODS: dict = {
    **{name: globals()[name] for name in __all__ if name != "broadcast_shape"},
    **{
        f.__name__: f
        for f in (
            tensor_api.cast,
            tensor_api.concat,
            tensor_api.flatten,
            tensor_api.reshape,
            tensor_api.split,
            tensor_api.transpose,
        )
    },
}
