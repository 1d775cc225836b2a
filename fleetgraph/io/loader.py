"""`DataLoader.from_generator`: batches built by a background thread into a bounded queue, fed to static programs.

Two ways to use it, as in Paddle 2.x's GeneratorLoader:
  - iterable (the default): `for data in loader(): exe.run(main, feed=data)`, where `data` holds
    one feed dict per place (a list of values per place with return_list=True);
  - non-iterable: building the loader appends `create_py_reader`, `create_double_buffer_reader`
    and `read` to the main program where the loader is created, as Paddle does; `start()` starts
    the feeding thread, each `exe.run(main)` reads one batch, the end of the data raises
    `EOFException`, and `reset()` readies the loader for the next epoch.
The data source is a sample generator, a sample-list generator or a batch generator; every batch is
checked against the feed variables (dtype, shape, LoD) on the feeding thread.
"""

from __future__ import annotations

import itertools
import threading
import warnings
import weakref
from collections import defaultdict
from collections.abc import Callable, Iterator

import numpy as np

from ..data.feeder import DataFeeder
from ..dygraph.mode import in_dynamic_mode
from ..dygraph.tensor import Tensor
from ..executor import check_feed, global_scope
from ..executor.place import Place
from ..ir import EOFException, FleetgraphError, default_main_program
from ..ir.program import Variable, VarType
from ..ops.lod_tensor import LoDTensor
from ..ops.reader import PADDLE_DTYPE_CODES, BlockingQueue
from ..reader import batch as _batch

# Paddle names loader variables from a generator of its own, which unique_name.guard() does not reset,
# so two loaders never share a queue name in the global scope.
_counters: defaultdict[str, itertools.count] = defaultdict(itertools.count)
# how long reset() waits for the old epoch's thread to leave before returning anyway
_JOIN_S = 1.0


def _unique(key: str) -> str:
    return f"{key}_{next(_counters[key])}"


class DataLoader:
    """`paddle.io.DataLoader` / `fluid.io.DataLoader`: static programs read through `from_generator`."""

    def __new__(cls, dataset=None, *args, **kwargs):
        """`DataLoader(dataset, feed_list=None, places=None, return_list=True, batch_sampler=None,
        batch_size=1, shuffle=False, drop_last=False, collate_fn=None, num_workers=0, ...)`: batches of
        a paddle.io.Dataset (io/map_loader.py)."""
        from .map_loader import MapDataLoader

        if dataset is None:
            raise FleetgraphError(
                "DataLoader: expected a dataset (DataLoader(dataset, batch_size=...)) or "
                "DataLoader.from_generator(feed_list=..., capacity=...)"
            )
        return MapDataLoader(dataset, *args, **kwargs)

    @staticmethod
    def from_generator(
        feed_list=None,
        capacity=None,
        use_double_buffer=True,
        iterable=True,
        return_list=False,
        use_multiprocess=False,
        drop_last=True,
    ) -> GeneratorLoader:
        """A loader over a Python generator; `use_multiprocess` has no effect in static mode, as in Paddle."""
        return GeneratorLoader(feed_list, capacity, use_double_buffer, iterable, return_list, drop_last)


