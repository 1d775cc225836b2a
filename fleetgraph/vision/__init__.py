"""`paddle.vision`: the image backend setting, and Paddle 2.0's vision models, transforms and datasets."""

from __future__ import annotations

from . import datasets, image, models, transforms
from .datasets import *  # noqa: F401,F403
from .image import get_image_backend, image_load, set_image_backend
from .models import *  # noqa: F401,F403
from .transforms import *  # noqa: F401,F403
from .transforms import functional

__all__ = [
    "datasets", "functional", "get_image_backend", "image", "image_load", "models", "set_image_backend",
    "transforms", *datasets.__all__, *models.__all__, *transforms.__all__,
]  # fmt: skip

from .. import absent  # noqa: E402

__getattr__ = absent.getattr_for(__name__)  # vision.ops: the detection ops
