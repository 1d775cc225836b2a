"""`paddle.nn.functional.common` (Paddle 2.0's python/paddle/nn/functional/common.py): dropout and
its channel-wise forms, pad, interpolate, bilinear, cosine_similarity, label_smooth and unfold, each
composed of existing ops so that it runs eagerly and in a program alike."""

from __future__ import annotations

import math

from ...dygraph.dispatch import bind
from ...dygraph.tensor import Tensor
from ...ir.program import Variable
from ...layers import math as _math
from ...layers import nn as _nn
from ...layers import tensor as _tensor
from ...layers import tensor_shape as _shape
from ...layers.indexing import slice as _slice
from ...layers.losses import label_smooth as _label_smooth
from ...layers.rearrange import unfold
from ...layers.resize import _METHODS, _resize
from . import pooling

__all__ = [
    "dropout",
    "dropout2d",
    "dropout3d",
    "alpha_dropout",
    "label_smooth",
    "pad",
    "unfold",
    "interpolate",
    "upsample",
    "bilinear",
    "cosine_similarity",
]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _check_p(where: str, p) -> None:
    if not isinstance(p, (float, int)) or isinstance(p, bool):
        raise TypeError(f"{where}: p expected a float or int, got {type(p).__name__}")
    if not 0 <= p <= 1:
        raise ValueError(f"{where}: p expected in [0, 1], got {p}")


def dropout(x, p=0.5, axis=None, training=True, mode="upscale_in_train", name=None):
    """Elements zeroed with probability p; with `axis`, one draw per index of those axes, shared along
    the others (a whole channel dropped). 'upscale_in_train' divides the kept by 1 - p while training;
    'downscale_in_infer' multiplies by 1 - p in eval instead."""
    _check_p("dropout", p)
    if mode not in ("upscale_in_train", "downscale_in_infer"):
        raise ValueError(f"dropout: mode expected 'upscale_in_train' or 'downscale_in_infer', got {mode!r}")
    impl = "downgrade_in_infer" if mode == "downscale_in_infer" else mode
    if axis is None or not training:
        return _nn.dropout(x, float(p), is_test=not training, name=name, dropout_implementation=impl)
    if not isinstance(axis, (int, list, tuple)):
        raise TypeError(f"dropout: axis expected an int or a list, got {type(axis).__name__}")
    rank = len(x.shape)
    axes = [axis] if isinstance(axis, int) else list(axis)
    if len(axes) > rank or any(not 0 <= a < rank for a in axes):
        raise ValueError(f"dropout: axis expected values in [0, {rank}), got {axis}")
    others = [d for d in range(rank) if d not in axes]
    # a tensor of the mask's shape (x's along `axis`, 1 elsewhere) whatever x's unknown dims, filled with ones
    shaped = _math.reduce_sum(x, dim=others, keep_dim=True) if others else x
    ones = bind("fill_any_like", {"X": [shaped]}, {"value": 1.0})
    ones.stop_gradient = True
    mask = _nn.dropout(ones, float(p), is_test=False, dropout_implementation=impl)
    mask.stop_gradient = True
    return bind("elementwise_mul", {"X": [x], "Y": [mask]}, {"axis": -1}, name=name)


def _channel_dropout(where: str, x, p, training, data_format, layouts, name):
    if len(x.shape) != len(layouts[0]):
        raise ValueError(f"{where}: x expected a {len(layouts[0])}-D tensor, got shape {list(x.shape)}")
    if data_format not in layouts:
        raise ValueError(f"{where}: data_format expected {' or '.join(layouts)}, got {data_format!r}")
    axis = [0, 1] if data_format == layouts[0] else [0, len(layouts[0]) - 1]
    return dropout(x, p, axis, training, "upscale_in_train", name)


def dropout2d(x, p=0.5, training=True, data_format="NCHW", name=None):
    """Whole channels of a 4-D x zeroed with probability p, the rest scaled by 1 / (1 - p)."""
    return _channel_dropout("dropout2d", x, p, training, data_format, ("NCHW", "NHWC"), name)


