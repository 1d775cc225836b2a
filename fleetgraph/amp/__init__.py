"""`paddle.amp`: automatic mixed precision (Paddle 2.0's python/paddle/amp)."""

__all__: list[str] = []
