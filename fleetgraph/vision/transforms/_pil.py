"""The pixel operations behind paddle.vision.transforms' 'pil' backend (Paddle 2.0's functional_pil), done
by Pillow itself: its resample filters, ImageOps and ImageEnhance. functional.py checks the arguments and
does the size arithmetic both backends share, and imports this module only for a PIL image, so Pillow is
needed only by those who hand one over."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageEnhance, ImageOps

FILTERS = {
    "nearest": Image.Resampling.NEAREST,
    "bilinear": Image.Resampling.BILINEAR,
    "bicubic": Image.Resampling.BICUBIC,
    "box": Image.Resampling.BOX,
    "lanczos": Image.Resampling.LANCZOS,
    "hamming": Image.Resampling.HAMMING,
}
ROTATE_FILTERS = ("nearest", "bilinear", "bicubic")  # Image.rotate takes no other filter


def check_filter(where: str, interpolation: str, names=tuple(FILTERS)) -> None:
    if interpolation not in names:
        raise ValueError(
            f"{where}: interpolation for a PIL image should be one of {list(names)}, got {interpolation!r}"
        )


def to_array(pic: Image.Image) -> np.ndarray:
    """HWC pixels in the dtype Paddle's to_tensor reads: 32-bit integers for 'I' and 'I;16', float32 for
    'F', 0/255 bytes for a '1' bilevel image, bytes otherwise (YCbCr counts three channels)."""
    if pic.mode in ("I", "I;16"):
        data = np.array(pic, np.int32)
    elif pic.mode == "F":
        data = np.array(pic, np.float32)
    elif pic.mode == "1":
        data = np.array(pic, np.uint8) * np.uint8(255)
    else:
        data = np.array(pic)
    channels = 3 if pic.mode == "YCbCr" else 1 if pic.mode == "I;16" else len(pic.mode)
    return data.reshape(pic.size[1], pic.size[0], channels)


def resize(img: Image.Image, oh: int, ow: int, interpolation: str) -> Image.Image:
    return img.resize((ow, oh), FILTERS[interpolation])


def expand(img: Image.Image, widths: tuple[int, int, int, int], fill) -> Image.Image:
    """ImageOps.expand by widths (left, top, right, bottom); a palette image keeps its palette."""
    return _with_palette_of(img, ImageOps.expand(img, border=widths, fill=fill))


def with_pixels(img: Image.Image, pixels: np.ndarray) -> Image.Image:
    """A new image of pixels, in img's palette if it has one (pixels are then palette indices)."""
    return _with_palette_of(img, Image.fromarray(pixels))


def _with_palette_of(img: Image.Image, out: Image.Image) -> Image.Image:
    if img.mode == "P":
        out.putpalette(img.getpalette())
    return out


def crop(img: Image.Image, top: int, left: int, height: int, width: int) -> Image.Image:
    """Image.crop: a box reaching past the picture reads zeros there (NumPy slicing would shrink it)."""
    return img.crop((left, top, left + width, top + height))


def hflip(img: Image.Image) -> Image.Image:
    return img.transpose(Image.Transpose.FLIP_LEFT_RIGHT)


def vflip(img: Image.Image) -> Image.Image:
    return img.transpose(Image.Transpose.FLIP_TOP_BOTTOM)


def adjust_brightness(img: Image.Image, factor: float) -> Image.Image:
    """ImageEnhance.Brightness: a blend with black."""
    return ImageEnhance.Brightness(img).enhance(factor)


def adjust_contrast(img: Image.Image, factor: float) -> Image.Image:
    """ImageEnhance.Contrast: a blend with the picture's mean grey (the cv2 backend pivots on 74)."""
    return ImageEnhance.Contrast(img).enhance(factor)


def adjust_saturation(img: Image.Image, factor: float) -> Image.Image:
    """ImageEnhance.Color: a blend with the picture's grey by the factor itself (the cv2 backend draws it)."""
    return ImageEnhance.Color(img).enhance(factor)


def adjust_hue(img: Image.Image, shift: np.uint8) -> Image.Image:
    """Add shift to Pillow's 8-bit HSV hue, wrapping; grey, bilevel, integer and float images unchanged."""
    if img.mode in {"L", "1", "I", "F"}:
        return img
    h, s, v = img.convert("HSV").split()
    hue = Image.fromarray(np.array(h, dtype=np.uint8) + shift)
    return Image.merge("HSV", (hue, s, v)).convert(img.mode)


def rotate(img: Image.Image, angle: float, interpolation: str, expand: bool, center, fill) -> Image.Image:
    """Image.rotate; an int fill is every channel's (Paddle's (fill,) * 3; a one-band image takes the int,
    as the Pillow Paddle 2.0 ran on did, where today's refuses a 3-tuple)."""
    if isinstance(fill, int) and len(img.getbands()) > 1:
        fill = (fill,) * 3
    return img.rotate(angle, FILTERS[interpolation], expand, center, fillcolor=fill)


def to_grayscale(img: Image.Image, num_output_channels: int) -> Image.Image:
    """convert('L') (ITU-R 601-2: L = R * 299/1000 + G * 587/1000 + B * 114/1000), or that grey in three
    equal RGB channels."""
    gray = img.convert("L")
    if num_output_channels == 1:
        return gray
    return Image.fromarray(np.dstack([np.array(gray, dtype=np.uint8)] * 3))