def dropout3d(x, p=0.5, training=True, data_format="NCDHW", name=None):
    """Whole channels of a 5-D x zeroed with probability p, the rest scaled by 1 / (1 - p)."""
    return _channel_dropout("dropout3d", x, p, training, data_format, ("NCDHW", "NDHWC"), name)


def alpha_dropout(x, p=0.5, training=True, name=None):
    """SELU's dropout: dropped elements become -alpha * scale, then a * y + b keeps the mean and the
    variance of x (a = ((1 - p) (1 + p alpha_p^2))^-1/2, b = -a alpha_p p)."""
    _check_p("alpha_dropout", p)
    if not training:
        return x
    if p == 1:
        return _math.scale(x, scale=0.0)
    alpha_p = -_SELU_ALPHA * _SELU_SCALE
    a = ((1 - p) * (1 + p * alpha_p**2)) ** -0.5
    b = -a * alpha_p * p
    noise = bind("uniform_random_batch_size_like", {"Input": [x]}, _uniform_like_attrs(x))
    keep = _tensor.cast(noise >= float(p), x.dtype)
    keep.stop_gradient = True
    y = x * keep + _math.scale(keep, scale=-alpha_p, bias=alpha_p)
    return _math.scale(y, scale=a, bias=b, name=name)


def _uniform_like_attrs(x) -> dict:
    """uniform_random_batch_size_like's attrs: x's shape, its batch size taken from x at run time."""
    if any(d < 0 for d in x.shape[1:]):
        raise NotImplementedError(f"alpha_dropout: x of shape {list(x.shape)}; only the batch size may be unknown")
    shape = [max(d, 1) for d in x.shape]
    return {"shape": shape, "min": 0.0, "max": 1.0, "seed": 0, "input_dim_idx": 0, "output_dim_idx": 0}


# -- pad ---------------------------------------------------------------------------------------------

_PAD_LAYOUTS = {3: ("NCL", "NLC"), 4: ("NCHW", "NHWC"), 5: ("NCDHW", "NDHWC")}


def _ints(pad, where: str) -> list[int]:
    if isinstance(pad, Tensor):
        return [int(v) for v in pad.numpy().reshape(-1)]
    if isinstance(pad, Variable):
        raise NotImplementedError(f"{where}: pad as a static Variable; pass a list of ints")
    return [int(v) for v in pad]


def _pad_axis(x, axis: int, before: int, after: int, mode: str):
    """x padded along one axis by reflection ('reflect'), edge copies ('replicate') or wrapping
    ('circular'); the pads of distinct axes compose, as Paddle's pad3d computes each index per axis."""
    shape = list(x.shape)
    size = shape[axis]
    if mode == "circular":
        if before > size or after > size:
            raise ValueError(f"pad: circular pad ({before}, {after}) expected at most the size {size}")
        parts = [_slice(x, [axis], [size - before], [size])] if before else []
        parts.append(x)
        if after:
            parts.append(_slice(x, [axis], [0], [after]))
        return _tensor.concat(parts, axis=axis)
    if any(d < 0 for d in shape[axis:]) or sum(d < 0 for d in shape) > 1:
        raise NotImplementedError(f"pad: mode {mode!r} on shape {shape}; only the batch size may be unknown")
    rows = -1 if any(d < 0 for d in shape[:axis]) else math.prod(shape[:axis])
    cols = math.prod(shape[axis + 1 :])
    grid = _tensor.reshape(x, [rows, 1, size, cols])
    attrs = {"paddings": [before, after, 0, 0], "mode": "edge" if mode == "replicate" else "reflect"}
    padded = bind("pad2d", {"X": [grid]}, dict(attrs, pad_value=0.0, data_format="NCHW"))
    return _tensor.reshape(padded, shape[:axis] + [size + before + after] + shape[axis + 1 :])


