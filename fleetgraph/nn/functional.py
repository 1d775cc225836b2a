"""`paddle.nn.functional`: activations, losses, dropout and embedding over static-graph variables."""

from __future__ import annotations

from ..layers import loss as _loss
from ..layers import math as _math
from ..layers import nn as _nn
from ..layers._apply import apply_op

relu, sigmoid, tanh = _math.relu, _math.sigmoid, _math.tanh
square_error_cost = _loss.square_error_cost
cross_entropy = _loss.functional_cross_entropy
softmax_with_cross_entropy = _loss.softmax_with_cross_entropy
mse_loss = _loss.mse_loss
log_loss = _loss.log_loss
binary_cross_entropy = _loss.binary_cross_entropy
adaptive_avg_pool2d = _nn.adaptive_avg_pool2d


def softmax(x, axis=-1, dtype=None, name=None):
    return _math.softmax(x, axis, name=name)


def dropout(x, p=0.5, axis=None, training=True, mode="upscale_in_train", name=None):
    if axis is not None:
        raise ValueError("dropout: axis is not supported; expected None")
    return _nn.dropout(x, p, is_test=not training, name=name, dropout_implementation=mode)


def embedding(x, weight, padding_idx=None, sparse=False, name=None):
    """Rows of `weight` picked by the ids in `x` (lookup_table_v2)."""
    pad = -1 if padding_idx is None else (padding_idx if padding_idx >= 0 else weight.shape[0] + padding_idx)
    return apply_op(
        "lookup_table_v2",
        {"W": [weight], "Ids": [x]},
        {"is_sparse": sparse, "padding_idx": pad},
        dtype=weight.dtype,
        name=name,
    )


def _pool(x, kernel_size, stride, padding, pool_type, ceil_mode, name):
    stride = kernel_size if stride is None else stride
    return _nn.pool2d(x, kernel_size, pool_type, stride, padding, ceil_mode=ceil_mode, name=name)


def max_pool2d(
    x, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False, data_format="NCHW", name=None
):
    return _pool(x, kernel_size, stride, padding, "max", ceil_mode, name)


def avg_pool2d(
    x,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode=False,
    exclusive=True,
    divisor_override=None,
    data_format="NCHW",
    name=None,
):
    return _pool(x, kernel_size, stride, padding, "avg", ceil_mode, name)


__all__ = [
    "adaptive_avg_pool2d",
    "avg_pool2d",
    "binary_cross_entropy",
    "cross_entropy",
    "dropout",
    "embedding",
    "log_loss",
    "max_pool2d",
    "mse_loss",
    "relu",
    "sigmoid",
    "softmax",
    "softmax_with_cross_entropy",
    "square_error_cost",
    "tanh",
]
