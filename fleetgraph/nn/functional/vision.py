"""`paddle.nn.functional.vision` (Paddle 2.0's python/paddle/nn/functional/vision.py): affine_grid,
grid_sample and pixel_shuffle over the affine_grid, grid_sampler and pixel_shuffle ops, whose
align_corners=True sampling the align_corners=False forms reach by rescaling the coordinates."""

from __future__ import annotations

from ...layers import math as _math
from ...layers import tensor as _tensor
from ...layers.rearrange import pixel_shuffle as _pixel_shuffle
from ...layers.resize import affine_grid as _affine_grid
from ...layers.resize import grid_sampler as _grid_sampler

__all__ = ["affine_grid", "grid_sample", "pixel_shuffle"]


def _scale_last(t, factors: list[float], axis: int):
    """t with its slices along `axis` multiplied by `factors`, one each (the rest kept)."""
    parts = _tensor.split(t, t.shape[axis], dim=axis)
    scaled = [_math.scale(p, scale=f) if f != 1.0 else p for p, f in zip(parts, factors + [1.0] * len(parts))]
    return _tensor.concat(scaled, axis=axis)


def affine_grid(theta, out_shape, align_corners=True, name=None):
    """The [N, H, W, 2] grid theta [N, 2, 3] maps the points (x, y, 1) to, x and y spanning [-1, 1]
    over W and H: from corner to corner with align_corners, else to the corner pixels' centres."""
    if not isinstance(align_corners, bool):
        raise TypeError(f"affine_grid: align_corners expected a bool, got {align_corners!r}")
    if not align_corners:
        if not isinstance(out_shape, (list, tuple)):
            raise NotImplementedError("affine_grid: align_corners=False with out_shape a tensor; pass a list")
        h, w = int(out_shape[2]), int(out_shape[3])
        theta = _scale_last(theta, [(w - 1) / w, (h - 1) / h], axis=2)
    return _affine_grid(theta, list(out_shape) if isinstance(out_shape, tuple) else out_shape, name)


def grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=True, name=None):
    """x [N, C, H, W] sampled bilinearly at grid [N, H', W', 2] (x, y in [-1, 1]: the corner pixels'
    centres with align_corners, the corners themselves without), zero outside x."""
    if mode != "bilinear":
        raise NotImplementedError(f"grid_sample: mode {mode!r}; only 'bilinear' is built")
    if padding_mode != "zeros":
        raise NotImplementedError(f"grid_sample: padding_mode {padding_mode!r}; only 'zeros' is built")
    if not isinstance(align_corners, bool):
        raise TypeError(f"grid_sample: align_corners expected a bool, got {align_corners!r}")
    h, w = x.shape[2], x.shape[3]
    if list(grid.shape[1:3]) != [h, w]:
        raise NotImplementedError(
            f"grid_sample: grid {list(grid.shape)} of another size than x's {h} x {w}; the grid_sampler op "
            "samples an output of x's size"
        )
    if not align_corners:
        if h <= 1 or w <= 1:
            raise NotImplementedError(f"grid_sample: align_corners=False on a {h} x {w} input")
        grid = _scale_last(grid, [w / (w - 1), h / (h - 1)], axis=3)
    return _grid_sampler(x, grid, name)


def pixel_shuffle(x, upscale_factor, data_format="NCHW", name=None):
    """[N, C * r^2, H, W] -> [N, C, H * r, W * r] (NHWC: the same over its axes)."""
    if data_format not in ("NCHW", "NHWC"):
        raise ValueError(f"pixel_shuffle: data_format expected NCHW or NHWC, got {data_format!r}")
    if data_format == "NCHW":
        return _pixel_shuffle(x, upscale_factor)
    moved = _tensor.transpose(x, [0, 3, 1, 2])
    return _tensor.transpose(_pixel_shuffle(moved, upscale_factor), [0, 2, 3, 1])