class GeneratorLoader:
    def __init__(self, feed_list, capacity, use_double_buffer=True, iterable=True, return_list=False, drop_last=True):
        # dynamic mode (no feed_list, as dygraph scripts build it): batches come out as lists of eager
        # Tensors, one per field, stacked from the samples; iterable and as lists, whatever was asked,
        # with Paddle 1.8's notices (its DygraphGeneratorLoader does the same)
        self._dynamic = feed_list is None and in_dynamic_mode()
        if self._dynamic and not iterable:
            warnings.warn(
                "Please NOTE: DygraphGeneratorLoader supports iterable mode only. Change to iterable mode.",
                stacklevel=2,
            )
            iterable = True
        if self._dynamic and not return_list:
            warnings.warn(
                "Please NOTE: DygraphGeneratorLoader supports returning as list only. Change to return as list.",
                stacklevel=2,
            )
            return_list = True
        self._feed_vars = [] if self._dynamic else _check_feed_list(feed_list)
        self._capacity = _check_capacity(capacity)
        self._iterable, self._return_list, self._drop_last = bool(iterable), bool(return_list), bool(drop_last)
        self._use_double_buffer = bool(use_double_buffer)
        what = (
            "DataLoader(dynamic mode)" if self._dynamic else f"DataLoader({', '.join(v.name for v in self._feed_vars)})"
        )
        self._queue = BlockingQueue(self._capacity, what)
        self._batches: Callable[[], Iterator] | None = None
        self._places: list = []
        self._thread: threading.Thread | None = None
        self.queue_name = self.reader_name = None
        if not self._iterable:
            self._append_reader_ops()
        # a loader dropped mid-epoch must not leave its thread blocked on a full queue
        weakref.finalize(self, self._queue.stop)

    @property
    def iterable(self) -> bool:
        return self._iterable

    @property
    def queue(self) -> BlockingQueue:
        return self._queue

    # -- data sources ----------------------------------------------------------------------------
    def set_sample_generator(self, reader, batch_size, drop_last=True, places=None) -> GeneratorLoader:
        """`reader()` yields one sample (a tuple or list with one field per feed variable) at a time."""
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise FleetgraphError(
                f"DataLoader.set_sample_generator: batch_size expected a positive int, got {batch_size!r}"
            )
        return self.set_sample_list_generator(_batch(reader, batch_size, drop_last), places)

    def set_sample_list_generator(self, reader, places=None) -> GeneratorLoader:
        """`reader()` yields lists of samples; DataFeeder stacks each list into one batch."""
        if self._dynamic:
            return self.set_batch_generator(lambda: (_stacked(samples) for samples in reader()), places)
        feeder = DataFeeder(self._feed_vars)
        names = [v.name for v in self._feed_vars]

        def batches():
            for samples in reader():
                columns = feeder.feed(samples)
                yield [columns[n] for n in names]

        return self.set_batch_generator(batches, places)

    def set_batch_generator(self, reader, places=None) -> GeneratorLoader:
        """`reader()` yields batches: one value (array, nested list or LoDTensor) per feed variable."""
        if not callable(reader):
            raise FleetgraphError(
                f"DataLoader: the data source expected a callable generator, got {type(reader).__name__}"
            )
        if self._iterable:
            self._places = [None] if self._dynamic and places is None else _check_places(places)
        self._batches = reader
        return self

    # -- non-iterable: start / reset -------------------------------------------------------------
    def start(self) -> None:
        """Start feeding this epoch's batches to the program's `read` op."""
        if self._iterable:
            raise FleetgraphError(
                "DataLoader.start: the loader is iterable; expected `for data in loader(): ...`, or build it "
                "with iterable=False to use start() and reset()"
            )
        if self._queue.started:
            raise FleetgraphError(
                "DataLoader.start: the loader is already started; expected reset() after the epoch's "
                "EOFException before starting the next"
            )
        # the queue goes where this epoch's runs look for it (a scope_guard may have changed it)
        global_scope().vars[self.queue_name] = self._queue
        self._start_thread()

    def reset(self) -> None:
        """Stop feeding (promptly, dropping what is queued) so that start() can begin the next epoch."""
        if self._iterable:
            raise FleetgraphError("DataLoader.reset: the loader is iterable; reset() is for iterable=False loaders")
        self._stop_thread()

    # -- iterable --------------------------------------------------------------------------------
    def __call__(self) -> GeneratorLoader:
        return self

    def __iter__(self) -> GeneratorLoader:
        if not self._iterable:
            raise FleetgraphError(
                "DataLoader: the loader was built with iterable=False; expected start(), exe.run(...) until "
                "EOFException, then reset()"
            )
        self._stop_thread()  # a new pass starts from the beginning, even after a `break`
        self._start_thread()
        return self

    def __next__(self) -> list:
        group = []
        for _ in self._places:
            try:
                group.append(self._queue.pop())
            except EOFException:
                break
        if not group or (len(group) < len(self._places) and self._drop_last):
            raise StopIteration
        if self._dynamic:
            return [Tensor(np.asarray(value)) for value in group[0]]
        return [self._per_place(values) for values in group]

    def _per_place(self, values: list):
        if self._return_list:
            return list(values)
        return {v.name: value for v, value in zip(self._feed_vars, values)}

    # -- the feeding thread ----------------------------------------------------------------------
    def _start_thread(self) -> None:
        if self._batches is None:
            raise FleetgraphError(
                f"{self._queue.what}: no data source; expected set_sample_generator, "
                "set_sample_list_generator or set_batch_generator first"
            )
        token = self._queue.open()
        # the thread holds the queue and the source, never the loader, so a dropped loader is freed
        self._thread = threading.Thread(
            target=_feed,
            args=(self._queue, token, self._batches, None if self._dynamic else self._feed_vars),
            name=f"DataLoader-{id(self):x}",
            daemon=True,
        )
        self._thread.start()
        self._queue.attach(token, self._thread)

    def _stop_thread(self) -> None:
        self._queue.stop()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(_JOIN_S)  # it leaves at its next push; a generator stuck elsewhere is not waited for

    # -- non-iterable: the program side ----------------------------------------------------------
    def _append_reader_ops(self) -> None:
        """Paddle's op sequence, appended to the main program's current block where the loader is
        built: create_py_reader, create_double_buffer_reader (with use_double_buffer), read."""
        block = default_main_program().current_block()
        self.queue_name = _unique("lod_tensor_blocking_queue")
        queue_var = _raw_var(block, self.queue_name)
        global_scope().vars[self.queue_name] = self._queue
        reader = _raw_var(block, _unique("create_py_reader"))
        block.append_op(
            "create_py_reader",
            inputs={"blocking_queue": [queue_var]},
            outputs={"Out": [reader]},
            attrs=_py_reader_attrs(self._feed_vars),
        )
        if self._use_double_buffer:
            buffered = _raw_var(block, _unique("double_buffer"))
            block.append_op(
                "create_double_buffer_reader", inputs={"UnderlyingReader": [reader]}, outputs={"Out": [buffered]}
            )
            reader = buffered
        self.reader_name = reader.name
        block.append_op(
            "read", inputs={"Reader": [reader]}, outputs={"Out": self._feed_vars}, attrs={"drop_last": self._drop_last}
        )


