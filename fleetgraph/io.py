"""`paddle.io`: the DataLoader that feeds static programs from Python generators."""

from __future__ import annotations

from .data.loader import DataLoader

__all__ = ["DataLoader"]
