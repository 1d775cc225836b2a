"""The pixel arithmetic behind paddle.vision.transforms' 'cv2' backend, in NumPy, with OpenCV's
conventions and its fixed-point rounding for 8-bit images: half-pixel bilinear resize (11-bit weights),
floor nearest resize, affine warps through OpenCV's inverse map (positions in 1/1024 and 1/32 pixel,
15-bit weights) with a constant border, 15-bit grey, and the 8-bit HSV of COLOR_BGR2HSV_FULL. Checked
against OpenCV 4: all equal but 8-bit bilinear resize, where OpenCV's vector and scalar loops round
differently and under 1% of values differ, by one."""

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


def _resize_uint8(img: np.ndarray, rows, cols) -> np.ndarray:
    """OpenCV's 8-bit path: weights in 1/2048, a horizontal pass kept in integers, then its vector loop's
    vertical rounding (rows that take one source row only round as its scalar loop does)."""
    (y0, y1, fy), (x0, x1, fx) = rows, cols
    a0 = np.rint((1 - fx) * 2048).astype(np.int64)[None, :, None]
    b0 = np.rint((1 - fy) * 2048).astype(np.int64)[:, None, None]
    data = img.astype(np.int64)
    top = data[y0][:, x0] * a0 + data[y0][:, x1] * (2048 - a0)
    bottom = data[y1][:, x0] * a0 + data[y1][:, x1] * (2048 - a0)
    blended = ((((top >> 4) * b0) >> 16) + (((bottom >> 4) * (2048 - b0)) >> 16) + 2) >> 2
    return np.where(b0 == 2048, (top + 1024) >> 11, blended).astype(np.uint8)


def resize(img: np.ndarray, oh: int, ow: int, interpolation: str) -> np.ndarray:
    """img (H, W, C) to (oh, ow, C)."""
    h, w = img.shape[:2]
    if interpolation == "nearest":
        rows = np.minimum(np.floor(np.arange(oh) * (h / oh)).astype(np.int64), h - 1)
        cols = np.minimum(np.floor(np.arange(ow) * (w / ow)).astype(np.int64), w - 1)
        return img[rows][:, cols]
    rows, cols = _linear_taps(oh, h), _linear_taps(ow, w)
    if img.dtype == np.uint8:
        return _resize_uint8(img, rows, cols)
    (y0, y1, fy), (x0, x1, fx) = rows, cols
    data = img.astype(np.float64)
    fx = fx[None, :, None]
    top = data[y0][:, x0] * (1 - fx) + data[y0][:, x1] * fx
    bottom = data[y1][:, x0] * (1 - fx) + data[y1][:, x1] * fx
    fy = fy[:, None, None]
    return _finish(top * (1 - fy) + bottom * fy, img.dtype)


def _invert_affine(m: np.ndarray) -> np.ndarray:
    """cv2.invertAffineTransform's arithmetic, so positions match OpenCV's to the last bit."""
    det = m[0, 0] * m[1, 1] - m[0, 1] * m[1, 0]
    det = 1.0 / det if det != 0 else 0.0
    a11, a22, a12, a21 = m[1, 1] * det, m[0, 0] * det, -m[0, 1] * det, -m[1, 0] * det
    return np.array([[a11, a12, -a11 * m[0, 2] - a12 * m[1, 2]], [a21, a22, -a21 * m[0, 2] - a22 * m[1, 2]]])


def warp_affine(img: np.ndarray, matrix: np.ndarray, ow: int, oh: int, interpolation: str, fill) -> np.ndarray:
    """cv2.warpAffine: matrix maps source to destination; each output pixel samples the inverse map at a
    position OpenCV takes to 1/1024 pixel, rounded to the pixel (nearest) or to 1/32 (bilinear), and
    samples outside the source read `fill` (per channel)."""
    h, w, c = img.shape
    inv = _invert_affine(matrix)
    xs, ys = np.arange(ow), np.arange(oh)
    half = 512 if interpolation == "nearest" else 16
    x = np.rint((inv[0, 1] * ys + inv[0, 2]) * 1024).astype(np.int64)[:, None] + half
    y = np.rint((inv[1, 1] * ys + inv[1, 2]) * 1024).astype(np.int64)[:, None] + half
    x = x + np.rint(inv[0, 0] * xs * 1024).astype(np.int64)[None, :]
    y = y + np.rint(inv[1, 0] * xs * 1024).astype(np.int64)[None, :]
    exact = img.dtype == np.uint8
    padded = np.empty((h + 2, w + 2, c), dtype=np.int64 if exact else np.float64)
    padded[...] = np.asarray(fill)
    padded[1:-1, 1:-1] = img

    def sample(yy, xx):  # indices into the padded image; everything outside reads its border of fill
        return padded[np.clip(yy + 1, 0, h + 1), np.clip(xx + 1, 0, w + 1)]

    if interpolation == "nearest":
        return _finish(sample(y >> 10, x >> 10), img.dtype)
    x, y = x >> 5, y >> 5  # in 1/32 pixel
    x0, y0, fx, fy = x >> 5, y >> 5, (x & 31)[..., None], (y & 31)[..., None]
    acc = sample(y0, x0) * (32 - fy) * (32 - fx) + sample(y0, x0 + 1) * (32 - fy) * fx
    acc = acc + sample(y0 + 1, x0) * fy * (32 - fx) + sample(y0 + 1, x0 + 1) * fy * fx
    if exact:  # OpenCV's 15-bit weights are these products times 32
        return ((acc * 32 + (1 << 14)) >> 15).astype(np.uint8)
    return _finish(acc / 1024.0, img.dtype)


def rgb_to_gray(img: np.ndarray) -> np.ndarray:
    """COLOR_RGB2GRAY: 0.299 R + 0.587 G + 0.114 B, in OpenCV's 15-bit fixed point for 8-bit images."""
    if img.dtype == np.uint8:
        r, g, b = (img[..., i].astype(np.int64) for i in range(3))
        return ((r * 9798 + g * 19235 + b * 3735 + (1 << 14)) >> 15).astype(np.uint8)
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
    """COLOR_HSV2BGR_FULL on 8-bit pixels: OpenCV's six-sector float formula, rounded back to 8 bits
    (OpenCV reads the hue back over 0..255, not the 0..256 it wrote)."""
    h = hsv[..., 0].astype(np.float32) * np.float32(6.0 / 255)
    s = hsv[..., 1].astype(np.float32) * np.float32(1 / 255.0)
    v = hsv[..., 2].astype(np.float32) * np.float32(1 / 255.0)
    h = np.mod(h, 6)
    sector = np.floor(h).astype(np.int64)
    f = h - sector
    tab = np.stack([v, v * (1 - s), v * (1 - s * f), v * (1 - s * (1 - f))], axis=-1)
    bgr = np.take_along_axis(tab, _SECTORS[sector], axis=-1)
    bgr = np.where((s == 0)[..., None], v[..., None], bgr)
    return np.clip(np.rint(bgr * 255), 0, 255).astype(np.uint8)
