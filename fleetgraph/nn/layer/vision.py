"""`paddle.nn` layer classes: vision (Paddle 2.0's python/paddle/nn/layer/vision.py)."""

from __future__ import annotations

from .. import functional as F
from .layers import Layer

__all__ = ["PixelShuffle"]


class PixelShuffle(Layer):
    """[N, C * r^2, H, W] -> [N, C, H * r, W * r] (`F.pixel_shuffle`)."""

    def __init__(self, upscale_factor, data_format="NCHW", name=None) -> None:
        super().__init__()
        if not isinstance(upscale_factor, int):
            raise TypeError(f"PixelShuffle: upscale_factor expected an int, got {type(upscale_factor).__name__}")
        if data_format not in ("NCHW", "NHWC"):
            raise ValueError(f"PixelShuffle: data_format expected NCHW or NHWC, got {data_format!r}")
        self._upscale_factor, self._data_format, self._name = upscale_factor, data_format, name

    def forward(self, x):
        return F.pixel_shuffle(x, self._upscale_factor, self._data_format, self._name)
