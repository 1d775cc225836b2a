"""The pixel arithmetic behind paddle.vision.transforms' 'cv2' backend, in NumPy: OpenCV's conventions
(half-pixel bilinear resize, floor nearest resize, inverse-mapped affine warps with a constant border,
fixed-point grey and the 8-bit HSV of COLOR_BGR2HSV_FULL), so results agree with Paddle's to within one
grey level where OpenCV rounds in fixed point."""

from __future__ import annotations

import numpy as np

_INTERPOLATIONS = ("nearest", "bilinear")


def check_interpolation(where: str, interpolation: str) -> None:
    if interpolation not in _INTERPOLATIONS:
        raise NotImplementedError(
            f"{where}: interpolation {interpolation!r} is not implemented; expected one of {list(_INTERPOLATIONS)}"
        )


def _finish(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Round back to integer pixels as OpenCV's saturate_cast does; float images stay as computed."""
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return np.clip(np.rint(values), info.min, info.max).astype(dtype)
    return values.astype(dtype)


def _linear_taps(dst: int, src: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """cv2.resize INTER_LINEAR along one axis: sample at (d + 0.5) * src / dst - 0.5, clamped to the edges."""
    pos = (np.arange(dst) + 0.5) * (src / dst) - 0.5
    lo = np.floor(pos).astype(np.int64)
    frac = pos - lo
    frac[lo < 0] = 0.0
    lo = np.clip(lo, 0, src - 1)
    frac[lo >= src - 1] = 0.0
    return lo, np.minimum(lo + 1, src - 1), frac


def resize(img: np.ndarray, oh: int, ow: int, interpolation: str) -> np.ndarray:
    """img (H, W, C) to (oh, ow, C)."""
    h, w = img.shape[:2]
    if interpolation == "nearest":
        rows = np.minimum(np.floor(np.arange(oh) * (h / oh)).astype(np.int64), h - 1)
        cols = np.minimum(np.floor(np.arange(ow) * (w / ow)).astype(np.int64), w - 1)
        return img[rows][:, cols]
    y0, y1, fy = _linear_taps(oh, h)
    x0, x1, fx = _linear_taps(ow, w)
    data = img.astype(np.float64)
    fx = fx[None, :, None]
    top = data[y0][:, x0] * (1 - fx) + data[y0][:, x1] * fx
    bottom = data[y1][:, x0] * (1 - fx) + data[y1][:, x1] * fx
    fy = fy[:, None, None]
    return _finish(top * (1 - fy) + bottom * fy, img.dtype)


def warp_affine(img: np.ndarray, matrix: np.ndarray, ow: int, oh: int, interpolation: str, fill) -> np.ndarray:
    """cv2.warpAffine: matrix maps source to destination; each output pixel samples the inverse map, and
    samples outside the source read `fill` (per channel). Bilinear positions are taken to 1/32 pixel, as
    OpenCV's INTER_TAB_SIZE does."""
    h, w, c = img.shape
    full = np.vstack([matrix, [0.0, 0.0, 1.0]])
    inv = np.linalg.inv(full)[:2]
    ys, xs = np.mgrid[0:oh, 0:ow].astype(np.float64)
    sx = inv[0, 0] * xs + inv[0, 1] * ys + inv[0, 2]
    sy = inv[1, 0] * xs + inv[1, 1] * ys + inv[1, 2]
    padded = np.empty((h + 2, w + 2, c), dtype=np.float64)
    padded[...] = np.broadcast_to(np.asarray(fill, dtype=np.float64), (c,)) if np.ndim(fill) else fill
    padded[1:-1, 1:-1] = img

    def sample(yy, xx):  # indices into the padded image; everything outside reads the border row of fill
        return padded[np.clip(yy + 1, 0, h + 1), np.clip(xx + 1, 0, w + 1)]

    if interpolation == "nearest":
        return _finish(sample(np.floor(sy + 0.5).astype(np.int64), np.floor(sx + 0.5).astype(np.int64)), img.dtype)
    sx, sy = np.rint(sx * 32) / 32, np.rint(sy * 32) / 32
    x0, y0 = np.floor(sx).astype(np.int64), np.floor(sy).astype(np.int64)
    fx, fy = (sx - x0)[..., None], (sy - y0)[..., None]
    top = sample(y0, x0) * (1 - fx) + sample(y0, x0 + 1) * fx
    bottom = sample(y0 + 1, x0) * (1 - fx) + sample(y0 + 1, x0 + 1) * fx
    return _finish(top * (1 - fy) + bottom * fy, img.dtype)


def rgb_to_gray(img: np.ndarray) -> np.ndarray:
    """COLOR_RGB2GRAY: 0.299 R + 0.587 G + 0.114 B, in OpenCV's 14-bit fixed point for 8-bit images."""
    if img.dtype == np.uint8:
        r, g, b = (img[..., i].astype(np.int64) for i in range(3))
        return ((r * 4899 + g * 9617 + b * 1868 + (1 << 13)) >> 14).astype(np.uint8)
    return (img[..., 0] * 0.299 + img[..., 1] * 0.587 + img[..., 2] * 0.114).astype(img.dtype)


def bgr_to_hsv_full(img: np.ndarray) -> np.ndarray:
    """COLOR_BGR2HSV_FULL on 8-bit pixels (channel 0 read as blue): hue over 0..255, OpenCV's 12-bit tables."""
    b, g, r = (img[..., i].astype(np.int64) for i in range(3))
    v = np.maximum(np.maximum(b, g), r)
    diff = v - np.minimum(np.minimum(b, g), r)
    shift = 12
    with np.errstate(divide="ignore"):
        sdiv = np.where(v > 0, np.rint((255 << shift) / np.maximum(v, 1)), 0).astype(np.int64)
        hdiv = np.where(diff > 0, np.rint((256 << shift) / (6.0 * np.maximum(diff, 1))), 0).astype(np.int64)
    s = (diff * sdiv + (1 << (shift - 1))) >> shift
    h = np.where(v == r, g - b, np.where(v == g, b - r + 2 * diff, r - g + 4 * diff))
    h = (h * hdiv + (1 << (shift - 1))) >> shift
    h = np.where(h < 0, h + 256, h)
    return np.stack([np.clip(h, 0, 255), s, v], axis=-1).astype(np.uint8)


_SECTORS = np.array([[1, 3, 0], [1, 0, 2], [3, 0, 1], [0, 2, 1], [0, 1, 3], [2, 1, 0]])


def hsv_full_to_bgr(hsv: np.ndarray) -> np.ndarray:
    """COLOR_HSV2BGR_FULL on 8-bit pixels: OpenCV's six-sector float formula, rounded back to 8 bits."""
    h = hsv[..., 0].astype(np.float32) * np.float32(6.0 / 256)
    s = hsv[..., 1].astype(np.float32) / np.float32(255)
    v = hsv[..., 2].astype(np.float32) / np.float32(255)
    h = np.mod(h, 6)
    sector = np.floor(h).astype(np.int64)
    f = h - sector
    tab = np.stack([v, v * (1 - s), v * (1 - s * f), v * (1 - s * (1 - f))], axis=-1)
    bgr = np.take_along_axis(tab, _SECTORS[sector], axis=-1)
    bgr = np.where((s == 0)[..., None], v[..., None], bgr)
    return np.clip(np.rint(bgr * 255), 0, 255).astype(np.uint8)
