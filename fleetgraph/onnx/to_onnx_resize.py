"""Export rules of ops/resize.py: the interpolate ops as Resize (Paddle's source positions as ONNX's
coordinate transformations), affine_grid as a MatMul over the constant base grid (ONNX's AffineGrid
needs opset 20) and grid_sampler as GridSample."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto

from ..ops.resize import base_grid
from .emitter import Emitter, UnsupportedOp, exports


def _coordinates(op) -> dict:
    method, corners = op.attr("interp_method"), op.attr("align_corners")
    if method == "nearest":  # int(ratio * k + 0.5) aligned, else int(ratio * k)
        if corners:
            return {
                "mode": "nearest",
                "coordinate_transformation_mode": "align_corners",
                "nearest_mode": "round_prefer_ceil",
            }
        return {"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"}
    if method == "bicubic":  # no align_mode: half-pixel centres unless aligned
        mode = "align_corners" if corners else "half_pixel"
        return {"mode": "cubic", "cubic_coeff_a": -0.75, "coordinate_transformation_mode": mode}
    mode = "align_corners" if corners else "half_pixel" if op.attr("align_mode") == 0 else "asymmetric"
    return {"mode": "linear", "coordinate_transformation_mode": mode}


def _sizes(e: Emitter, op, x: str, nd: int) -> str:
    """The output's spatial sizes as an int64 tensor: SizeTensor, else OutSize, else the scale or
    out_* attrs (a scale needs the input's sizes known: Paddle's source positions use out/in)."""
    if op.input("SizeTensor"):
        parts = [e.node("Cast", [t], to=TensorProto.INT64) for t in e.xs(op, "SizeTensor")]
        return e.node("Concat", parts, axis=0)
    if op.input("OutSize"):
        return e.node("Cast", [e.x(op, "OutSize")], to=TensorProto.INT64)
    if op.input("Scale"):
        raise UnsupportedOp("a Scale tensor; expected out_shape, or scale as a number")
    layout = op.attr("data_layout")
    sizes = list(e.shape(x)[1 : 1 + nd] if layout == "NHWC" else e.shape(x)[2:])
    if op.attr("scale") > 0:
        if any(n < 0 for n in sizes):
            raise UnsupportedOp(f"scale {op.attr('scale')} of '{x}' {list(e.shape(x))}: expected known sizes")
        return e.const([int(n * op.attr("scale")) for n in sizes])
    return e.const([op.attr("out_d"), op.attr("out_h"), op.attr("out_w")][3 - nd :])


@exports("bilinear_interp", "nearest_interp", "trilinear_interp", "bicubic_interp")
def _interp(e: Emitter, op) -> None:
    x = e.x(op, "X")
    nd = len(e.shape(x)) - 2
    axes = list(range(1, 1 + nd)) if op.attr("data_layout") == "NHWC" else list(range(2, 2 + nd))
    e.node("Resize", [x, "", "", _sizes(e, op, x, nd)], e.out(op, "Out"), axes=axes, **_coordinates(op))


@exports("affine_grid")
def _affine_grid(e: Emitter, op) -> None:
    """Output [N, H, W, 2] = base [H * W, 3] @ theta^T, reshaped."""
    if not op.attr("output_shape"):
        raise UnsupportedOp("an OutputShape tensor; expected output_shape as numbers")
    _, _, h, w = op.attr("output_shape")
    theta = e.x(op, "Theta")
    base = e.const(base_grid(h, w).astype(np.dtype(e.dtype(theta))), hint="base_grid")
    points = e.node("MatMul", [base, e.node("Transpose", [theta], perm=[0, 2, 1])])
    e.node("Reshape", [points, e.const([-1, h, w, 2])], e.out(op, "Output"))


@exports("grid_sampler")
def _grid_sampler(e: Emitter, op) -> None:
    """Paddle 1.8's sampling is bilinear, zero outside, (-1, 1) at the corner pixels' centres."""
    e.node(
        "GridSample",
        [e.x(op, "X"), e.x(op, "Grid")],
        e.out(op, "Output"),
        mode="bilinear",
        padding_mode="zeros",
        align_corners=1,
    )
