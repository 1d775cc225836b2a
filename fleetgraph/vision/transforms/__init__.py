"""`paddle.vision.transforms`: Paddle 2.0's image transforms and their functional forms, on NumPy HWC arrays."""

from . import functional, transforms
from .functional import *  # noqa: F401,F403
from .transforms import *  # noqa: F401,F403

__all__ = transforms.__all__ + functional.__all__
