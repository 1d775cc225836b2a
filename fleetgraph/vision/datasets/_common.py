"""What Paddle 2.0's vision datasets share: the mode check, the image in the asked backend, the transform."""

from __future__ import annotations

import numpy as np

from ...ir import get_default_dtype
from ..image import check_backend, pillow


def check_mode(where: str, mode: str, modes: tuple[str, ...]) -> str:
    if mode.lower() not in modes:
        raise ValueError(f"{where}: mode should be one of {list(modes)}, got {mode!r}")
    return mode.lower()


def need_source(where: str, argument: str, download: bool) -> None:
    """Paddle downloads what is not given; fleetgraph reads Paddle's cache or a stand-in, so only
    download=False with nothing given is refused, as Paddle refuses it."""
    if not download:
        raise ValueError(f"{where}: {argument} is not set and downloading automatically is disabled")


class ImageSamples:
    """Mixin: backend from the argument or the global setting; pictures out as PIL images ('pil',
    Pillow needed) or arrays of the default dtype ('cv2'), after the transform."""

    def _init_backend(self, backend) -> None:
        self.backend = check_backend(type(self).__name__, backend)
        if self.backend == "pil":
            pillow(f"{type(self).__name__}(backend='pil')")
        self.dtype = get_default_dtype()  # as Paddle's, when the dataset is made

    def _picture(self, array, pil_mode: str | None = None):
        """array: uint8-valued HWC (or HW) pixels, or with 'pil' a picture Pillow opened; the transform sees
        what the backend gives."""
        if self.backend == "pil":
            image = array
            if isinstance(array, np.ndarray):
                image = pillow(type(self).__name__).fromarray(array.astype("uint8"), mode=pil_mode)
            return image if self.transform is None else self.transform(image)
        image = array if self.transform is None else self.transform(array)
        return image.astype(self.dtype)
