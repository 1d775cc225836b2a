"""Data layers: the feedable inputs of a program, in the 2.x (`static.data`) and Fluid spellings, and
Fluid 1.x's readers inside a program (py_reader, double_buffer, read_file)."""

from __future__ import annotations

from ..executor import global_scope
from ..io.loader import GeneratorLoader, _py_reader_attrs, _raw_var
from ..io.loader import _convert as convert_batch
from ..io.loader import _unique as unique_loader_name
from ..ir import FleetgraphValueError, unique_name
from ..ir.dtypes import convert_dtype
from ..ir.framework import default_main_program, get_default_dtype
from ..ir.program import Variable, VarType
from ..ops.reader import BlockingQueue, QueueReader

__all__ = ["create_py_reader_by_data", "double_buffer", "py_reader", "read_file"]


def data(name: str, shape, dtype=None, lod_level: int = 0) -> Variable:
    """`paddle.static.data`: the shape is given in full; None or -1 marks a dimension known at run time.
    Without a dtype, the default dtype (`set_default_dtype`), as Paddle 2.0's."""
    shape = [-1 if d is None else int(d) for d in shape]
    dtype = dtype or get_default_dtype()
    block = default_main_program().global_block()
    return block.create_var(
        name, shape, dtype, lod_level=lod_level, is_data=True, stop_gradient=True, need_check_feed=True
    )


def fluid_data(
    name: str,
    shape,
    append_batch_size: bool = True,
    dtype="float32",
    lod_level: int = 0,
    type=VarType.DENSE_TENSOR,
    stop_gradient: bool = True,
) -> Variable:
    """`fluid.layers.data`: a batch dimension is prepended unless the shape already has a -1 or None.
    As Paddle 1.x's, a feed is not checked against the shape (its dtype is): an op that cannot take
    the fed shape says so when it runs."""
    shape = [-1 if d is None else int(d) for d in shape]
    if append_batch_size and -1 not in shape:
        shape = [-1] + shape
    block = default_main_program().global_block()
    return block.create_var(
        name, shape, dtype, lod_level=lod_level, is_data=True, stop_gradient=stop_gradient, type=type
    )


# -- Fluid 1.x readers in the program: py_reader, create_py_reader_by_data, double_buffer, read_file --
#
# As Paddle builds them: a blocking queue in the scope, `create_py_reader` over it (appended where the
# reader is created), `create_double_buffer_reader` for double_buffer, and `read` where read_file
# is called, which pops one batch into the reader's variables at each run. The reader variable
# carries the feeding methods (decorate_*, start, reset); the feeding itself is the DataLoader's
# (io/loader.py): a thread that checks each batch against the variables and fills the queue.


class _PyReaderFeed(GeneratorLoader):
    """A non-iterable DataLoader whose program side is only `create_py_reader`: py_reader leaves the
    decoration to double_buffer and the `read` to read_file, where the script calls them."""

    def __init__(self, slots: list[Variable], capacity: int, names: tuple[str, str]) -> None:
        self._names = names
        super().__init__(slots, capacity, use_double_buffer=False, iterable=False)

    def _append_reader_ops(self) -> None:
        block = default_main_program().current_block()
        self.queue_name, self.reader_name = self._names
        global_scope().vars[self.queue_name] = self._queue
        block.append_op(
            "create_py_reader",
            inputs={"blocking_queue": [_raw_var(block, self.queue_name)]},
            outputs={"Out": [_raw_var(block, self.reader_name)]},
            attrs=_py_reader_attrs(self._feed_vars),
        )


class PushQueue:
    """A py_reader's `queue` as Paddle's LoDTensorBlockingQueue shows it, for scripts that push the
    batches themselves: push(tensors) waits while the queue is full and says whether it took them,
    close() ends the epoch (the reads after the last batch raise EOFException), kill() makes them
    fail. Each batch is checked against the reader's variables as the DataLoader checks it."""

    def __init__(self, queue: BlockingQueue, slots: list[Variable]) -> None:
        self._queue, self._slots = queue, slots

    def push(self, tensors) -> bool:
        if not self._queue.started:  # Paddle's queue is open from the start: the first push opens it
            self._queue.open()
        return self._queue.push(self._queue.generation, convert_batch(list(tensors), self._slots))

    def close(self) -> None:
        self._queue.close(self._queue.generation)

    def kill(self) -> None:
        self._queue.fail(self._queue.generation, FleetgraphValueError("kill() was called"), "the queue was killed:")

    def size(self) -> int:
        return len(self._queue)

    def capacity(self) -> int:
        return self._queue.capacity


