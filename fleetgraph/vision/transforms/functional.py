"""`paddle.vision.transforms.functional`: Paddle 2.0's image functions, which pick the backend by the
image's type as Paddle's do: a PIL image is computed by Pillow (its 'pil' backend, see _pil), a NumPy HWC
array as OpenCV computes it (its 'cv2' backend, see _kernels). The argument checks and the size
arithmetic the two share live here."""

from __future__ import annotations

import math
import numbers
import sys
from collections.abc import Iterable, Sequence

import numpy as np

from ...dygraph.tensor import to_tensor as _paddle_to_tensor
from . import _kernels

__all__ = [
    "to_tensor", "hflip", "vflip", "resize", "pad", "rotate", "to_grayscale", "crop", "center_crop",
    "adjust_brightness", "adjust_contrast", "adjust_hue", "normalize",
]  # fmt: skip


def _is_pil_image(img) -> bool:
    """Nothing can be a PIL image before Pillow is imported, so this never imports it."""
    pil_image = sys.modules.get("PIL.Image")
    return pil_image is not None and isinstance(img, pil_image.Image)


def _is_numpy_image(img) -> bool:
    return isinstance(img, np.ndarray) and img.ndim in (2, 3)


def _check_image(where: str, img) -> None:
    if not (_is_pil_image(img) or _is_numpy_image(img)):
        raise TypeError(
            f"{where}: expected a PIL image or a numpy image of shape (H, W) or (H, W, C); got {type(img).__name__}"
        )


def _pil():
    """The Pillow backend, imported on the first PIL image (Pillow is an extra: fleetgraph[vision])."""
    from . import _pil

    return _pil


def _image_size(img) -> tuple[int, int]:
    """(width, height), as PIL's img.size."""
    return img.size if _is_pil_image(img) else (img.shape[1], img.shape[0])


def _keep_channels(img: np.ndarray, out: np.ndarray) -> np.ndarray:
    """A 2-D image stays 2-D, an (H, W, C) image stays 3-D."""
    return out[:, :, 0] if img.ndim == 2 else out


def _hwc(img: np.ndarray) -> np.ndarray:
    return img[:, :, None] if img.ndim == 2 else img


def to_tensor(pic, data_format="CHW"):
    """HWC (or HW) array or PIL image to a Tensor in CHW or HWC; uint8 scales to float32 in [0, 1], others
    keep their dtype (a PIL image's as _pil.to_array reads it: 'I' int32, 'F' float32, '1' as 0/255)."""
    _check_image("to_tensor", pic)
    if data_format not in ("CHW", "HWC"):
        raise ValueError(f"to_tensor: data_format should be CHW or HWC, got {data_format!r}")
    if _is_pil_image(pic):
        pic = _pil().to_array(pic)
    pic = _hwc(pic)
    if data_format == "CHW":
        pic = pic.transpose((2, 0, 1))
    if pic.dtype == np.uint8:
        pic = pic.astype(np.float32) / np.float32(255.0)
    return _paddle_to_tensor(np.ascontiguousarray(pic))


def resize(img, size, interpolation="bilinear"):
    """An int size matches the shorter side (the other scaled and truncated, as Paddle's int(size * h / w));
    a (h, w) pair is the output size. Arrays: 'bilinear' and 'nearest' as cv2.INTER_LINEAR and INTER_NEAREST;
    PIL images: Pillow's filter of that name ('nearest', 'bilinear', 'bicubic', 'box', 'lanczos', 'hamming')."""
    _check_image("resize", img)
    if not (isinstance(size, int) or (isinstance(size, Iterable) and len(size) == 2)):
        raise TypeError(f"resize: expected size an int or a (h, w) pair, got {size!r}")
    if _is_pil_image(img):
        _pil().check_filter("resize", interpolation)
    else:
        _kernels.check_interpolation("resize", interpolation)
    w, h = _image_size(img)
    if isinstance(size, int):
        if (w <= h and w == size) or (h <= w and h == size):
            return img
        oh, ow = (int(size * h / w), size) if w < h else (size, int(size * w / h))
    else:
        oh, ow = size
    if oh <= 0 or ow <= 0:
        raise ValueError(f"resize: expected a positive output size, got {(oh, ow)} from size={size!r}")
    if _is_pil_image(img):
        return _pil().resize(img, oh, ow, interpolation)
    return _keep_channels(img, _kernels.resize(_hwc(img), oh, ow, interpolation))


_PAD_MODES = {"constant": "constant", "edge": "edge", "reflect": "reflect", "symmetric": "symmetric"}


