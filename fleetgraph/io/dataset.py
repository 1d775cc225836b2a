"""`paddle.io`'s datasets (Paddle 2.0's python/paddle/fluid/dataloader/dataset.py): the map-style
and iterable bases, and the datasets made of other datasets or of arrays."""

from __future__ import annotations

import numpy as np

from ..dygraph.tensor import Tensor
from ..ir import FleetgraphError


class LoaderError(FleetgraphError, RuntimeError):
    """A dataset or loader used as it cannot be, or a worker lost, where Paddle raises RuntimeError:
    both `except`s catch it."""


class Dataset:
    """A map-style dataset: `__getitem__(index)` gives sample `index`, `__len__` how many there are."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__}: a Dataset defines __getitem__(index)")

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__}: a Dataset defines __len__()")


class IterableDataset(Dataset):
    """A dataset read in order: `__iter__` gives its samples. In a DataLoader worker process each
    worker iterates its own copy: split the work with `get_worker_info()`."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__}: an IterableDataset defines __iter__()")

    def __getitem__(self, index):
        raise LoaderError(f"{type(self).__name__}: an IterableDataset is read in order, not indexed")

    def __len__(self) -> int:
        raise LoaderError(f"{type(self).__name__}: an IterableDataset is read in order and has no length")


class TensorDataset(Dataset):
    """Sample i is the i-th row of each of the given arrays (or Tensors), which have one length."""

    def __init__(self, tensors) -> None:
        self.tensors = [t.numpy() if isinstance(t, Tensor) else np.asarray(t) for t in tensors]
        lengths = {len(t) for t in self.tensors}
        if len(lengths) != 1:
            raise FleetgraphError(f"TensorDataset: arrays of lengths {sorted(lengths)}; expected one length")

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return len(self.tensors[0])


def _fields(sample) -> list:
    return list(sample) if isinstance(sample, (list, tuple)) else [sample]


class ComposeDataset(Dataset):
    """Map-style datasets of one length side by side: sample i is the fields of each one's sample i,
    in one flat tuple."""

    def __init__(self, datasets) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise FleetgraphError("ComposeDataset: no datasets; expected at least one")
        for i, dataset in enumerate(self.datasets):
            if not isinstance(dataset, Dataset) or isinstance(dataset, IterableDataset):
                raise FleetgraphError(
                    f"ComposeDataset: datasets[{i}] is a {type(dataset).__name__}; "
                    "expected a map-style paddle.io.Dataset"
                )
        lengths = [len(d) for d in self.datasets]
        if len(set(lengths)) != 1:
            raise FleetgraphError(f"ComposeDataset: datasets of lengths {lengths}; expected one length")

    def __len__(self) -> int:
        return len(self.datasets[0])

    def __getitem__(self, index):
        return tuple(field for dataset in self.datasets for field in _fields(dataset[index]))


class ChainDataset(IterableDataset):
    """Iterable datasets one after the other: all of the first's samples, then the second's, ..."""

    def __init__(self, datasets) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise FleetgraphError("ChainDataset: no datasets; expected at least one")
        for i, dataset in enumerate(self.datasets):
            if not isinstance(dataset, IterableDataset):
                raise FleetgraphError(
                    f"ChainDataset: datasets[{i}] is a {type(dataset).__name__}; expected a paddle.io.IterableDataset"
                )

    def __iter__(self):
        for dataset in self.datasets:
            yield from dataset