def _with_feeding(reader: Variable, feed: _PyReaderFeed, slots: list[Variable]) -> Variable:
    """Paddle's reader variable surface: the data source setters, start(), reset() and the queue."""
    reader._feed, reader._slots, reader.queue = feed, slots, PushQueue(feed.queue, slots)
    reader.start, reader.reset = feed.start, feed.reset
    reader.decorate_paddle_reader = reader.decorate_sample_list_generator = feed.set_sample_list_generator
    reader.decorate_tensor_provider = reader.decorate_batch_generator = feed.set_batch_generator
    return reader


def _py_reader(capacity, slots: list[Variable], name, use_double_buffer: bool) -> Variable:
    if name is None:
        names = (unique_loader_name("lod_tensor_blocking_queue"), unique_loader_name("create_py_reader"))
    else:
        names = (f"{name}_queue", f"{name}_reader")
    feed = _PyReaderFeed(slots, capacity, names)
    reader = _with_feeding(default_main_program().current_block().var(feed.reader_name), feed, slots)
    if use_double_buffer:
        reader = double_buffer(reader, name=None if name is None else f"{name}_double_buffer")
    return reader


def py_reader(capacity: int, shapes, dtypes, lod_levels=None, name=None, use_double_buffer: bool = True) -> Variable:
    """`fluid.layers.py_reader`: a reader of batches with the given full shapes (-1 for the batch),
    dtypes and LoD levels; `read_file(reader)` gives its variables, `reader.decorate_*` its data,
    and each epoch runs between `reader.start()` and the EOFException, then `reader.reset()`."""
    lod_levels = [0] * len(shapes) if lod_levels is None else list(lod_levels)
    if not (len(shapes) == len(dtypes) == len(lod_levels)) or not shapes:
        raise FleetgraphValueError(
            f"py_reader: expected one entry per slot in shapes, dtypes and lod_levels, got {len(shapes)}, "
            f"{len(dtypes)} and {len(lod_levels)}"
        )
    block = default_main_program().current_block()
    slots = [
        block.create_var(
            unique_name.generate_with_ignorable_key("read_file.tmp"),
            [int(d) for d in shape],
            convert_dtype(dtype),
            lod_level=int(lod_level),
            stop_gradient=True,
        )
        for shape, dtype, lod_level in zip(shapes, dtypes, lod_levels)
    ]
    return _py_reader(capacity, slots, name, use_double_buffer)


def create_py_reader_by_data(capacity: int, feed_list, name=None, use_double_buffer: bool = True) -> Variable:
    """`fluid.layers.create_py_reader_by_data`: py_reader whose batches go into the given data variables."""
    if not isinstance(feed_list, list):
        raise TypeError(f"feed_list should be a list of Variable instead of {type(feed_list)}")
    return _py_reader(capacity, feed_list, name, use_double_buffer)


def _check_reader(reader, layer: str) -> None:
    if not hasattr(reader, "_feed"):
        raise FleetgraphValueError(
            f"{layer}: expected a reader from fluid.layers.py_reader or create_py_reader_by_data, got {reader!r}"
        )


def double_buffer(reader: Variable, place=None, name=None) -> Variable:
    """`fluid.layers.double_buffer`: the reader decorated to prefetch into `place` (Paddle's attr,
    upper-cased); the DataLoader's thread already fills `capacity` batches ahead."""
    _check_reader(reader, "double_buffer")
    block = default_main_program().current_block()
    buffered = _raw_var(block, name or unique_loader_name("double_buffer"))
    attrs = {} if place is None else {"place": str(place).upper()}
    block.append_op(
        "create_double_buffer_reader", inputs={"UnderlyingReader": [reader]}, outputs={"Out": [buffered]}, attrs=attrs
    )
    return _with_feeding(buffered, reader._feed, reader._slots)


def read_file(reader: Variable):
    """`fluid.layers.read_file`: the reader's variables (one, or a list), each run reading the next batch."""
    _check_reader(reader, "read_file")
    block = default_main_program().current_block()
    block.append_op("read", inputs={"Reader": [reader]}, outputs={"Out": list(reader._slots)})
    return reader._slots[0] if len(reader._slots) == 1 else list(reader._slots)


def monkey_patch_reader_methods(reader: Variable) -> Variable:
    """Paddle's helper that makes a reader variable persistable and stop_gradient and gives it
    reset(): the reader its last run left in the global scope drops what is queued and is ready
    for the next start()."""

    def reset() -> None:
        value = global_scope().vars.get(reader.name)
        if not isinstance(value, QueueReader):
            raise FleetgraphValueError(
                f"{reader.name}.reset: the scope holds no reader under this name yet; expected a run of the "
                "program that reads from it first"
            )
        value.queue.stop()

    reader.reset, reader.stop_gradient, reader.persistable = reset, True, True
    return reader
