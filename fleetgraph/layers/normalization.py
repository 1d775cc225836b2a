"""Layer functions over the ops of ops/normalization.py, with Paddle 1.8's signatures, parameters
(created as `layers/nn.py` batch_norm creates its own) and defaults."""

from __future__ import annotations

from ..initializer import Constant, NormalInitializer
from ..ir import unique_name
from ..ir.dtypes import convert_dtype
from ..ir.errors import FleetgraphError
from ..ir.program import Variable
from ..param_attr import ParamAttr
from .helper import LayerHelper
from .recurrent import _check_float

__all__ = [
    "affine_channel",
    "data_norm",
    "group_norm",
    "inplace_abn",
    "instance_norm",
    "l2_normalize",
    "layer_norm",
    "lrn",
    "spectral_norm",
]


def _outputs(helper: LayerHelper, dtype, *stats: str) -> tuple:
    """The layer's output, then one stop-gradient variable per saved statistic."""
    out = helper.create_variable_for_type_inference(dtype)
    return (out, *(helper.create_variable_for_type_inference(dtype, stop_gradient=True) for _ in stats))


def _no_false(layer: str, arg: str, value) -> None:
    if value is False:
        raise FleetgraphError(
            f"{layer}: {arg} is False; expected a ParamAttr, a name or None (the parameter is needed)"
        )


def layer_norm(
    input,
    scale=True,
    shift=True,
    begin_norm_axis=1,
    epsilon=1e-05,
    param_attr=None,
    bias_attr=None,
    act=None,
    name=None,
):
    """Normalize over the dims from begin_norm_axis on, then a learned Scale (ones) and Bias (zeros)
    of their product's size, where `scale` / `shift`."""
    _check_float("layer_norm", "input", input)
    if not 0 < begin_norm_axis < len(input.shape):
        raise FleetgraphError(
            f"layer_norm: begin_norm_axis expected 1 to {len(input.shape) - 1} for input of shape "
            f"{list(input.shape)}, got {begin_norm_axis}"
        )
    helper = LayerHelper("layer_norm", name, inputs=input)
    size = 1
    for d in input.shape[begin_norm_axis:]:
        size *= d
    inputs = {"X": [input]}
    if scale:
        _no_false("layer_norm", "param_attr", param_attr)
        inputs["Scale"] = [helper.create_parameter(param_attr, [size], input.dtype, default_initializer=Constant(1.0))]
    if shift:
        _no_false("layer_norm", "bias_attr", bias_attr)
        inputs["Bias"] = [helper.create_parameter(bias_attr, [size], input.dtype, is_bias=True)]
    out, mean, var = _outputs(helper, input.dtype, "Mean", "Variance")
    helper.append_op(
        "layer_norm",
        inputs,
        {"Y": [out], "Mean": [mean], "Variance": [var]},
        {"epsilon": float(epsilon), "begin_norm_axis": int(begin_norm_axis)},
    )
    return helper.append_activation(out, act)


def group_norm(input, groups, epsilon=1e-05, param_attr=None, bias_attr=None, act=None, data_layout="NCHW", name=None):
    """Normalize each group of channels of each sample. As Paddle 1.8's, Scale and Bias exist only
    where param_attr / bias_attr are given (a ParamAttr or a name): by default the result is unscaled."""
    _check_float("group_norm", "input", input)
    if data_layout not in ("NCHW", "NHWC"):
        raise ValueError(f"group_norm: data_layout expected 'NCHW' or 'NHWC', got {data_layout!r}")
    helper = LayerHelper("group_norm", name, inputs=input)
    channels = input.shape[1] if data_layout == "NCHW" else input.shape[-1]
    inputs = {"X": [input]}
    if param_attr:
        inputs["Scale"] = [
            helper.create_parameter(param_attr, [channels], input.dtype, default_initializer=Constant(1.0))
        ]
    if bias_attr:
        inputs["Bias"] = [helper.create_parameter(bias_attr, [channels], input.dtype, is_bias=True)]
    out, mean, var = _outputs(helper, input.dtype, "Mean", "Variance")
    helper.append_op(
        "group_norm",
        inputs,
        {"Y": [out], "Mean": [mean], "Variance": [var]},
        {"epsilon": float(epsilon), "groups": int(groups), "data_layout": data_layout},
    )
    return helper.append_activation(out, act)


def instance_norm(input, epsilon=1e-05, param_attr=None, bias_attr=None, name=None):
    """Normalize each channel of each sample over its spatial dims, then a learned per-channel Scale
    (ones) and Bias (zeros)."""
    _check_float("instance_norm", "input", input)
    _no_false("instance_norm", "bias_attr", bias_attr)
    helper = LayerHelper("instance_norm", name, inputs=input)
    c = input.shape[1]
    scale = helper.create_parameter(param_attr, [c], input.dtype, default_initializer=Constant(1.0))
    bias = helper.create_parameter(bias_attr, [c], input.dtype, is_bias=True, default_initializer=Constant(0.0))
    out, mean, inv_std = _outputs(helper, input.dtype, "SavedMean", "SavedVariance")
    helper.append_op(
        "instance_norm",
        {"X": [input], "Scale": [scale], "Bias": [bias]},
        {"Y": [out], "SavedMean": [mean], "SavedVariance": [inv_std]},
        {"epsilon": float(epsilon)},
    )
    return out


