"""`paddle.io.DataLoader(dataset, ...)`: batches of a map-style or iterable dataset, as Tensors in
dynamic mode, NumPy arrays or feed dicts for a static program.

Steps of one pass (`iter(loader)`):
  1. the batch sampler gives each batch's indices (`BatchSampler` over a `SequenceSampler`, or a
     `RandomSampler` with shuffle=True; `DistributedBatchSampler` gives each rank its share); an
     `IterableDataset` is read in order, batch_size samples at a time;
  2. `collate_fn` (by default `default_collate_fn`) stacks the samples' fields along a new first axis:
     a sample is an array, a number, or a tuple, list or dict of them; with num_workers > 0, steps 1
     and 2 run in worker processes (io/worker.py), each iterable-dataset worker over its own copy;
  3. dynamic mode: each field becomes a Tensor (stop_gradient=True), the batch a list of them;
     static mode: without feed_list, the batch is the list of its NumPy arrays; with it, the fields
     go to feed_list's variables in order: one feed dict a batch (in a list of one, one per place,
     as from_generator's loaders give them), or with return_list=True the list of their values.
`use_buffer_reader` and `use_shared_memory` choose how Paddle moves batches (a prefetch thread,
shared memory between processes); here batches travel through one queue whatever they say.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence

import numpy as np

from ..dygraph.mode import in_dynamic_mode
from ..dygraph.tensor import Tensor
from ..executor import check_feed
from ..ir import FleetgraphError, FleetgraphTypeError
from ..ir.program import Variable
from .dataset import IterableDataset
from .sampler import BatchSampler
from .worker import iterate_in_workers


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
        use_buffer_reader=True,
        use_shared_memory=True,
        timeout=0,
        worker_init_fn=None,
    ) -> None:
        if not hasattr(dataset, "__getitem__"):
            raise FleetgraphError(f"DataLoader: dataset is a {type(dataset).__name__}; expected a paddle.io.Dataset")
        if int(num_workers) < 0 or timeout < 0:
            raise FleetgraphError(
                f"DataLoader: num_workers={num_workers}, timeout={timeout}; expected values not negative"
            )
        self.dataset, self.collate_fn = dataset, collate_fn
        self.return_list, self._dynamic = bool(return_list), in_dynamic_mode()
        self.num_workers, self.timeout, self.worker_init_fn = int(num_workers), timeout, worker_init_fn
        self.feed_list = list(feed_list or [])
        if not self._dynamic and not self.feed_list and not self.return_list:
            raise FleetgraphError(
                "DataLoader(dataset, return_list=False): feed dicts need variables; expected feed_list=[...]"
            )
        # batch_size=None (and no batch_sampler): each sample is delivered alone, its fields unstacked
        self.auto_collate_batch = batch_sampler is not None or batch_size is not None
        self._collate = collate_fn or (default_collate_fn if self.auto_collate_batch else _unchanged)
        self._iterable, self.batch_sampler = isinstance(dataset, IterableDataset), None
        if self._iterable:
            if shuffle or batch_sampler is not None:
                raise FleetgraphError("DataLoader: an IterableDataset is read in order; expected no shuffle or sampler")
            self._batch_size, self._drop_last = batch_size, bool(drop_last)
        elif batch_sampler is not None:
            if batch_size != 1 or shuffle or drop_last:
                raise FleetgraphError(
                    "DataLoader: batch_sampler decides the batches; expected batch_size, shuffle and drop_last unset"
                )
            self.batch_sampler = batch_sampler
        elif batch_size is not None:
            self.batch_sampler = BatchSampler(dataset, shuffle=shuffle, batch_size=batch_size, drop_last=drop_last)

    def __len__(self) -> int:
        if self._iterable:
            raise FleetgraphTypeError("DataLoader: an IterableDataset has no length")  # TypeError, as len() expects
        return len(self.batch_sampler) if self.auto_collate_batch else len(self.dataset)

    def __iter__(self):
        for batch in self._batches():  # steps 1 and 2
            yield self._deliver(batch)  # step 3

    def __call__(self):
        return iter(self)

    def _batches(self) -> Iterator:
        if self._iterable:
            tasks = itertools.repeat(None)
        else:
            tasks = iter(self.batch_sampler if self.auto_collate_batch else range(len(self.dataset)))
        if self.num_workers == 0:
            return _until_drained(self._make_fetch(), tasks)
        return iterate_in_workers(
            self.num_workers, self.dataset, self._make_fetch, tasks, self.worker_init_fn, self.timeout
        )

    def _make_fetch(self):
        """The collated batch of a task: a batch's indices, or one index without auto-collation; for an
        IterableDataset, None: the next batch (or sample) of this process's own pass over it,
        StopIteration at its end."""
        collate, dataset = self._collate, self.dataset
        if not self._iterable:
            if self.auto_collate_batch:
                return lambda indices: collate([dataset[i] for i in indices])
            return lambda index: collate(dataset[index])
        samples = iter(dataset)
        if self.auto_collate_batch:
            samples = _in_batches(samples, int(self._batch_size), self._drop_last)
        return lambda _: collate(next(samples))

    def _deliver(self, batch):
        fields = list(batch) if isinstance(batch, (list, tuple)) else [batch]
        if self._dynamic:
            return [Tensor(np.asarray(f)) if not isinstance(f, dict) else f for f in fields]
        if not self.feed_list:
            return fields
        if len(fields) != len(self.feed_list):
            raise FleetgraphError(
                f"DataLoader: a batch has {len(fields)} fields for {len(self.feed_list)} feed_list variables; "
                "expected one each"
            )
        feed = {}
        for var, value in zip(self.feed_list, fields):
            name = var.name if isinstance(var, Variable) else str(var)
            feed[name] = check_feed(var, value) if isinstance(var, Variable) else value
        return list(feed.values()) if self.return_list else [feed]


def _in_batches(samples: Iterator, batch_size: int, drop_last: bool) -> Iterator[list]:
    """Lists of batch_size samples in order; the short last one unless drop_last."""
    while batch := list(itertools.islice(samples, batch_size)):
        if len(batch) < batch_size and drop_last:
            return
        yield batch


def _unchanged(sample):
    return sample


def _until_drained(fetch, tasks: Iterator) -> Iterator:
    for task in tasks:
        try:
            batch = fetch(task)
        except StopIteration:
            return
        yield batch
