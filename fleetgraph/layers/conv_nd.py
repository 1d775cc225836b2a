"""Layer functions over the ops of ops/conv_nd.py, in Paddle 1.8's fluid.layers spelling:
conv3d, conv2d_transpose, conv3d_transpose, pool3d, adaptive_pool2d and adaptive_pool3d; and the
argument handling (sizes, Paddle's padding forms, layouts) conv2d and pool2d share with them."""

from __future__ import annotations

import math
import numbers

from ..initializer import Normal
from ..ir.errors import FleetgraphError
from .helper import LayerHelper
from .math import scale

__all__ = ["conv3d", "conv2d_transpose", "conv3d_transpose", "pool3d", "adaptive_pool2d", "adaptive_pool3d"]

_LAYOUTS = {2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}


def check_use_cudnn(layer: str, use_cudnn) -> None:
    if not isinstance(use_cudnn, bool):
        raise FleetgraphError(f"{layer}: use_cudnn expected True or False, got {use_cudnn!r}")


def _is_int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def ints(layer: str, what: str, value, nd: int) -> list[int]:
    """Paddle's utils.convert_to_list: an int repeated nd times, or exactly nd ints."""
    if _is_int(value):
        return [int(value)] * nd
    if not isinstance(value, (list, tuple)) or len(value) != nd or not all(_is_int(v) for v in value):
        raise FleetgraphError(f"{layer}: {what} expected an int or {nd} ints, got {value!r}")
    return [int(v) for v in value]


def check_layout(layer: str, data_format: str, nd: int) -> bool:
    """Whether `data_format` puts channels last; anything but Paddle's two layouts is refused."""
    if data_format not in _LAYOUTS[nd]:
        raise FleetgraphError(f"{layer}: data_format expected {' or '.join(_LAYOUTS[nd])}, got {data_format!r}")
    return data_format == _LAYOUTS[nd][1]


def channels(layer: str, input, data_format: str, nd: int) -> int:
    c = input.shape[-1] if check_layout(layer, data_format, nd) else input.shape[1]
    if len(input.shape) != nd + 2 or c < 0:
        raise FleetgraphError(
            f"{layer}: input '{input.name}' expected rank {nd + 2} with known channels ({data_format}), "
            f"got shape {list(input.shape)}"
        )
    return c


def padding_attrs(layer: str, padding, nd: int, data_format: str) -> tuple[str, list[int]]:
    """(padding_algorithm, paddings) of Paddle's padding forms: 'SAME' or 'VALID'; an int; nd ints;
    2 * nd ints [before, after, ...]; or nd + 2 [before, after] pairs whose batch and channel pairs are
    zero. Symmetric pads shrink to nd values, as Paddle's _update_padding."""
    if isinstance(padding, str):
        if padding.upper() not in ("SAME", "VALID"):
            raise FleetgraphError(f"{layer}: padding expected 'SAME' or 'VALID', got {padding!r}")
        return padding.upper(), [0] * nd
    if isinstance(padding, (list, tuple)) and len(padding) == nd + 2 and isinstance(padding[0], (list, tuple)):
        last = data_format == _LAYOUTS[nd][1]
        outer = (padding[0], padding[-1]) if last else (padding[0], padding[1])
        if any(list(p) != [0, 0] for p in outer):
            raise FleetgraphError(
                f"{layer}: padding {padding!r} pads the batch or channel dimension; expected [0, 0] there"
            )
        padding = [int(v) for pair in (padding[1:-1] if last else padding[2:]) for v in pair]
    if isinstance(padding, (list, tuple)) and len(padding) == 2 * nd:
        pads = [int(v) for v in padding]
        symmetric = all(pads[2 * i] == pads[2 * i + 1] for i in range(nd))
        return "EXPLICIT", pads[::2] if symmetric else pads
    return "EXPLICIT", ints(layer, "padding", padding, nd)


