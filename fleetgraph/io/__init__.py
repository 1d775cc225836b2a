"""`paddle.io`: DataLoader (from a dataset, or from a Python generator), datasets and samplers."""

from __future__ import annotations

from .loader import DataLoader
from .map_loader import (
    BatchSampler,
    Dataset,
    DistributedBatchSampler,
    IterableDataset,
    RandomSampler,
    SequenceSampler,
    TensorDataset,
    default_collate_fn,
)

__all__ = [
    "BatchSampler",
    "DataLoader",
    "Dataset",
    "DistributedBatchSampler",
    "IterableDataset",
    "RandomSampler",
    "SequenceSampler",
    "TensorDataset",
    "default_collate_fn",
]