def pad(x, pad, mode="constant", value=0.0, data_format="NCHW", name=None):
    """`pad` of 2*rank ints pads every axis in order (constant mode only); otherwise pairs (left,
    right), (top, bottom), (front, back) pad the spatial axes from the last, by `value` ('constant'),
    reflection ('reflect'), edge copies ('replicate') or wrapping ('circular')."""
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise ValueError(f"pad: mode expected constant, reflect, replicate or circular, got {mode!r}")
    pad = _ints(pad, "pad")
    rank = len(x.shape)
    if mode == "constant" and len(pad) == 2 * rank:
        return bind("pad", {"X": [x]}, {"paddings": pad, "pad_value": float(value)}, name=name)
    if rank not in _PAD_LAYOUTS:
        raise ValueError(f"pad: x expected a 3-, 4- or 5-D tensor, got shape {list(x.shape)}")
    if data_format not in _PAD_LAYOUTS[rank]:
        raise ValueError(f"pad: data_format expected {' or '.join(_PAD_LAYOUTS[rank])}, got {data_format!r}")
    spatial = list(range(2, rank)) if data_format[1] == "C" else list(range(1, rank - 1))
    if len(pad) != 2 * len(spatial):
        raise ValueError(f"pad: expected {2 * len(spatial)} values for a {rank}-D input, got {pad}")
    pairs = {axis: pad[2 * i : 2 * i + 2] for i, axis in enumerate(reversed(spatial))}
    if mode == "constant":
        full = [v for axis in range(rank) for v in pairs.get(axis, [0, 0])]
        return bind("pad", {"X": [x]}, {"paddings": full, "pad_value": float(value)}, name=name)
    for axis in spatial:
        if any(pairs[axis]):
            x = _pad_axis(x, axis, *pairs[axis], mode)
    return x


# -- interpolate -------------------------------------------------------------------------------------

_MODES = {"linear": 3, "bilinear": 4, "nearest": 4, "bicubic": 4, "trilinear": 5, "area": 0}
_INTERP_LAYOUTS = {3: ("NCW", "NWC"), 4: ("NCHW", "NHWC"), 5: ("NCDHW", "NDHWC")}


def _scaled_sizes(x, spatial: list[int], scale_factor) -> list[int] | None:
    """The output sizes int(in * scale) where x's spatial sizes are known (None where not); Paddle
    2.0's op then samples at 1 / scale, which this one's in / out matches when in * scale is whole."""
    if isinstance(scale_factor, Tensor):
        scale_factor = [float(v) for v in scale_factor.numpy().reshape(-1)]
    elif isinstance(scale_factor, Variable):
        return None  # a program's scale tensor, read by the op at run time
    scales = list(scale_factor) if isinstance(scale_factor, (list, tuple)) else [scale_factor] * len(spatial)
    if len(scales) != len(spatial):
        raise ValueError(f"interpolate: scale_factor expected {len(spatial)} values, got {scale_factor}")
    if any(not isinstance(s, (int, float)) or s <= 0 for s in scales):
        raise ValueError(f"interpolate: scale_factor expected positive numbers, got {scale_factor}")
    ins = [x.shape[a] for a in spatial]
    if any(d is None or d < 0 for d in ins):
        return None
    sizes = [int(d * s) for d, s in zip(ins, scales)]
    if any(abs(d * s - n) > 1e-6 * max(1.0, n) for d, s, n in zip(ins, scales, sizes)):
        raise NotImplementedError(
            f"interpolate: scale_factor {scale_factor} on sizes {ins} gives fractional output sizes; pass size instead"
        )
    return sizes