def l2_normalize(x, axis, epsilon=1e-12, name=None):
    """x / sqrt(sum(x^2, axis) + epsilon), the norm op (axis 0 for a 1-D x, as Paddle's)."""
    _check_float("l2_normalize", "x", x)
    if len(x.shape) == 1:
        axis = 0
    helper = LayerHelper("l2_normalize", name, inputs=x)
    out, norm = _outputs(helper, x.dtype, "Norm")
    attrs = {"axis": 1 if axis is None else int(axis), "epsilon": float(epsilon)}
    helper.append_op("norm", {"X": [x]}, {"Out": [out], "Norm": [norm]}, attrs)
    return out


def lrn(input, n=5, k=1.0, alpha=1e-4, beta=0.75, name=None, data_format="NCHW"):
    """Local response normalization across channels: input / (k + alpha * sum of squares over the
    n channels around each)^beta, on a 4-D float32 input."""
    if not isinstance(input, Variable) or convert_dtype(input.dtype) != "float32":
        raise TypeError(f"lrn: input expected a float32 variable, got {getattr(input, 'dtype', type(input).__name__)}")
    if len(input.shape) != 4:
        raise ValueError(f"lrn: input expected rank 4, got shape {list(input.shape)}")
    if data_format not in ("NCHW", "NHWC"):
        raise ValueError(f"lrn: data_format expected 'NCHW' or 'NHWC', got {data_format!r}")
    helper = LayerHelper("lrn", name, inputs=input)
    out, mid = _outputs(helper, input.dtype, "MidOut")
    attrs = {"n": int(n), "k": float(k), "alpha": float(alpha), "beta": float(beta), "data_format": data_format}
    helper.append_op("lrn", {"X": [input]}, {"Out": [out], "MidOut": [mid]}, attrs)
    return out


def affine_channel(x, scale=None, bias=None, data_layout="NCHW", name=None, act=None):
    """x * scale + bias per channel (axis 1 for NCHW, the last for NHWC); scale and bias are the
    caller's variables, of the channels' size."""
    _check_float("affine_channel", "x", x)
    for arg, value in (("scale", scale), ("bias", bias)):
        if not isinstance(value, Variable):
            raise TypeError(
                f"affine_channel: {arg} expected a variable of the channels' size, got {type(value).__name__}"
            )
    helper = LayerHelper("affine_channel", name, inputs=[x, scale, bias])
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op(
        "affine_channel", {"X": [x], "Scale": [scale], "Bias": [bias]}, {"Out": [out]}, {"data_layout": data_layout}
    )
    return helper.append_activation(out, act)


