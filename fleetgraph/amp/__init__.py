"""`paddle.amp`: automatic mixed precision (Paddle 2.0's python/paddle/amp), as Paddle's CPU build
behaves: float16 autocast and loss scaling need a CUDAPlace, so both warn and make no effect."""

from .auto_cast import auto_cast
from .grad_scaler import GradScaler

__all__ = ["GradScaler", "auto_cast"]