def pad(img, padding, fill=0, padding_mode="constant"):
    """padding: int (all sides), (left/right, top/bottom) or (left, top, right, bottom). 'reflect' leaves the
    edge out ([1, 2, 3, 4] by 2 is [3, 2, 1, 2, 3, 4, 3, 2]), 'symmetric' repeats it ([2, 1, 1, 2, 3, 4, 4, 3]).
    A PIL image is padded by ImageOps.expand ('constant', fill a number, tuple or colour name) or as an array
    (the other modes), and keeps its palette."""
    _check_image("pad", img)
    if not isinstance(padding, (numbers.Number, list, tuple)):
        raise TypeError(f"pad: expected padding an int, list or tuple, got {type(padding).__name__}")
    if not isinstance(fill, (numbers.Number, str, list, tuple)):
        raise TypeError(f"pad: expected fill a number or a sequence, got {type(fill).__name__}")
    if not isinstance(padding_mode, str):
        raise TypeError(f"pad: expected padding_mode a str, got {type(padding_mode).__name__}")
    if isinstance(padding, Sequence) and len(padding) not in (2, 4):
        raise ValueError(f"pad: padding must be an int or a 2, or 4 element tuple, not a {len(padding)} element tuple")
    if padding_mode not in _PAD_MODES:
        raise ValueError(f"pad: padding_mode should be one of {list(_PAD_MODES)}, got {padding_mode!r}")
    if isinstance(padding, numbers.Number):
        left = top = right = bottom = int(padding)
    elif len(padding) == 2:
        left = right = padding[0]
        top = bottom = padding[1]
    else:
        left, top, right, bottom = padding
    if _is_pil_image(img):
        if padding_mode == "constant":
            return _pil().expand(img, (left, top, right, bottom), fill)
        return _pil().with_pixels(img, pad(np.asarray(img), padding, fill, padding_mode))
    image = _hwc(img)
    widths = ((top, bottom), (left, right), (0, 0))
    if padding_mode != "constant":
        return _keep_channels(img, np.pad(image, widths, mode=_PAD_MODES[padding_mode]))
    out = np.empty((image.shape[0] + top + bottom, image.shape[1] + left + right, image.shape[2]), image.dtype)
    out[...] = np.broadcast_to(np.asarray(fill, dtype=image.dtype), (image.shape[2],)) if np.ndim(fill) else fill
    out[top : top + image.shape[0], left : left + image.shape[1]] = image
    return _keep_channels(img, out)


def crop(img, top, left, height, width):
    """The box with upper-left corner (top, left); a PIL image reads zeros past its edges, an array stops there."""
    _check_image("crop", img)
    if _is_pil_image(img):
        return _pil().crop(img, top, left, height, width)
    return img[top : top + height, left : left + width]


def center_crop(img, output_size):
    """A centred (h, w) box (an int for a square), its corner rounded as Paddle's int(round((H - h) / 2))."""
    _check_image("center_crop", img)
    if isinstance(output_size, numbers.Number):
        output_size = (int(output_size), int(output_size))
    w, h = _image_size(img)
    th, tw = output_size
    return crop(img, int(round((h - th) / 2.0)), int(round((w - tw) / 2.0)), th, tw)


def hflip(img):
    """Mirror left to right."""
    _check_image("hflip", img)
    return _pil().hflip(img) if _is_pil_image(img) else img[:, ::-1].copy()


def vflip(img):
    """Mirror top to bottom."""
    _check_image("vflip", img)
    return _pil().vflip(img) if _is_pil_image(img) else img[::-1].copy()


def _lookup(where: str, img, table: np.ndarray) -> np.ndarray:
    """cv2.LUT: 8-bit images only, each value replaced by table[value]."""
    _check_image(where, img)
    if img.dtype != np.uint8:
        raise TypeError(f"{where}: expected a uint8 image (cv2.LUT), got {img.dtype}")
    return table.clip(0, 255).astype(np.uint8)[img]


def adjust_brightness(img, brightness_factor):
    """Each value times the factor, clipped to [0, 255] and truncated (0 black, 1 the image itself); a PIL
    image by ImageEnhance.Brightness."""
    if _is_pil_image(img):
        return _pil().adjust_brightness(img, brightness_factor)
    return _lookup("adjust_brightness", img, np.arange(256) * brightness_factor)


def adjust_contrast(img, contrast_factor):
    """(value - 74) * factor + 74, clipped and truncated: Paddle's cv2 contrast pivots on 74; a PIL image by
    ImageEnhance.Contrast, which pivots on the picture's mean grey."""
    if _is_pil_image(img):
        return _pil().adjust_contrast(img, contrast_factor)
    return _lookup("adjust_contrast", img, (np.arange(256) - 74) * contrast_factor + 74)


def adjust_saturation(img, saturation_factor):
    """As Paddle 2.0's cv2 backend: blends with grey (read as BGR) by an alpha drawn from
    np.random.uniform(max(0, 1 - factor), 1 + factor), not by the factor itself. A PIL image by
    ImageEnhance.Color, by the factor itself."""
    _check_image("adjust_saturation", img)
    if _is_pil_image(img):
        return _pil().adjust_saturation(img, saturation_factor)
    dtype = img.dtype
    data = img.astype(np.float32)
    alpha = np.random.uniform(max(0, 1 - saturation_factor), 1 + saturation_factor)
    gray = (data[..., 2] * 0.299 + data[..., 1] * 0.587 + data[..., 0] * 0.114)[..., None]
    return (data * alpha + gray * (1 - alpha)).clip(0, 255).astype(dtype)


