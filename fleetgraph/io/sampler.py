"""`paddle.io`'s samplers (Paddle 2.0's python/paddle/fluid/dataloader/sampler.py and
batch_sampler.py): iterables of a dataset's indices, and of batches of them."""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from ..dygraph.parallel import ParallelEnv
from ..dygraph.tensor import Tensor
from ..ir import FleetgraphError, FleetgraphTypeError


class Sampler:
    """The base of the samplers: `__iter__` gives indices of `data_source`."""

    def __init__(self, data_source=None) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        raise NotImplementedError(f"{type(self).__name__}: a Sampler defines __iter__()")


class SequenceSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """A permutation of the indices each pass, or num_samples indices drawn with replacement, from
    NumPy's global random state (np.random.seed repeats them) as Paddle's; `generator`, an iterator
    of indices, replaces the draw: its first num_samples indices are the pass."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None) -> None:
        if not isinstance(replacement, bool):
            raise FleetgraphTypeError(f"RandomSampler: replacement={replacement!r}; expected a bool")
        if num_samples is not None and not replacement:
            raise FleetgraphError("RandomSampler: num_samples is for replacement=True; expected None without it")
        self.data_source, self.replacement, self.generator = data_source, replacement, generator
        self._num_samples = num_samples
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise FleetgraphError(f"RandomSampler: num_samples={self.num_samples!r}; expected a positive integer")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        if self.generator:
            for _ in range(self.num_samples):
                try:
                    yield next(self.generator)
                except StopIteration:
                    return
            return
        n = len(self.data_source)
        if self.replacement:
            yield from np.random.choice(n, self.num_samples, replace=True).tolist()
        else:
            yield from np.random.choice(n, n, replace=False).tolist()

    def __len__(self) -> int:
        return self.num_samples


class WeightedRandomSampler(Sampler):
    """num_samples indices drawn with probability proportional to `weights` (1-D; a 2-D array draws
    num_samples for each row, one after the other)."""

    def __init__(self, weights, num_samples, replacement=True) -> None:
        if not isinstance(num_samples, int) or num_samples <= 0:
            raise FleetgraphError(f"WeightedRandomSampler: num_samples={num_samples!r}; expected a positive integer")
        if not isinstance(replacement, bool):
            raise FleetgraphError(f"WeightedRandomSampler: replacement={replacement!r}; expected a bool")
        self.weights, self.num_samples, self.replacement = weights, num_samples, replacement

    def _rows(self) -> np.ndarray:
        weights = self.weights.numpy() if isinstance(self.weights, Tensor) else np.asarray(self.weights, dtype=float)
        if weights.ndim not in (1, 2):
            raise FleetgraphError(f"WeightedRandomSampler: weights of shape {weights.shape}; expected 1-D or 2-D")
        weights = weights.reshape(-1, weights.shape[-1])
        if not np.all(np.isfinite(weights)) or np.any(weights < 0):
            raise FleetgraphError("WeightedRandomSampler: weights must be finite and not negative")
        positive = np.sum(weights > 0, axis=1)
        if np.any(positive == 0) or (not self.replacement and np.any(positive < self.num_samples)):
            raise FleetgraphError(
                f"WeightedRandomSampler: rows with {positive.min()} positive weights; expected at least "
                f"{1 if self.replacement else self.num_samples} (num_samples without replacement)"
            )
        return weights / weights.sum(axis=1, keepdims=True)

    def __iter__(self) -> Iterator[int]:
        rows = self._rows()
        draws = [np.random.choice(rows.shape[1], self.num_samples, self.replacement, p) for p in rows]
        return iter(np.array(draws).reshape(-1).tolist())

    def __len__(self) -> int:
        shape = np.shape(self.weights)
        return self.num_samples * (int(np.prod(shape)) // shape[-1])


class BatchSampler(Sampler):
    """Lists of indices, batch_size at a time, from `sampler` (or the dataset's indices, shuffled or not)."""

    def __init__(self, dataset=None, sampler=None, shuffle=False, batch_size=1, drop_last=False) -> None:
        if (dataset is None) == (sampler is None):
            both = "both" if dataset is not None else "neither"
            raise FleetgraphError(f"BatchSampler: expected either dataset or sampler, got {both}")
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