def conv_nd(
    layer,
    nd,
    input,
    num_filters,
    filter_size,
    stride,
    padding,
    dilation,
    groups,
    param_attr,
    bias_attr,
    use_cudnn,
    act,
    name,
    data_format,
):
    """conv2d / conv3d: the filter [num_filters, C / groups, *filter_size] initialized N(0, sqrt(2 / (k * C)))
    as Paddle's, then the bias over the channel axis and the activation. Paddle's conv2d picks its
    depthwise kernel (op depthwise_conv2d, the same result) for groups == C dividing num_filters
    without cuDNN."""
    check_use_cudnn(layer, use_cudnn)
    c = channels(layer, input, data_format, nd)
    op_type = layer
    if nd == 2 and c == groups and num_filters % c == 0 and not use_cudnn:
        op_type = "depthwise_conv2d"
    groups = groups or 1
    if c % groups:
        raise FleetgraphError(f"{layer}: input '{input.name}' has {c} channels; expected a multiple of groups={groups}")
    k = ints(layer, "filter_size", filter_size, nd)
    algorithm, paddings = padding_attrs(layer, padding, nd, data_format)
    helper = LayerHelper(op_type, name, inputs=input)
    std = math.sqrt(2.0 / (math.prod(k) * c))
    w = helper.create_parameter(
        param_attr, [num_filters, c // groups, *k], input.dtype, default_initializer=Normal(0.0, std)
    )
    pre_bias = helper.create_variable_for_type_inference(input.dtype)
    attrs = {
        "strides": ints(layer, "stride", stride, nd),
        "paddings": paddings,
        "dilations": ints(layer, "dilation", dilation, nd),
        "groups": groups,
        "padding_algorithm": algorithm,
        "data_format": data_format,
    }
    helper.append_op(op_type, {"Input": [input], "Filter": [w]}, {"Output": [pre_bias]}, attrs)
    axis = nd + 1 if check_layout(layer, data_format, nd) else 1
    pre_act = helper.append_bias_op(pre_bias, bias_attr, dim_start=axis, dim_end=axis + 1)
    return helper.append_activation(pre_act, act)


def conv3d(
    input,
    num_filters,
    filter_size,
    stride=1,
    padding=0,
    dilation=1,
    groups=None,
    param_attr=None,
    bias_attr=None,
    use_cudnn=True,
    act=None,
    name=None,
    data_format="NCDHW",
):
    """`fluid.layers.conv3d`: a 3-D convolution of an [N, C, D, H, W] (or NDHWC) input, plus bias and act.
    use_cudnn picks Paddle's GPU kernel; the result is the same."""
    return conv_nd("conv3d", 3, **locals())


def _conv_transpose(
    layer,
    nd,
    input,
    num_filters,
    output_size,
    filter_size,
    padding,
    stride,
    dilation,
    groups,
    param_attr,
    bias_attr,
    use_cudnn,
    act,
    name,
    data_format,
):
    """The transposed convolutions: filter [C, num_filters / groups, *k] (Xavier by default, as
    Paddle's), k derived from output_size when filter_size is None."""
    check_use_cudnn(layer, use_cudnn)
    c = channels(layer, input, data_format, nd)
    groups = 1 if groups is None else groups
    stride, dilation = ints(layer, "stride", stride, nd), ints(layer, "dilation", dilation, nd)
    algorithm, paddings = padding_attrs(layer, padding, nd, data_format)
    if filter_size is None:
        if output_size is None:
            raise FleetgraphError(f"{layer}: output_size must be set when filter_size is None")
        sizes = input.shape[1:-1] if check_layout(layer, data_format, nd) else input.shape[2:]
        out = ints(layer, "output_size", output_size, nd)
        pads = paddings if len(paddings) == 2 * nd else [p for v in paddings for p in (v, v)]
        filter_size = [
            (out[i] - (sizes[i] - 1) * stride[i] + pads[2 * i] + pads[2 * i + 1] - 1) // dilation[i] + 1
            for i in range(nd)
        ]
    k = ints(layer, "filter_size", filter_size, nd)
    output_size = [] if output_size is None else ints(layer, "output_size", output_size, nd)
    op_type = layer
    if nd == 2 and c == groups and num_filters == c and not use_cudnn:
        op_type = "depthwise_conv2d_transpose"  # Paddle's choice of kernel, the same result
    helper = LayerHelper(op_type, name, inputs=input)
    if num_filters % groups:
        raise FleetgraphError(f"{layer}: num_filters {num_filters} expected a multiple of groups={groups}")
    w = helper.create_parameter(param_attr, [c, num_filters // groups, *k], input.dtype)
    pre_bias = helper.create_variable_for_type_inference(input.dtype)
    last = check_layout(layer, data_format, nd)
    attrs = {
        "output_size": output_size,
        "strides": stride,
        "paddings": paddings,
        "padding_algorithm": algorithm,
        "dilations": dilation,
        "groups": groups,
        # conv3d_transpose's layer passes the 2-D spelling of its layout, as Paddle's
        "data_format": ("NHWC" if last else "NCHW") if nd == 3 else data_format,
    }
    helper.append_op(op_type, {"Input": [input], "Filter": [w]}, {"Output": [pre_bias]}, attrs)
    axis = nd + 1 if last else 1
    pre_act = helper.append_bias_op(pre_bias, bias_attr, dim_start=axis, dim_end=axis + 1)
    return helper.append_activation(pre_act, act)


def conv2d_transpose(
    input,
    num_filters,
    output_size=None,
    filter_size=None,
    padding=0,
    stride=1,
    dilation=1,
    groups=None,
    param_attr=None,
    bias_attr=None,
    use_cudnn=True,
    act=None,
    name=None,
    data_format="NCHW",
):
    """`fluid.layers.conv2d_transpose`: the gradient of a conv2d with respect to its input, as a layer
    (op conv2d_transpose; depthwise_conv2d_transpose when groups == channels == num_filters without cuDNN)."""
    return _conv_transpose("conv2d_transpose", 2, **locals())


def conv3d_transpose(
    input,
    num_filters,
    output_size=None,
    filter_size=None,
    padding=0,
    stride=1,
    dilation=1,
    groups=None,
    param_attr=None,
    bias_attr=None,
    use_cudnn=True,
    act=None,
    name=None,
    data_format="NCDHW",
):
    """`fluid.layers.conv3d_transpose`: conv2d_transpose over three spatial axes."""
    return _conv_transpose("conv3d_transpose", 3, **locals())


def pool_nd(
    layer,
    nd,
    input,
    pool_size,
    pool_type,
    pool_stride,
    pool_padding,
    global_pooling,
    use_cudnn,
    ceil_mode,
    name,
    exclusive,
    data_format,
):
    """pool2d / pool3d: Paddle's checks and padding forms, then the one pooling op (use_cudnn picks
    Paddle's GPU kernel, of the same result)."""
    check_use_cudnn(layer, use_cudnn)
    if pool_type not in ("max", "avg"):
        raise FleetgraphError(f"{layer}: pool_type expected 'max' or 'avg', got {pool_type!r}")
    if not global_pooling and pool_size == -1:
        raise FleetgraphError(f"{layer}: pool_size expected a size when global_pooling is False, got -1")
    check_layout(layer, data_format, nd)
    algorithm, paddings = padding_attrs(layer, pool_padding, nd, data_format)
    if algorithm == "VALID" and ceil_mode:
        raise FleetgraphError(f"{layer}: ceil_mode expected False with pool_padding 'VALID', got True")
    helper = LayerHelper(layer, name, inputs=input)
    out = helper.create_variable_for_type_inference(input.dtype)
    attrs = {
        "pooling_type": pool_type,
        "ksize": [1] * nd if pool_size == -1 else ints(layer, "pool_size", pool_size, nd),
        "global_pooling": global_pooling,
        "strides": ints(layer, "pool_stride", pool_stride, nd),
        "paddings": paddings,
        "padding_algorithm": algorithm,
        "ceil_mode": ceil_mode,
        "exclusive": exclusive,
        "data_format": data_format,
    }
    helper.append_op(layer, {"X": [input]}, {"Out": [out]}, attrs)
    return out


def pool3d(
    input,
    pool_size=-1,
    pool_type="max",
    pool_stride=1,
    pool_padding=0,
    global_pooling=False,
    use_cudnn=True,
    ceil_mode=False,
    name=None,
    exclusive=True,
    data_format="NCDHW",
):
    """`fluid.layers.pool3d`: max or average pooling over D, H and W (use_cudnn picks Paddle's GPU kernel)."""
    return pool_nd("pool3d", 3, **locals())


def _adaptive_pool(layer, nd, input, pool_size, pool_type, require_index, name):
    """Paddle 1.8's adaptive pooling: max always runs max_pool{nd}d_with_index (its Mask the flat
    index of each maximum within its plane), avg the pooling op with adaptive windows."""
    if pool_type not in ("max", "avg"):
        raise FleetgraphError(f"{layer}: pool_type expected 'max' or 'avg', got {pool_type!r}")
    if not isinstance(require_index, bool):
        raise FleetgraphError(f"{layer}: require_index expected a bool, got {require_index!r}")
    if pool_type == "avg" and require_index:
        raise FleetgraphError(f"{layer}: require_index expected False with pool_type 'avg' (no indices), got True")
    ksize = ints(layer, "pool_size", pool_size, nd)
    if pool_type == "max":
        out, mask = max_pool_with_index(input, nd, ksize, adaptive=True, name=name)
        return (out, mask) if require_index else out
    helper = LayerHelper(f"pool{nd}d", name, inputs=input)
    out = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op(
        f"pool{nd}d", {"X": [input]}, {"Out": [out]}, {"pooling_type": "avg", "ksize": ksize, "adaptive": True}
    )
    return out


def max_pool_with_index(input, nd, ksize, strides=None, paddings=None, adaptive=False, name=None):
    """(Out, Mask) of max_pool{nd}d_with_index: windows clipped to the input (symmetric paddings, no
    ceil mode), or adaptive ones; Mask the int32 index of each maximum within its [*sizes] plane
    (what Paddle 2.0's max_pool2d(return_mask=True) returns too)."""
    op_type = f"max_pool{nd}d_with_index"
    helper = LayerHelper(op_type, name, inputs=input)
    out = helper.create_variable_for_type_inference(input.dtype)
    mask = helper.create_variable_for_type_inference("int32", stop_gradient=True)
    attrs = {"ksize": list(ksize), "adaptive": adaptive}
    if not adaptive:
        attrs.update(strides=list(strides or ksize), paddings=list(paddings or [0] * nd))
    helper.append_op(op_type, {"X": [input]}, {"Out": [out], "Mask": [mask]}, attrs)
    return out, mask


def adaptive_pool2d(input, pool_size, pool_type="max", require_index=False, name=None):
    """`fluid.layers.adaptive_pool2d`: output cell (i, j) pools rows [floor(i H / h), ceil((i + 1) H / h))
    and the columns alike; with require_index also the Mask of each maximum."""
    return _adaptive_pool("adaptive_pool2d", 2, input, pool_size, pool_type, require_index, name)


def adaptive_pool3d(input, pool_size, pool_type="max", require_index=False, name=None):
    """`fluid.layers.adaptive_pool3d`: adaptive_pool2d over D, H and W."""
    return _adaptive_pool("adaptive_pool3d", 3, input, pool_size, pool_type, require_index, name)


def pool2d_v2(
    x,
    kernel_size,
    stride,
    padding,
    pool_type,
    ceil_mode=False,
    exclusive=True,
    divisor_override=None,
    return_mask=False,
    data_format="NCHW",
    name=None,
):
    """Paddle 2.0's nn.functional.max_pool2d / avg_pool2d: the stride defaults to the kernel;
    return_mask gives max_pool2d_with_index's (out, mask); divisor_override rescales each window's
    average to sum / divisor_override (Paddle's pool_out * kh * kw / divisor_override)."""
    layer = f"{pool_type}_pool2d"
    stride = kernel_size if stride is None else stride
    if return_mask:
        if data_format != "NCHW":
            raise FleetgraphError(f"{layer}: return_mask expected data_format 'NCHW', got {data_format!r}")
        algorithm, paddings = padding_attrs(layer, padding, 2, data_format)
        if algorithm != "EXPLICIT" or len(paddings) != 2 or ceil_mode:
            raise NotImplementedError(
                f"{layer}: return_mask with padding {padding!r} and ceil_mode {ceil_mode}; expected symmetric "
                "numeric padding and ceil_mode False (the windows of max_pool2d_with_index)"
            )
        k, s = ints(layer, "kernel_size", kernel_size, 2), ints(layer, "stride", stride, 2)
        return max_pool_with_index(x, 2, k, s, paddings, name=name)
    out = pool_nd(
        "pool2d", 2, x, kernel_size, pool_type, stride, padding, False, True, ceil_mode, name, exclusive, data_format
    )
    if divisor_override is None:
        return out
    if pool_type != "avg" or isinstance(divisor_override, bool) or not isinstance(divisor_override, (int, float)):
        raise FleetgraphError(f"{layer}: divisor_override expected a number for avg pooling, got {divisor_override!r}")
    k = ints(layer, "kernel_size", kernel_size, 2)
    return scale(out, k[0] * k[1] / divisor_override)
