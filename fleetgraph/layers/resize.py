"""Layer functions over the ops of ops/resize.py, in Paddle 1.8's fluid.layers spelling:
image_resize and interpolate (its spelling that also takes BICUBIC), resize_bilinear,
resize_trilinear, resize_nearest, image_resize_short, affine_grid and grid_sampler."""

from __future__ import annotations

import warnings

from ..dygraph.tensor import Tensor
from ..ir.errors import FleetgraphError
from ..ir.program import Variable
from .helper import LayerHelper
from .tensor import fill_constant

__all__ = [
    "image_resize",
    "interpolate",
    "resize_bilinear",
    "resize_trilinear",
    "resize_nearest",
    "image_resize_short",
    "affine_grid",
    "grid_sampler",
]

_METHODS = {"BILINEAR": "bilinear", "TRILINEAR": "trilinear", "NEAREST": "nearest", "BICUBIC": "bicubic"}
_IMAGE_RESIZE_METHODS = {k: v for k, v in _METHODS.items() if k != "BICUBIC"}
_TENSORS = (Variable, Tensor)


def _size_inputs(layer, input, out_shape, attrs, inputs):
    """out_shape as Paddle's layer passes it: a tensor (OutSize); ints (out_d/out_h/out_w); or a
    list mixing ints and [1] int32 tensors (SizeTensor, the ints as filled constants)."""
    nd = len(input.shape) - 2
    if isinstance(out_shape, _TENSORS):
        out_shape.stop_gradient = True
        inputs["OutSize"] = [out_shape]
        return
    if not isinstance(out_shape, (list, tuple)):
        raise FleetgraphError(f"{layer}: out_shape expected a list, tuple or Variable, got {type(out_shape).__name__}")
    if len(out_shape) != nd:
        raise FleetgraphError(f"{layer}: out_shape expected {nd} sizes for a {nd + 2}-D input, got {list(out_shape)}")
    sizes = []
    for d in out_shape:
        if isinstance(d, _TENSORS):
            d.stop_gradient = True
        elif not isinstance(d, int) or d <= 0:
            raise FleetgraphError(f"{layer}: out_shape expected sizes > 0, got {list(out_shape)}")
        sizes.append(-1 if isinstance(d, _TENSORS) else int(d))
    if any(isinstance(d, _TENSORS) for d in out_shape):
        inputs["SizeTensor"] = [
            d if isinstance(d, _TENSORS) else fill_constant([1], "int32", d, force_cpu=True) for d in out_shape
        ]
    attrs.update(zip(("out_d", "out_h", "out_w")[3 - nd :], sizes))


def _resize(
    layer, methods, input, out_shape, scale, name, resample, actual_shape, align_corners, align_mode, data_format
):
    if resample not in methods:
        raise FleetgraphError(f"{layer}: resample expected one of {', '.join(methods)}, got {resample!r}")
    rank = len(input.shape)
    if (resample == "TRILINEAR") != (rank == 5) or rank not in (4, 5):
        raise FleetgraphError(
            f"{layer}: resample {resample!r} expected a {5 if resample == 'TRILINEAR' else 4}-D input, "
            f"got shape {list(input.shape)}"
        )
    if not isinstance(align_corners, bool):
        raise FleetgraphError(f"{layer}: align_corners expected a bool, got {align_corners!r}")
    if align_mode not in (0, 1):
        raise FleetgraphError(f"{layer}: align_mode expected 0 or 1, got {align_mode!r}")
    if out_shape is None and scale is None:
        raise FleetgraphError(f"{layer}: expected out_shape or scale, got neither")
    layouts = ("NCHW", "NHWC") if rank == 4 else ("NCDHW", "NDHWC")
    if data_format not in layouts:
        raise FleetgraphError(f"{layer}: data_format expected {' or '.join(layouts)}, got {data_format!r}")
    method = methods[resample]
    attrs = {
        "out_d": -1,
        "out_h": -1,
        "out_w": -1,
        "interp_method": method,
        "align_corners": align_corners,
        "align_mode": align_mode,
        "data_layout": "NCHW" if data_format == layouts[0] else "NHWC",
    }
    inputs = {"X": [input]}
    if out_shape is not None:
        _size_inputs(layer, input, out_shape, attrs, inputs)
    elif isinstance(scale, _TENSORS):
        scale.stop_gradient = True
        inputs["Scale"] = [scale]
    elif isinstance(scale, (int, float)) and not isinstance(scale, bool):
        if scale <= 0:
            raise FleetgraphError(f"{layer}: scale expected > 0, got {scale}")
        attrs["scale"] = float(scale)
    else:
        raise FleetgraphError(f"{layer}: scale expected a float, int or Variable, got {type(scale).__name__}")
    if isinstance(actual_shape, _TENSORS):
        warnings.warn(f"{layer}: actual_shape is deprecated in Paddle 1.8; use out_shape", stacklevel=3)
        actual_shape.stop_gradient = True
        inputs["OutSize"] = [actual_shape]
    elif actual_shape is not None:
        raise FleetgraphError(f"{layer}: actual_shape expected a Variable or None, got {type(actual_shape).__name__}")
    helper = LayerHelper(f"{method}_interp", name, inputs=input)
    out = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op(f"{method}_interp", inputs, {"Out": [out]}, attrs)
    return out