def spectral_norm(weight, dim=0, power_iters=1, eps=1e-12, name=None):
    """weight divided by its largest singular value (weight as a [shape[dim], rest] matrix),
    estimated by power_iters power iterations from the vectors U and V: parameters drawn from
    N(0, 1) that no gradient reaches and the op does not update, as Paddle 1.8's."""
    _check_float("spectral_norm", "weight", weight)
    for arg, value, kind in (("dim", dim, int), ("power_iters", power_iters, int), ("eps", eps, float)):
        if not isinstance(value, kind):
            raise TypeError(f"spectral_norm: {arg} expected {kind.__name__}, got {type(value).__name__}")
    helper = LayerHelper("spectral_norm", name, inputs=weight)
    h = weight.shape[dim]
    w = 1
    for d in weight.shape:
        w *= d
    vectors = []
    for size in (h, w // h):
        vector = helper.create_parameter(
            ParamAttr(), [size], weight.dtype, default_initializer=NormalInitializer(0.0, 1.0)
        )
        vector.stop_gradient = True
        vectors.append(vector)
    out = helper.create_variable_for_type_inference(weight.dtype)
    helper.append_op(
        "spectral_norm",
        {"Weight": [weight], "U": [vectors[0]], "V": [vectors[1]]},
        {"Out": [out]},
        {"dim": dim, "power_iters": power_iters, "eps": eps},
    )
    return out


def _running_stat(helper: LayerHelper, name, value: float, shape, dtype, model_average: bool):
    attr = ParamAttr(
        name=name or unique_name.generate(f"{helper.name}.w"),
        initializer=Constant(value),
        trainable=False,
        do_model_average=model_average,
    )
    stat = helper.create_parameter(attr, shape, dtype)
    stat.stop_gradient = True
    return stat


def inplace_abn(
    input,
    act=None,
    is_test=False,
    momentum=0.9,
    epsilon=1e-05,
    param_attr=None,
    bias_attr=None,
    data_layout="NCHW",
    name=None,
    moving_mean_name=None,
    moving_variance_name=None,
    do_model_average_for_mean_and_var=True,
    use_global_stats=False,
    act_alpha=1.0,
):
    """batch_norm with identity, leaky_relu or elu fused in (the inplace_abn op), whose gradient
    reads the output rather than the input, as Paddle 1.8's. Paddle writes the result over `input`'s
    memory and returns `input`; here the result is a new variable of the same values."""
    if act not in (None, "identity", "leaky_relu", "elu"):
        raise ValueError(f"inplace_abn: act expected None, 'identity', 'leaky_relu' or 'elu', got {act!r}")
    _no_false("inplace_abn", "bias_attr", bias_attr)
    _check_float("inplace_abn", "input", input)
    if isinstance(momentum, Variable):
        raise NotImplementedError("inplace_abn: momentum as a Variable (MomemtumTensor) is not supported")
    if data_layout not in ("NCHW", "NHWC"):
        raise ValueError(f"inplace_abn: data_layout expected 'NCHW' or 'NHWC', got {data_layout!r}")
    helper = LayerHelper("inplace_abn", name, inputs=input)
    c = [input.shape[1] if data_layout == "NCHW" else input.shape[-1]]
    scale = helper.create_parameter(param_attr, c, input.dtype, default_initializer=Constant(1.0))
    bias = helper.create_parameter(bias_attr, c, input.dtype, is_bias=True)
    mean = _running_stat(helper, moving_mean_name, 0.0, c, input.dtype, do_model_average_for_mean_and_var)
    var = _running_stat(helper, moving_variance_name, 1.0, c, input.dtype, do_model_average_for_mean_and_var)
    out, saved_mean, saved_var = _outputs(helper, input.dtype, "SavedMean", "SavedVariance")
    helper.append_op(
        "inplace_abn",
        {"X": [input], "Scale": [scale], "Bias": [bias], "Mean": [mean], "Variance": [var]},
        {"Y": [out], "MeanOut": [mean], "VarianceOut": [var], "SavedMean": [saved_mean], "SavedVariance": [saved_var]},
        {
            "momentum": float(momentum),
            "epsilon": float(epsilon),
            "is_test": bool(is_test),
            "data_layout": data_layout,
            "use_global_stats": bool(use_global_stats),
            "activation": act or "",
            "alpha": float(act_alpha),
        },
    )
    return out


def data_norm(
    input,
    act=None,
    epsilon=1e-05,
    param_attr=None,
    data_layout="NCHW",
    in_place=False,
    name=None,
    moving_mean_name=None,
    moving_variance_name=None,
    do_model_average_for_mean_and_var=True,
    slot_dim=-1,
    sync_stats=False,
    summary_decay_rate=0.9999999,
    enable_scale_and_shift=False,
):
    """(input - BatchSum / BatchSize) * sqrt(BatchSize / BatchSquareSum) per feature of a 2-D input,
    the three summaries parameters named `<name or 'dn'>.batch_size` etc. (so unnamed data_norms
    share them, as Paddle's), started from param_attr's dict values 'batch_size', 'batch_sum',
    'batch_square' (1e4, 0, 1e4); with slot_dim, a slot whose first value is 0 gives zeros; with
    enable_scale_and_shift, a learned scale_w and bias follow. As in Paddle 1.8, moving_mean_name,
    moving_variance_name and do_model_average_for_mean_and_var are accepted and unused, and
    summary_decay_rate only matters to sync_stats (unsupported here)."""
    _check_float("data_norm", "input", input)
    if in_place:
        raise NotImplementedError("data_norm: in_place (the result written over input) is not supported")
    if data_layout not in ("NCHW", "NHWC"):
        raise ValueError(f"data_norm: data_layout expected 'NCHW' or 'NHWC', got {data_layout!r}")
    if sync_stats:
        raise NotImplementedError("data_norm: sync_stats (statistics synchronized across GPUs) is not supported")
    helper = LayerHelper("data_norm", name, inputs=input)
    c = [input.shape[1] if data_layout == "NCHW" else input.shape[-1]]
    given = param_attr if isinstance(param_attr, dict) else {}
    prefix = name or "dn"

    def summary(suffix: str, value: float):
        attr = ParamAttr(name=f"{prefix}.{suffix}", initializer=Constant(float(value)), trainable=True)
        return helper.create_parameter(attr, c, input.dtype)

    inputs = {
        "X": [input],
        "BatchSize": [summary("batch_size", given.get("batch_size", 1e4))],
        "BatchSum": [summary("batch_sum", given.get("batch_sum", 0.0))],
        "BatchSquareSum": [summary("batch_square_sum", given.get("batch_square", 1e4))],
    }
    attrs = {"epsilon": float(epsilon), "sync_stats": False, "summary_decay_rate": float(summary_decay_rate)}
    if slot_dim > 0:
        attrs["slot_dim"] = int(slot_dim)
    if enable_scale_and_shift:
        attrs["enable_scale_and_shift"] = True
        inputs["scale_w"] = [summary("scale_w", given.get("scale_w", 1.0))]
        inputs["bias"] = [summary("bias", given.get("bias", 0.0))]
    out, means, scales = _outputs(helper, input.dtype, "Means", "Scales")
    helper.append_op("data_norm", inputs, {"Y": [out], "Means": [means], "Scales": [scales]}, attrs)
    return helper.append_activation(out, act)
