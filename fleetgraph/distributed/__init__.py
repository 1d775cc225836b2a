"""Distributed training: the Fleet API, role makers, the launcher and the file datasets."""

from ..data import InMemoryDataset, QueueDataset
from . import fleet

__all__ = ["InMemoryDataset", "QueueDataset", "fleet"]