def adjust_hue(img, hue_factor):
    """Shift the 8-bit hue by uint8(hue_factor * 255), wrapping (a negative factor wraps, -0.3 adds 180);
    factor in [-0.5, 0.5]. Arrays: OpenCV's COLOR_BGR2HSV_FULL; PIL images: Pillow's HSV."""
    _check_image("adjust_hue", img)
    if not -0.5 <= hue_factor <= 0.5:
        raise ValueError(f"adjust_hue: hue_factor is not in [-0.5, 0.5], got {hue_factor}")
    shift = np.array(hue_factor * 255).astype(np.int64).astype(np.uint8)
    if _is_pil_image(img):
        return _pil().adjust_hue(img, shift)
    dtype = img.dtype
    hsv = _kernels.bgr_to_hsv_full(img.astype(np.uint8))
    hsv[..., 0] += shift
    return _kernels.hsv_full_to_bgr(hsv).astype(dtype)


def _expanded_size(w: int, h: int, angle: float, center) -> tuple[int, int]:
    """The (w, h) that holds the whole rotated image, by Paddle's corner arithmetic."""
    a = -math.radians(angle)
    m = [round(math.cos(a), 15), round(math.sin(a), 15), 0.0, round(-math.sin(a), 15), round(math.cos(a), 15), 0.0]
    m[2] = m[0] * -center[0] + m[1] * -center[1] + center[0]
    m[5] = m[3] * -center[0] + m[4] * -center[1] + center[1]
    xs = [m[0] * x + m[1] * y + m[2] for x, y in ((0, 0), (w, 0), (w, h), (0, h))]
    ys = [m[3] * x + m[4] * y + m[5] for x, y in ((0, 0), (w, 0), (w, h), (0, h))]
    return math.ceil(max(xs)) - math.floor(min(xs)), math.ceil(max(ys)) - math.floor(min(ys))


def rotate(img, angle, interpolation="nearest", expand=False, center=None, fill=0):
    """Counter-clockwise by angle degrees about center (default the image centre (w / 2, h / 2)), as
    cv2.getRotationMatrix2D and warpAffine; expand grows the canvas to hold every corner; outside reads fill.
    A PIL image by Image.rotate ('nearest', 'bilinear' or 'bicubic')."""
    _check_image("rotate", img)
    if _is_pil_image(img):
        _pil().check_filter("rotate", interpolation, _pil().ROTATE_FILTERS)
        return _pil().rotate(img, angle, interpolation, expand, center, fill)
    _kernels.check_interpolation("rotate", interpolation)
    h, w = img.shape[:2]
    if center is None:
        center = (w / 2.0, h / 2.0)
    alpha, beta = math.cos(math.radians(angle)), math.sin(math.radians(angle))
    cx, cy = center
    matrix = np.array([[alpha, beta, (1 - alpha) * cx - beta * cy], [-beta, alpha, beta * cx + (1 - alpha) * cy]])
    if expand:
        nw, nh = _expanded_size(w, h, angle, center)
        matrix[0, 2] += (nw - w) * 0.5
        matrix[1, 2] += (nh - h) * 0.5
        w, h = int(nw), int(nh)
    return _keep_channels(img, _kernels.warp_affine(_hwc(img), matrix, w, h, interpolation, fill))


def to_grayscale(img, num_output_channels=1):
    """RGB to grey (COLOR_RGB2GRAY), as (H, W, 1) or repeated into 3 equal channels; a PIL image by
    convert('L'), an 'L' image or an 'RGB' one of equal channels."""
    _check_image("to_grayscale", img)
    if num_output_channels not in (1, 3):
        raise ValueError(f"to_grayscale: num_output_channels should be either 1 or 3, got {num_output_channels}")
    if _is_pil_image(img):
        return _pil().to_grayscale(img, num_output_channels)
    gray = _kernels.rgb_to_gray(img)[:, :, None]
    return gray if num_output_channels == 1 else np.repeat(gray, 3, axis=2)


def normalize(img, mean, std, data_format="CHW", to_rgb=False):
    """(img - mean) / std per channel; arrays and PIL images (read as HWC) in float32 (to_rgb reverses the
    last axis first, as Paddle's), Tensors with Tensor arithmetic (to_rgb ignored, as Paddle's)."""
    if _is_pil_image(img):
        img = np.array(img).astype(np.float32)
    if isinstance(img, np.ndarray):
        shape = (-1, 1, 1) if data_format == "CHW" else (1, 1, -1)
        mean = np.float32(np.array(mean).reshape(shape))
        std = np.float32(np.array(std).reshape(shape))
        return ((img[..., ::-1] if to_rgb else img) - mean) / std
    if not hasattr(img, "numpy"):
        _check_image("normalize", img)
    mean, std = np.asarray(mean, dtype="float32"), np.asarray(std, dtype="float32")
    if data_format == "CHW":
        mean, std = mean.reshape(-1, 1, 1), std.reshape(-1, 1, 1)
    return (img - _paddle_to_tensor(mean)) / _paddle_to_tensor(std)
