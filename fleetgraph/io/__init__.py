"""`paddle.io`: DataLoader (from a dataset, in worker processes or not, or from a Python generator),
datasets and samplers."""

from __future__ import annotations

from .dataset import ChainDataset, ComposeDataset, Dataset, IterableDataset, TensorDataset
from .loader import DataLoader
from .map_loader import default_collate_fn
from .sampler import (
    BatchSampler,
    DistributedBatchSampler,
    RandomSampler,
    Sampler,
    SequenceSampler,
    WeightedRandomSampler,
)
from .worker import get_worker_info

__all__ = [
    "BatchSampler",
    "ChainDataset",
    "ComposeDataset",
    "DataLoader",
    "Dataset",
    "DistributedBatchSampler",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequenceSampler",
    "TensorDataset",
    "WeightedRandomSampler",
    "default_collate_fn",
    "get_worker_info",
]