def interpolate(
    x, size=None, scale_factor=None, mode="nearest", align_corners=False, align_mode=0, data_format="NCHW", name=None
):
    """x resized over its spatial axes to `size` or by `scale_factor`: 'linear' (3-D), 'bilinear',
    'nearest', 'bicubic' (4-D), 'trilinear' (5-D), or 'area' (adaptive average pooling)."""
    method = str(mode).lower()
    rank = len(x.shape)
    if method not in _MODES:
        raise ValueError(f"interpolate: mode expected one of {', '.join(_MODES)}, got {mode!r}")
    if _MODES[method] and _MODES[method] != rank:
        raise ValueError(f"interpolate: mode {method!r} expected a {_MODES[method]}-D input, got shape {list(x.shape)}")
    if size is None and scale_factor is None:
        raise ValueError("interpolate: expected size or scale_factor, got neither")
    if size is not None and scale_factor is not None:
        raise ValueError("interpolate: expected only one of size and scale_factor")
    if not isinstance(align_corners, bool):
        raise TypeError(f"interpolate: align_corners expected a bool, got {align_corners!r}")
    if align_mode not in (0, 1):
        raise ValueError(f"interpolate: align_mode expected 0 or 1, got {align_mode!r}")
    if align_corners and method == "nearest":
        raise ValueError("interpolate: align_corners is for the linear, bilinear, bicubic and trilinear modes")
    data_format = data_format.upper()
    if rank not in _INTERP_LAYOUTS or data_format not in _INTERP_LAYOUTS[rank]:
        raise ValueError(f"interpolate: data_format {data_format!r} does not fit a {rank}-D input")
    channel_first = data_format[1] == "C"
    spatial = list(range(2, rank)) if channel_first else list(range(1, rank - 1))
    if isinstance(size, Tensor):
        size = [int(v) for v in size.numpy().reshape(-1)]
    if scale_factor is not None:
        size = _scaled_sizes(x, spatial, scale_factor)
    if method == "area":
        if size is None:
            raise NotImplementedError("interpolate: mode 'area' by scale_factor on unknown spatial sizes; pass size")
        return getattr(pooling, f"adaptive_avg_pool{rank - 2}d")(x, size)
    if rank == 3:  # 'linear': bilinear over a height of one
        if size is None or isinstance(size, Variable):
            raise NotImplementedError("interpolate: mode 'linear' needs a width known when building; pass a list size")
        axis = 2 if channel_first else 1
        flat = [1, *size]
        wide = _interp(
            _shape.unsqueeze(x, [axis]), "bilinear", flat, scale_factor, align_corners, align_mode, channel_first, name
        )
        return _shape.squeeze(wide, [axis])
    return _interp(x, method, size, scale_factor, align_corners, align_mode, channel_first, name)


def _interp(x, method, size, scale_factor, align_corners, align_mode, channel_first, name):
    if size is None and not isinstance(scale_factor, (int, float, Variable)):
        raise NotImplementedError("interpolate: per-axis scale_factor on unknown spatial sizes; pass size")
    rank = len(x.shape)
    layout = ("NCHW", "NHWC") if rank == 4 else ("NCDHW", "NDHWC")
    scale = None if size is not None else scale_factor
    return _resize(
        "interpolate",
        _METHODS,
        x,
        size,
        scale,
        name,
        method.upper(),
        None,
        align_corners,
        align_mode,
        layout[0] if channel_first else layout[1],
    )


def upsample(
    x, size=None, scale_factor=None, mode="nearest", align_corners=False, align_mode=0, data_format="NCHW", name=None
):
    """`interpolate` under its other name."""
    return interpolate(x, size, scale_factor, mode, align_corners, align_mode, data_format, name)


# -- products ----------------------------------------------------------------------------------------


def bilinear(x1, x2, weight, bias=None, name=None):
    """out[:, k] = x1 @ weight[k] @ x2^T (+ bias[0, k]): weight [out, in1, in2], bias [1, out]."""
    inputs = {"X": [x1], "Y": [x2], "Weight": [weight]}
    if bias is not None:
        inputs["Bias"] = [bias]
    return bind("bilinear_tensor_product", inputs, {}, name=name)


def cosine_similarity(x1, x2, axis=1, eps=1e-8):
    """sum(x1 * x2) / sqrt(max(sum(x1^2) * sum(x2^2), eps^2)) along `axis`."""
    w12 = _math.reduce_sum(x1 * x2, dim=axis)
    w1 = _math.reduce_sum(x1 * x1, dim=axis)
    w2 = _math.reduce_sum(x2 * x2, dim=axis)
    n12 = bind("sqrt", {"X": [bind("clip", {"X": [w1 * w2]}, {"min": eps * eps, "max": float("inf")})]})
    return w12 / n12


def label_smooth(label, prior_dist=None, epsilon=0.1, name=None):
    """(1 - epsilon) * label + epsilon * prior_dist (uniform 1 / classes without one)."""
    return _label_smooth(label, prior_dist, float(epsilon), label.dtype, name)
