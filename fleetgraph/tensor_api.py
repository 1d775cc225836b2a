"""The 2.x tensor functions of the top-level namespace (`paddle.mean`, `paddle.matmul`, ...)."""

from __future__ import annotations

import contextlib

from . import layers
from .dygraph.dispatch import bind_function
from .dygraph.mode import eager_guard, in_dynamic_mode
from .layers.math import abs, exp, log, sign, sqrt, square, tanh  # noqa: F401  (the 2.x names are the same)
from .layers.tensor import fill_constant

# the common calls with their attrs resolved once (the layer functions' dicts cost more than the op)
_ALL = {"dim": [0], "keep_dim": False, "reduce_all": True}
_mean_all, _sum_all = bind_function("reduce_mean", _ALL), bind_function("reduce_sum", _ALL)
_matmul = bind_function("matmul", {"transpose_X": False, "transpose_Y": False, "alpha": 1.0})


def mean(x, axis=None, keepdim=False, name=None):
    if axis is None and not keepdim:
        return _mean_all(x, name=name)
    return layers.reduce_mean(x, dim=axis, keep_dim=keepdim, name=name)


def sum(x, axis=None, dtype=None, keepdim=False, name=None):
    if axis is None and not keepdim and dtype is None:
        return _sum_all(x, name=name)
    out = layers.reduce_sum(x, dim=axis, keep_dim=keepdim, name=name)
    return out if dtype is None else layers.cast(out, dtype)


def add(x, y, name=None):
    return layers.elementwise_add(x, y, name=name)


def subtract(x, y, name=None):
    return layers.elementwise_sub(x, y, name=name)


def multiply(x, y, name=None):
    return layers.elementwise_mul(x, y, name=name)


def divide(x, y, name=None):
    return layers.elementwise_div(x, y, name=name)


def add_n(inputs, name=None):
    return layers.sums(inputs if isinstance(inputs, (list, tuple)) else [inputs])


def matmul(x, y, transpose_x=False, transpose_y=False, name=None):
    if not (transpose_x or transpose_y):
        return _matmul(x, y, name=name)
    return layers.matmul(x, y, transpose_x, transpose_y, name=name)


def reshape(x, shape, name=None):
    return layers.reshape(x, shape, name=name)


def transpose(x, perm, name=None):
    return layers.transpose(x, perm, name=name)


def concat(x, axis=0, name=None):
    return layers.concat(x, axis, name=name)


def split(x, num_or_sections, axis=0, name=None):
    return layers.split(x, num_or_sections, axis, name=name)


def flatten(x, start_axis=0, stop_axis=-1, name=None):
    rank = len(x.shape)
    stop = stop_axis + rank if stop_axis < 0 else stop_axis
    # reshape2's 0 copies the dim at the same index; dims after the merged range are listed
    shape = [0] * start_axis + [-1] + list(x.shape[stop + 1 :])
    return layers.reshape(x, shape, name=name)


def cast(x, dtype):
    return layers.cast(x, dtype)


def scale(x, scale=1.0, bias=0.0, bias_after_scale=True, act=None, name=None):
    return layers.scale(x, scale, bias, bias_after_scale, act, name)


def _created():
    """Paddle 2.x creation functions have no input to go by: eager unless enable_static() was called."""
    return eager_guard() if in_dynamic_mode() else contextlib.nullcontext()


def full(shape, fill_value, dtype="float32", name=None):
    with _created():
        return fill_constant(shape, dtype, fill_value, name=name)


def zeros(shape, dtype="float32", name=None):
    return full(shape, 0.0, dtype, name)


def ones(shape, dtype="float32", name=None):
    return full(shape, 1.0, dtype, name)


def topk(x, k, axis=None, largest=True, sorted=True, name=None):
    return layers.nn.topk_v2(x, k, axis, largest, sorted, name=name)