def _feed(queue: BlockingQueue, token: int, batches, feed_vars: list[Variable]) -> None:
    """The feeding thread: convert each batch and push it; close the queue at the end, or fail it
    with whatever the generator (or a bad batch) raised, so the consumer never waits forever."""
    source = None
    try:
        source = iter(batches())
        for batch in source:
            try:
                values = _convert(batch, feed_vars)
            except FleetgraphError as e:
                queue.fail(token, e, "a batch does not fit the feed variables:")
                return
            if not queue.push(token, values):
                return  # reset(), a new pass, or the loader was dropped
        queue.close(token)
    except BaseException as e:  # noqa: BLE001  (even SystemExit must reach the consumer)
        queue.fail(token, e)
    finally:
        close = getattr(source, "close", None)
        if close is not None:
            close()


def _convert(batch, feed_vars: list[Variable]) -> list:
    """One value per feed variable, checked as a feed is: an array, or a LoDTensor with LoD (in
    dynamic mode, with no feed variables, each value as an array)."""
    if feed_vars is None:
        return [np.asarray(_owned(value)) for value in batch]
    if not isinstance(batch, (list, tuple)):
        raise FleetgraphError(
            f"DataLoader: a batch expected a list with one value per feed variable "
            f"({', '.join(v.name for v in feed_vars)}), got {type(batch).__name__}"
        )
    if len(batch) != len(feed_vars):
        raise FleetgraphError(
            f"DataLoader: a batch holds {len(batch)} values; expected {len(feed_vars)} "
            f"({', '.join(v.name for v in feed_vars)})"
        )
    return [check_feed(var, _owned(value)) for var, value in zip(feed_vars, batch)]


def _stacked(samples) -> list:
    """A list of samples (one tuple of fields each) as one array per field, samples along axis 0."""
    return [np.stack([np.asarray(field) for field in column]) for column in zip(*samples)]


def _owned(value):
    """A copy of an array: a generator may refill its buffers while this batch waits in the queue."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, LoDTensor):
        return LoDTensor(np.array(value.data), value.levels)
    return value


def _check_feed_list(feed_list) -> list[Variable]:
    if not feed_list:
        raise FleetgraphError(
            "DataLoader.from_generator: feed_list is empty; static programs need the variables it feeds"
        )
    bad = [v for v in feed_list if not isinstance(v, Variable)]
    if bad:
        raise FleetgraphError(
            f"DataLoader.from_generator: feed_list expected Variables (from paddle.static.data), got {bad[0]!r}"
        )
    return list(feed_list)


def _check_capacity(capacity) -> int:
    if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity <= 0:
        raise FleetgraphError(
            f"DataLoader.from_generator: capacity expected a positive int (batches), got {capacity!r}"
        )
    return capacity


def _check_places(places) -> list:
    if places is None:
        raise FleetgraphError(
            "DataLoader: places is None; an iterable loader yields one feed per place, so expected "
            "places=paddle.CPUPlace() or a list of places"
        )
    places = list(places) if isinstance(places, (list, tuple)) else [places]
    if not places or not all(isinstance(p, Place) for p in places):
        raise FleetgraphError(f"DataLoader: places expected a place or a non-empty list of places, got {places!r}")
    return places


def _raw_var(block, name: str) -> Variable:
    # Paddle keeps the queue only in the scope; this IR needs every name an op uses declared
    return block.create_var(name, (), type=VarType.RAW, persistable=True, stop_gradient=True)


def _py_reader_attrs(feed_vars: list[Variable]) -> dict:
    return {
        "shape_concat": [d for v in feed_vars for d in v.shape],
        "ranks": [len(v.shape) for v in feed_vars],
        "lod_levels": [v.lod_level for v in feed_vars],
        "dtypes": [PADDLE_DTYPE_CODES[v.dtype] for v in feed_vars],
        "need_check_feed": [1 if v.is_data else 0 for v in feed_vars],
    }
