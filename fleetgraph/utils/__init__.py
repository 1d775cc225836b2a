"""`paddle.utils`."""

from ..ir import unique_name

__all__ = ["unique_name"]
