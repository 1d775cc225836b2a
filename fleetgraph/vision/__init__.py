"""`paddle.vision`: the image backend setting, and Paddle 2.0's vision models, transforms and datasets."""

from __future__ import annotations

from . import models, transforms
from .models import *  # noqa: F401,F403
from .transforms import *  # noqa: F401,F403
from .transforms import functional

_BACKENDS = ("pil", "cv2", "tensor")
_backend = "pil"


def set_image_backend(backend: str) -> None:
    """'pil', 'cv2' or 'tensor', as Paddle's: kept and returned by get_image_backend. Our datasets hand
    out arrays whichever is set."""
    global _backend
    if backend not in _BACKENDS:
        raise ValueError(f"set_image_backend: expected one of {list(_BACKENDS)}, got {backend!r}")
    _backend = backend


def get_image_backend() -> str:
    return _backend


__all__ = [
    "functional", "get_image_backend", "models", "set_image_backend", "transforms", *models.__all__, *transforms.__all__
]  # fmt: skip
