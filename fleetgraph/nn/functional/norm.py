"""`paddle.nn.functional.norm` (Paddle 2.0's python/paddle/nn/functional/norm.py): normalize,
layer_norm, instance_norm and local_response_norm, computed as Paddle 2.0 computes them."""

from __future__ import annotations

from ...dygraph.dispatch import bind
from ...ir.errors import FleetgraphError
from ...layers.helper import LayerHelper

__all__ = ["batch_norm", "instance_norm", "layer_norm", "local_response_norm", "normalize"]

_FLOAT32_MAX = 3.4028234663852886e38


def normalize(x, p=2, axis=1, epsilon=1e-12, name=None):
    """x / max(||x||_p along axis, epsilon), as Paddle 2.0's (a 1-D x is normalized whole)."""
    if len(x.shape) == 1:
        axis = 0
    norm = bind("pow", {"X": [bind("abs", {"X": [x]})]}, {"factor": float(p)})
    norm = bind("reduce_sum", {"X": [norm]}, {"dim": [int(axis)], "keep_dim": True, "reduce_all": False})
    norm = bind("pow", {"X": [norm]}, {"factor": 1.0 / float(p)})
    norm = bind("clip", {"X": [norm]}, {"min": float(epsilon), "max": _FLOAT32_MAX})
    return bind("elementwise_div", {"X": [x], "Y": [norm]}, {"axis": -1}, name=name)


def layer_norm(x, normalized_shape, weight=None, bias=None, epsilon=1e-05, name=None):
    """Normalize over the trailing dims `normalized_shape`, then weight and bias (flat, of their product's size)."""
    shape = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    if not shape or list(x.shape[len(x.shape) - len(shape) :]) != shape:
        raise ValueError(
            f"layer_norm: normalized_shape {shape} expected to be the trailing dims of x, got shape {list(x.shape)}"
        )
    inputs = {"X": [x]}
    if weight is not None:
        inputs["Scale"] = [weight]
    if bias is not None:
        inputs["Bias"] = [bias]
    attrs = {"epsilon": float(epsilon), "begin_norm_axis": len(x.shape) - len(shape)}
    return bind("layer_norm", inputs, attrs, out_slot="Y", extra_outputs=("Mean", "Variance"), name=name)


def instance_norm(
    x, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True, momentum=0.9,
    eps=1e-05, data_format="NCHW", name=None,
):  # fmt: skip
    """Normalize each channel of each sample over its spatial dims, then weight and bias per channel.
    Paddle 2.0's op never reads running statistics (nor momentum): rather than accept them and do
    nothing, they are refused here, as are channel-last layouts, which its kernel does not honour."""
    for arg, value, default in (
        ("running_mean", running_mean, None),
        ("running_var", running_var, None),
        ("use_input_stats", use_input_stats, True),
        ("momentum", momentum, 0.9),
    ):
        if (value is not None) if default is None else (value != default):
            raise NotImplementedError(f"instance_norm: {arg}={value!r}; only the input's own statistics are used")
    if data_format not in ("NC", "NCL", "NCHW", "NCDHW"):
        raise NotImplementedError(f"instance_norm: data_format {data_format!r}; expected a channel-first layout")
    inputs = {"X": [x]}
    if weight is not None:
        inputs["Scale"] = [weight]
    if bias is not None:
        inputs["Bias"] = [bias]
    return bind(
        "instance_norm",
        inputs,
        {"epsilon": float(eps)},
        out_slot="Y",
        extra_outputs=("SavedMean", "SavedVariance"),
        name=name,
    )


def local_response_norm(x, size, alpha=1e-4, beta=0.75, k=1.0, data_format="NCHW", name=None):
    """x / (k + alpha * mean of x^2 over `size` channels)^beta, the window c - size // 2 to
    c + (size - 1) // 2 (zeros beyond the ends), as Paddle 2.0 composes it: x^2 viewed as
    [N, 1, C, rest] (or [N, 1, rest, C]), zero-padded along C, averaged by a stride-1 pool2d."""
    if len(x.shape) < 3:
        raise ValueError(f"local_response_norm: x expected rank 3 or more, got shape {list(x.shape)}")
    if data_format not in ("NCL", "NLC", "NCHW", "NHWC", "NCDHW", "NDHWC"):
        raise ValueError(
            f"local_response_norm: data_format {data_format!r}; expected NCL, NLC, NCHW, NHWC, NCDHW or NDHWC"
        )
    last = data_format[-1] == "C"
    sizes = list(x.shape)
    c = sizes[-1] if last else sizes[1]
    rest = 1
    for d in sizes[1:-1] if last else sizes[2:]:
        rest *= d
    if c < 0 or rest < 0:
        raise FleetgraphError(f"local_response_norm: x expected known channel and spatial sizes, got {sizes}")
    view = [-1, 1, rest, c] if last else [-1, 1, c, rest]
    square = bind("elementwise_mul", {"X": [x], "Y": [x]}, {"axis": -1})
    square = bind("reshape2", {"X": [square]}, {"shape": view}, extra_outputs=("XShape",))
    pads = [0, 0, 0, 0, 0, 0, 0, 0]
    pads[6 if last else 4], pads[7 if last else 5] = size // 2, (size - 1) // 2
    square = bind("pad", {"X": [square]}, {"paddings": pads, "pad_value": 0.0})
    pool = {
        "pooling_type": "avg",
        "ksize": [1, size] if last else [size, 1],
        "strides": [1, 1],
        "paddings": [0, 0],
        "exclusive": True,
    }
    div = bind("pool2d", {"X": [square]}, pool)
    div = bind("reshape2", {"X": [div]}, {"shape": [-1, *sizes[1:]]}, extra_outputs=("XShape",))
    div = bind("scale", {"X": [div]}, {"scale": float(alpha), "bias": float(k), "bias_after_scale": True})
    div = bind("pow", {"X": [div]}, {"factor": float(beta)})
    return bind("elementwise_div", {"X": [x], "Y": [div]}, {"axis": -1}, name=name)


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
    args = (running_mean, running_var, weight, bias, training, momentum, epsilon, data_format, use_global_stats)
    return append_batch_norm("batch_norm", x, *args, name=name)


_CHANNELS_FIRST, _CHANNELS_LAST = ("NC", "NCL", "NCHW", "NCDHW"), ("NLC", "NHWC", "NDHWC")


def append_batch_norm(
    op_type, x, running_mean, running_var, weight, bias, training, momentum, epsilon, data_format, use_global_stats,
    name=None,
):  # fmt: skip
    """batch_norm's op, or sync_batch_norm's (SyncBatchNorm): the same slots and attrs."""
    if data_format not in _CHANNELS_FIRST + _CHANNELS_LAST:
        raise ValueError(
            f"{op_type}: data_format {data_format!r}; expected one of {', '.join(_CHANNELS_FIRST + _CHANNELS_LAST)}"
        )
    helper = LayerHelper(op_type, name, inputs=x)
    out = helper.create_variable_for_type_inference(x.dtype)
    saved_mean = helper.create_variable_for_type_inference(x.dtype, stop_gradient=True)
    saved_var = helper.create_variable_for_type_inference(x.dtype, stop_gradient=True)
    helper.append_op(
        op_type,
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
            "data_layout": "NCHW" if data_format in _CHANNELS_FIRST else "NHWC",
            "use_global_stats": bool(use_global_stats) if use_global_stats is not None else False,
        },
    )
    return out
