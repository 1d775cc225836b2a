"""`paddle.nn.functional`: activations, losses, dropout and embedding over static-graph variables."""

from __future__ import annotations

from ...dygraph.dispatch import bind
from ...layers import math as _math
from ...layers import nn as _nn


def dropout(x, p=0.5, axis=None, training=True, mode="upscale_in_train", name=None):
    if axis is not None:
        raise ValueError("dropout: axis is not supported; expected None")
    return _nn.dropout(x, p, is_test=not training, name=name, dropout_implementation=mode)


def embedding(x, weight, padding_idx=None, sparse=False, name=None):
    """Rows of `weight` picked by the ids in `x` (lookup_table_v2)."""
    pad = -1 if padding_idx is None else (padding_idx if padding_idx >= 0 else weight.shape[0] + padding_idx)
    return bind(
        "lookup_table_v2",
        {"W": [weight], "Ids": [x]},
        {"is_sparse": sparse, "padding_idx": pad},
        dtype=weight.dtype,
        name=name,
    )


__all__ = [
    "dropout",
    "embedding",
]


def linear(x, weight, bias=None, name=None):
    """x @ weight + bias (weight is [in_features, out_features]), as Paddle's."""
    out = _math.matmul(x, weight)
    if bias is None:
        return out
    return bind("elementwise_add", {"X": [out], "Y": [bias]}, {"axis": -1})


def batch_norm(
    x,
    running_mean,
    running_var,
    weight,
    bias,
    training=False,
    momentum=0.9,
    epsilon=1e-05,
    data_format="NCHW",
    use_global_stats=None,
    name=None,
):
    """Batch statistics while training (updating the running ones in place), the running ones in eval."""
    from ...layers.helper import LayerHelper

    helper = LayerHelper("batch_norm", name, inputs=x)
    out = helper.create_variable_for_type_inference(x.dtype)
    saved_mean = helper.create_variable_for_type_inference(x.dtype, stop_gradient=True)
    saved_var = helper.create_variable_for_type_inference(x.dtype, stop_gradient=True)
    helper.append_op(
        "batch_norm",
        {"X": [x], "Scale": [weight], "Bias": [bias], "Mean": [running_mean], "Variance": [running_var]},
        {
            "Y": [out],
            "MeanOut": [running_mean],
            "VarianceOut": [running_var],
            "SavedMean": [saved_mean],
            "SavedVariance": [saved_var],
        },
        {
            "momentum": float(momentum),
            "epsilon": float(epsilon),
            "is_test": not training,
            "data_layout": "NCHW" if data_format in ("NCHW", "NCL", "NC") else "NHWC",
            "use_global_stats": bool(use_global_stats) if use_global_stats is not None else False,
        },
    )
    return out


def flatten(x, start_axis=1, stop_axis=-1, name=None):
    from ...tensor_api import flatten as _flatten

    return _flatten(x, start_axis, stop_axis, name)


__all__ += ["batch_norm", "flatten", "linear"]

# Paddle's submodules, each listing its own names
from . import activation, common, conv, extension, input, loss, norm, pooling, vision  # noqa: E402
from .activation import *  # noqa: E402,F401,F403
from .common import *  # noqa: E402,F401,F403
from .conv import *  # noqa: E402,F401,F403
from .extension import *  # noqa: E402,F401,F403
from .input import *  # noqa: E402,F401,F403
from .loss import *  # noqa: E402,F401,F403
from .norm import *  # noqa: E402,F401,F403
from .pooling import *  # noqa: E402,F401,F403
from .vision import *  # noqa: E402,F401,F403

__all__ += [
    name
    for family in (activation, common, conv, extension, input, loss, norm, pooling, vision)
    for name in family.__all__
]
