"""`fluid.reader`: PyReader, the DataLoader (with `from_dataset`) and the names Paddle 1.8's module
imports, under their 1.8 module path."""

from __future__ import annotations

import atexit
import logging
import queue
import signal
import sys

from .. import absent
from ..data import DatasetBase, InMemoryDataset
from ..data.feeder import DataFeeder
from ..executor import global_scope
from ..executor.place import Place
from ..io import BatchSampler, Dataset, default_collate_fn
from ..io import DataLoader as _DataLoader
from ..ir import FleetgraphValueError, Program, Variable, default_main_program, default_startup_program, program_guard
from ..ir.unique_name import UniqueNameGenerator
from ..layers.io import double_buffer, monkey_patch_reader_methods
from ..static import cpu_places
from .framework import in_dygraph_mode

# -- DataLoader.from_dataset -----------------------------------------------------------------------


class DataLoader(_DataLoader):
    """`fluid.io.DataLoader`: paddle.io.DataLoader, and `from_dataset` over a Dataset's files."""

    @staticmethod
    def from_dataset(dataset, places, drop_last: bool = True) -> DatasetLoader:
        return DatasetLoader(dataset, places, drop_last)


class DatasetLoader:
    """Paddle's DatasetLoader: an iterable over a QueueDataset's or an InMemoryDataset's batches,
    yielding one feed dict per place at each step. The dataset reads with one thread per place;
    with drop_last, a batch of fewer than batch_size samples is left out."""

    def __init__(self, dataset, places, drop_last: bool) -> None:
        if not isinstance(dataset, DatasetBase):
            raise FleetgraphValueError(
                f"DataLoader.from_dataset: dataset expected a QueueDataset or an InMemoryDataset, got "
                f"{type(dataset).__name__}"
            )
        if in_dygraph_mode():
            raise FleetgraphValueError("DataLoader.from_dataset: not supported in dygraph mode; expected static mode")
        places = list(places) if isinstance(places, (list, tuple)) else [places]
        if not places or not all(isinstance(p, Place) for p in places):
            raise FleetgraphValueError(f"DataLoader.from_dataset: places expected a list of places, got {places!r}")
        if len(dataset.filelist) < len(places):
            raise FleetgraphValueError(
                f"DataLoader.from_dataset: Filelist number of dataset {len(dataset.filelist)} must be not less "
                f"than place number {len(places)}"
            )
        if dataset.thread_num not in (0, len(places)):
            logging.warning("thread_num %d which is set in Dataset is ignored", dataset.thread_num)
        dataset.set_thread(len(places))
        self._dataset, self._places, self._drop_last = dataset, places, bool(drop_last)
        self._source = None

    def __call__(self) -> DatasetLoader:
        return self

    def __iter__(self) -> DatasetLoader:
        if self._source is not None:
            self._source.close()
        self._source = self._dataset._batch_source()
        return self

    def __next__(self) -> list[dict]:
        group = []
        while len(group) < len(self._places):
            feed = self._source.next()
            if feed is None:
                self._source.close()
                raise StopIteration
            if not self._drop_last or _samples(feed) == self._dataset.batch_size:
                group.append(feed)
        return group


def _samples(feed: dict) -> int:
    value = next(iter(feed.values()))
    levels = getattr(value, "levels", ())
    return len(levels[0]) - 1 if levels else len(value)


# -- PyReader --------------------------------------------------------------------------------------


