"""`fluid.dataset`: the Dataset classes under their 1.8 module path."""

from .. import absent
from ..data import DatasetFactory, InMemoryDataset, QueueDataset

__getattr__ = absent.getattr_for(__name__)

__all__ = ["DatasetFactory", "InMemoryDataset", "QueueDataset"]