def image_resize(
    input,
    out_shape=None,
    scale=None,
    name=None,
    resample="BILINEAR",
    actual_shape=None,
    align_corners=True,
    align_mode=1,
    data_format="NCHW",
):
    """`fluid.layers.image_resize`: BILINEAR or NEAREST over H and W of a 4-D input, TRILINEAR over D,
    H and W of a 5-D one, to out_shape (ints, tensors, or one tensor) or by scale (out = int(in * scale));
    actual_shape, a tensor, wins over both at run time."""
    return _resize("image_resize", _IMAGE_RESIZE_METHODS, **locals())


def interpolate(
    input,
    out_shape=None,
    scale=None,
    name=None,
    resample="BILINEAR",
    actual_shape=None,
    align_corners=True,
    align_mode=1,
    data_format="NCHW",
):
    """`fluid.layers.interpolate`: image_resize that also takes BICUBIC (Paddle's cubic convolution, A = -0.75)."""
    return _resize("interpolate", _METHODS, **locals())


def resize_bilinear(
    input,
    out_shape=None,
    scale=None,
    name=None,
    actual_shape=None,
    align_corners=True,
    align_mode=1,
    data_format="NCHW",
):
    """`fluid.layers.resize_bilinear`: image_resize with BILINEAR."""
    return image_resize(input, out_shape, scale, name, "BILINEAR", actual_shape, align_corners, align_mode, data_format)


def resize_trilinear(
    input,
    out_shape=None,
    scale=None,
    name=None,
    actual_shape=None,
    align_corners=True,
    align_mode=1,
    data_format="NCDHW",
):
    """`fluid.layers.resize_trilinear`: image_resize with TRILINEAR, over D, H and W."""
    return image_resize(
        input, out_shape, scale, name, "TRILINEAR", actual_shape, align_corners, align_mode, data_format
    )


def resize_nearest(
    input, out_shape=None, scale=None, name=None, actual_shape=None, align_corners=True, data_format="NCHW"
):
    """`fluid.layers.resize_nearest`: image_resize with NEAREST (align_corners rounds the source index)."""
    return image_resize(input, out_shape, scale, name, "NEAREST", actual_shape, align_corners, 1, data_format)


def image_resize_short(input, out_short_len, resample="BILINEAR"):
    """`fluid.layers.image_resize_short`: the shorter of H and W (NCHW) becomes out_short_len, the
    other int(long * out_short_len / short + 0.5), keeping the aspect ratio."""
    if len(input.shape) != 4:
        raise FleetgraphError(f"image_resize_short: input expected rank 4 (NCHW), got shape {list(input.shape)}")
    hw = list(input.shape[2:4])
    short = hw.index(min(hw))
    out_shape = list(hw)
    out_shape[short] = out_short_len
    out_shape[1 - short] = int(float(hw[1 - short]) * (float(out_short_len) / float(hw[short])) + 0.5)
    return image_resize(input=input, out_shape=out_shape, resample=resample)


def affine_grid(theta, out_shape, name=None):
    """`fluid.layers.affine_grid`: the [N, H, W, 2] sampling grid theta [N, 2, 3] maps the (x, y, 1)
    points of linspace(-1, 1) over W and H to (out_shape [N, C, H, W], ints or an int32 tensor)."""
    if not isinstance(theta, _TENSORS) or theta.dtype not in ("float32", "float64"):
        raise FleetgraphError(f"affine_grid: theta expected a float32 or float64 Variable, got {theta!r}")
    inputs, attrs = {"Theta": [theta]}, {}
    if isinstance(out_shape, _TENSORS):
        if out_shape.dtype != "int32":
            raise FleetgraphError(f"affine_grid: out_shape expected an int32 tensor, got {out_shape.dtype}")
        inputs["OutputShape"] = [out_shape]
    elif isinstance(out_shape, (list, tuple)):
        attrs["output_shape"] = [int(d) for d in out_shape]
    else:
        raise FleetgraphError(f"affine_grid: out_shape expected a list, tuple or Variable, got {out_shape!r}")
    helper = LayerHelper("affine_grid", name, inputs=theta)
    out = helper.create_variable_for_type_inference(theta.dtype)
    helper.append_op("affine_grid", inputs, {"Output": [out]}, attrs)
    return out


def grid_sampler(x, grid, name=None):
    """`fluid.layers.grid_sampler`: x [N, C, H, W] sampled bilinearly at grid [N, H, W, 2] ((x, y) in
    [-1, 1] spanning the corner pixels' centres), zero outside the input."""
    for what, v in (("x", x), ("grid", grid)):
        if not isinstance(v, _TENSORS) or v.dtype not in ("float32", "float64"):
            raise FleetgraphError(f"grid_sampler: {what} expected a float32 or float64 Variable, got {v!r}")
    helper = LayerHelper("grid_sampler", name, inputs=[x, grid])
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op("grid_sampler", {"X": [x], "Grid": [grid]}, {"Output": [out]})
    return out