class PyReader:
    """`fluid.io.PyReader`: Paddle 1.8's name for DataLoader.from_generator, with the data source
    set by decorate_sample_generator / decorate_sample_list_generator / decorate_batch_generator.
    Iterable, `for data in reader(): exe.run(feed=data)`; otherwise start(), runs until
    EOFException, reset()."""

    def __init__(self, feed_list=None, capacity=None, use_double_buffer=True, iterable=True, return_list=False):
        # in dygraph mode Paddle's loader yields lists of Tensors whatever return_list says
        return_list = return_list or in_dygraph_mode()
        self._loader = _DataLoader.from_generator(feed_list, capacity, use_double_buffer, iterable, return_list)

    @property
    def queue(self):
        return self._loader.queue

    @property
    def iterable(self) -> bool:
        return self._loader.iterable

    def __call__(self):
        return self._loader()

    def __iter__(self):
        return iter(self._loader)

    def __next__(self):
        return next(self._loader)

    def start(self) -> None:
        self._loader.start()

    def reset(self) -> None:
        self._loader.reset()

    def decorate_sample_generator(self, sample_generator, batch_size, drop_last=True, places=None) -> None:
        self._loader.set_sample_generator(sample_generator, batch_size, drop_last, places)

    def decorate_sample_list_generator(self, reader, places=None) -> None:
        self._loader.set_sample_list_generator(reader, places)

    def decorate_batch_generator(self, reader, places=None) -> None:
        self._loader.set_batch_generator(reader, places)


class BatchedTensorProvider:
    """Paddle's batch maker for samples of plain (LoD-free) variables: `provider()` yields one list
    of arrays per `batch_size` samples (a last shorter one unless drop_last)."""

    def __init__(self, feed_list, place, batch_size: int, generator, drop_last: bool) -> None:
        if any(v.lod_level != 0 for v in feed_list):
            raise FleetgraphValueError("BatchedTensorProvider: lod_level must be 0 for every variable of feed_list")
        self.place, self.batch_size, self.generator, self.drop_last = place, batch_size, generator, drop_last
        self._feed_list, self._feeder = list(feed_list), DataFeeder(feed_list, place)

    def __call__(self):
        batch = []
        for sample in self.generator():
            batch.append(sample)
            if len(batch) == self.batch_size:
                yield self._done(batch)
                batch = []
        if batch and not self.drop_last:
            yield self._done(batch)

    def _done(self, batch: list) -> list:
        fed = self._feeder.feed(batch)
        return [fed[v.name] for v in self._feed_list]


# -- cleanup at exit -------------------------------------------------------------------------------

# Queues between data-loading processes and this one; what they still hold is dropped at exit, so
# that their feeder threads can end.
multiprocess_queue_set: set = set()


class CleanupFuncRegistrar:
    """Run a function once: at exit, or on the first of the given signals, after which the signal's
    earlier handler runs (or, with none, the process exits, a SIGINT as KeyboardInterrupt)."""

    _executed_func_set: set = set()
    _registered_func_set: set = set()

    @classmethod
    def register(cls, function, signals=()) -> None:
        if not callable(function):
            raise TypeError(f"{function} is not callable object.")

        def run_once():
            if function not in cls._executed_func_set:
                try:
                    function()
                finally:
                    cls._executed_func_set.add(function)

        for sig in set(signals):
            signal.signal(sig, _chained(run_once, signal.getsignal(sig)))
        if function not in cls._registered_func_set:
            atexit.register(run_once)
            cls._registered_func_set.add(function)


def _chained(run_once, previous):
    def on_signal(signum, frame):
        run_once()
        if callable(previous) and previous is not signal.default_int_handler:
            previous(signum, frame)
        elif signum == signal.SIGINT:
            raise KeyboardInterrupt
        else:
            sys.exit(signum)

    return on_signal


def _clear_multiprocess_queue_set() -> None:
    for data_queue in multiprocess_queue_set:
        while True:
            try:
                data_queue.get_nowait()
            except queue.Empty:
                break


CleanupFuncRegistrar.register(_clear_multiprocess_queue_set)

__getattr__ = absent.getattr_for(__name__)

__all__ = [
    "BatchSampler",
    "BatchedTensorProvider",
    "CleanupFuncRegistrar",
    "DataFeeder",
    "DataLoader",
    "Dataset",
    "DatasetBase",
    "InMemoryDataset",
    "Program",
    "PyReader",
    "UniqueNameGenerator",
    "Variable",
    "cpu_places",
    "default_collate_fn",
    "default_main_program",
    "default_startup_program",
    "double_buffer",
    "global_scope",
    "in_dygraph_mode",
    "monkey_patch_reader_methods",
    "multiprocess_queue_set",
    "program_guard",
]
