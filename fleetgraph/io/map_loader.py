"""`paddle.io.DataLoader(dataset, ...)`: batches of a map-style or iterable dataset, as Tensors in
dynamic mode or feed dicts for a static program.

Steps of one pass (`iter(loader)`):
  1. the batch sampler gives each batch's indices (`BatchSampler` over a `SequenceSampler`, or a
     `RandomSampler` with shuffle=True; `DistributedBatchSampler` gives each rank its share); an
     `IterableDataset` is read in order, batch_size samples at a time;
  2. `collate_fn` (by default `default_collate_fn`) stacks the samples' fields along a new first axis:
     a sample is an array, a number, or a tuple, list or dict of them;
  3. dynamic mode: each field becomes a Tensor (stop_gradient=True), the batch a list of them;
     static mode: the fields go to `feed_list`'s variables in order, one feed dict a batch (in a list
     of one, one per place, as from_generator's loaders give them).
Batches are made in the iterating thread: `num_workers` is accepted and has no effect (no worker
processes), as `use_shared_memory` and `timeout`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence

import numpy as np

from ..dygraph.mode import in_dynamic_mode
from ..dygraph.parallel import ParallelEnv
from ..dygraph.tensor import Tensor
from ..executor import check_feed
from ..ir import FleetgraphError, FleetgraphTypeError
from ..ir.program import Variable


class Dataset:
    """A map-style dataset: `__getitem__(index)` gives sample `index`, `__len__` how many there are."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__}: a Dataset defines __getitem__(index)")

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__}: a Dataset defines __len__()")


class IterableDataset(Dataset):
    """A dataset read in order: `__iter__` gives its samples."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__}: an IterableDataset defines __iter__()")

    def __getitem__(self, index):
        raise FleetgraphError(f"{type(self).__name__}: an IterableDataset is read in order, not indexed")


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


class SequenceSampler:
    def __init__(self, data_source) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler:
    """A permutation of the indices each pass (`generator`: a seed or a numpy Generator)."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None) -> None:
        self.data_source, self.replacement = data_source, replacement
        self.num_samples = len(data_source) if num_samples is None else int(num_samples)
        self._rng = generator if isinstance(generator, np.random.Generator) else np.random.default_rng(generator)

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        if self.replacement:
            return iter(self._rng.integers(0, n, self.num_samples).tolist())
        return iter(self._rng.permutation(n)[: self.num_samples].tolist())

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler:
    """Lists of indices, batch_size at a time, from `sampler` (or the dataset's indices, shuffled or not)."""

    def __init__(self, dataset=None, sampler=None, shuffle=False, batch_size=1, drop_last=False) -> None:
        if (dataset is None) == (sampler is None):
            raise FleetgraphError("BatchSampler: expected either dataset or sampler, got " + _both(dataset, sampler))
        if int(batch_size) < 1:
            raise FleetgraphError(f"BatchSampler: batch_size {batch_size}; expected a positive integer")
        if sampler is None:
            sampler = RandomSampler(dataset) if shuffle else SequenceSampler(dataset)
        self.sampler, self.batch_size, self.drop_last = sampler, int(batch_size), bool(drop_last)

    def __iter__(self) -> Iterator[list[int]]:
        batch = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)


class DistributedBatchSampler(BatchSampler):
    """Each of `num_replicas` ranks gets every num_replicas-th sample of the (padded) index list, as
    Paddle's: the indices repeat from the start so every rank has as many; shuffled by epoch."""

    def __init__(self, dataset, batch_size, num_replicas=None, rank=None, shuffle=False, drop_last=False) -> None:
        super().__init__(dataset=dataset, batch_size=batch_size, drop_last=drop_last)
        env = ParallelEnv()  # the launcher's PADDLE_TRAINER_ID / PADDLE_TRAINERS_NUM
        self.nranks = int(num_replicas if num_replicas is not None else env.world_size)
        self.local_rank = int(rank if rank is not None else env.rank)
        if not 0 <= self.local_rank < self.nranks:
            raise FleetgraphError(f"DistributedBatchSampler: rank {self.local_rank}; expected 0..{self.nranks - 1}")
        self.dataset, self.shuffle, self.epoch = dataset, bool(shuffle), 0
        self.num_samples = math.ceil(len(dataset) / self.nranks)

    def set_epoch(self, epoch: int) -> None:
        self.epoch = int(epoch)

    def _indices(self) -> list[int]:
        n = len(self.dataset)
        order = np.random.default_rng(self.epoch).permutation(n) if self.shuffle else np.arange(n)
        padded = np.resize(order, self.num_samples * self.nranks)  # repeats from the start
        return padded[self.local_rank :: self.nranks].tolist()

    def __iter__(self) -> Iterator[list[int]]:
        self.sampler = self._indices()
        yield from super().__iter__()

    def __len__(self) -> int:
        n = self.num_samples
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)


