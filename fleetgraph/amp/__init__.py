"""`paddle.amp`: automatic mixed precision (Paddle 2.0's python/paddle/amp, with later Paddle's level
and dtype). float16 behaves as Paddle's CPU build: autocast and loss scaling need a CUDAPlace, so both
warn and make no effect. bfloat16 autocast and decorate (O2, float32 master weights) run on the CPU."""

from .auto_cast import auto_cast
from .decorate import decorate
from .grad_scaler import GradScaler

__all__ = ["GradScaler", "auto_cast", "decorate"]
