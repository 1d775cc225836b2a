"""Distributed training: the Fleet API, role makers and the launcher."""

from . import fleet

__all__ = ["fleet"]
