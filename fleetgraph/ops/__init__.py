"""Op declarations, one family per module; importing this package registers them all."""

from . import activation, collective, distributed, loss, math, metric, nn, optimizer, tensor  # noqa: F401
from .selected_rows import SelectedRows

__all__ = ["SelectedRows"]