def default_collate_fn(batch: list):
    """Samples -> one batch: fields stacked along a new first axis, in the samples' structure."""
    first = batch[0]
    if isinstance(first, Mapping):
        return {k: default_collate_fn([s[k] for s in batch]) for k in first}
    if isinstance(first, Sequence) and not isinstance(first, (str, bytes)):
        if any(len(s) != len(first) for s in batch):
            raise FleetgraphError(
                f"DataLoader: samples with {sorted({len(s) for s in batch})} fields; expected one count"
            )
        return [default_collate_fn(list(fields)) for fields in zip(*batch)]
    return np.stack([s.numpy() if isinstance(s, Tensor) else np.asarray(s) for s in batch])


class MapDataLoader:
    """What `paddle.io.DataLoader(dataset, ...)` returns: iterate it once per epoch."""

    def __init__(
        self,
        dataset,
        feed_list=None,
        places=None,
        return_list=True,
        batch_sampler=None,
        batch_size=1,
        shuffle=False,
        drop_last=False,
        collate_fn=None,
        num_workers=0,
        **unused,
    ) -> None:
        if not isinstance(dataset, Dataset) and not hasattr(dataset, "__getitem__"):
            raise FleetgraphError(f"DataLoader: dataset is a {type(dataset).__name__}; expected a paddle.io.Dataset")
        self.dataset, self.collate_fn = dataset, collate_fn or default_collate_fn
        self.return_list, self._dynamic = bool(return_list), in_dynamic_mode()
        self.feed_list = list(feed_list or [])
        if not self._dynamic and not self.feed_list:
            raise FleetgraphError(
                "DataLoader(dataset): a static program reads batches through variables; expected "
                "feed_list=[...] (or paddle.disable_static() for Tensors)"
            )
        if isinstance(dataset, IterableDataset):
            if shuffle or batch_sampler is not None:
                raise FleetgraphError("DataLoader: an IterableDataset is read in order; expected no shuffle or sampler")
            self.batch_sampler, self._batch_size, self._drop_last = None, int(batch_size), bool(drop_last)
        elif batch_sampler is not None:
            if batch_size != 1 or shuffle or drop_last:
                raise FleetgraphError(
                    "DataLoader: batch_sampler decides the batches; expected batch_size, shuffle and drop_last unset"
                )
            self.batch_sampler = batch_sampler
        else:
            self.batch_sampler = BatchSampler(dataset, shuffle=shuffle, batch_size=batch_size, drop_last=drop_last)

    def __len__(self) -> int:
        if self.batch_sampler is None:
            raise FleetgraphTypeError("DataLoader: an IterableDataset has no length")  # TypeError, as len() expects
        return len(self.batch_sampler)

    def __iter__(self):
        for samples in self._samples():  # step 1
            yield self._deliver(self.collate_fn(samples))  # steps 2 and 3

    def __call__(self):
        return iter(self)

    def _samples(self) -> Iterator[list]:
        if self.batch_sampler is not None:
            for indices in self.batch_sampler:
                yield [self.dataset[i] for i in indices]
            return
        batch = []
        for sample in self.dataset:
            batch.append(sample)
            if len(batch) == self._batch_size:
                yield batch
                batch = []
        if batch and not self._drop_last:
            yield batch

    def _deliver(self, batch):
        fields = batch if isinstance(batch, list) else [batch]
        if self._dynamic:
            return [Tensor(np.asarray(f)) if not isinstance(f, dict) else f for f in fields]
        if len(fields) != len(self.feed_list):
            raise FleetgraphError(
                f"DataLoader: a batch has {len(fields)} fields for {len(self.feed_list)} feed_list variables; "
                "expected one each"
            )
        feed = {}
        for var, value in zip(self.feed_list, fields):
            name = var.name if isinstance(var, Variable) else str(var)
            feed[name] = check_feed(var, value) if isinstance(var, Variable) else value
        return [list(feed.values())] if self.return_list else [feed]


def _both(dataset, sampler) -> str:
    return "both" if dataset is not None and sampler is not None else "neither"
