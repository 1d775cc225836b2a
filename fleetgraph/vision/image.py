"""`paddle.vision.image`: the image backend setting (how vision datasets and image_load decode pictures)
and image_load. Decoding a picture file, and the 'pil' backend, need Pillow, an extra
(pip install 'fleetgraph[vision]'): without it only NumPy .npy pictures load, and everything else is
refused with a reason."""

from __future__ import annotations

import os

import numpy as np

from ..dataset import image as _pictures

__all__ = ["get_image_backend", "image_load", "set_image_backend"]

_BACKENDS = ("pil", "cv2", "tensor")
_backend = "pil"


def set_image_backend(backend: str) -> None:
    """'pil' (datasets hand out PIL images) or 'cv2' (HWC NumPy arrays); 'tensor' is kept for later
    Paddles' scripts. Kept and returned by get_image_backend."""
    global _backend
    if backend not in _BACKENDS:
        raise ValueError(f"set_image_backend: expected one of {list(_BACKENDS)}, got {backend!r}")
    _backend = backend


def get_image_backend() -> str:
    return _backend


def pillow(where: str):
    """The PIL.Image module, or an ImportError naming Pillow's extra and what works without it."""
    return _pictures.pillow(where, ", or use backend='cv2' with NumPy (.npy) pictures")


def check_backend(where: str, backend: str | None) -> str:
    """The backend given, or the global one; Paddle 2.0's datasets know 'pil' and 'cv2' only."""
    backend = get_image_backend() if backend is None else backend
    if backend not in ("pil", "cv2"):
        raise ValueError(f"{where}: expected backend one of ['pil', 'cv2'], got {backend!r}")
    return backend


def image_load(path: str, backend: str | None = None):
    """'pil': a PIL image (Pillow); 'cv2': an HWC uint8 array in BGR order, as cv2.imread gives (decoded
    by Pillow: cv2 is no dependency). A .npy file loads as the array it holds with 'cv2' and no Pillow."""
    backend = check_backend("image_load", backend)
    if backend == "cv2" and os.path.splitext(path)[1].lower() == ".npy":
        return np.load(path)
    image = pillow("image_load")
    if backend == "pil":
        return image.open(path)
    return np.asarray(image.open(path).convert("RGB"))[..., ::-1].copy()
