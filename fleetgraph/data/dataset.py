"""Paddle's Dataset API: QueueDataset streams MultiSlot files, InMemoryDataset loads and shuffles them.

Both take Paddle 2.x's `init(...)` and Fluid 1.x's setters (`fluid.DatasetFactory().create_dataset()`).
The executor consumes a dataset through one method:

    source = dataset._batch_source()     # a BatchSource (fleetgraph/data/source.py)
    with source:                         # close() stops readers and pipe processes; idempotent
        while (feed := source.next()) is not None:   # thread-safe; raises a reader's error
            ...                          # feed: {name: ndarray or LoDTensor}, in use_var order
    source.samples                       # samples handed out

Cross-trainer work goes through module-level hooks the distributed layer installs:
`set_worker_exchange(fn)`, fn(payloads) -> received, each payload (one per worker) a list of NumPy
arrays, for `global_shuffle`; `set_worker_allreduce(fn)`, fn(int64 array) -> its sum over workers,
for the data sizes; `set_file_shard(index, count)` makes a dataset read only the files i of its
list (in the order given) with i % count == index. With no hooks (one process) shuffles and sizes
are local and every file is read.
"""

from __future__ import annotations

import operator
import random

import numpy as np

from ..ir.errors import close_matches
from .columns import Columns
from .errors import DatasetError
from .multislot import BadLineLog, MultiSlotParser, slots_from_vars
from .source import BatchSource, MemoryLoader, MemorySource, StreamSource

_hooks: dict = {"exchange": None, "allreduce": None, "shard": (0, 1)}
BAD_LINE_POLICIES = ("raise", "skip")


def set_worker_exchange(fn) -> None:
    """Install fn(list of payloads, one per worker) -> list of payloads received (None removes it)."""
    _hooks["exchange"] = fn


def set_worker_allreduce(fn) -> None:
    """Install fn(int64 array) -> the element-wise sum of that array over all workers (None removes it)."""
    _hooks["allreduce"] = fn


def set_file_shard(index: int, count: int) -> None:
    """Read only the files i with i % count == index of each dataset's file list (0, 1: every file)."""
    try:
        shard = (operator.index(index), operator.index(count))
    except TypeError:
        shard = (-1, -1)
    if not 0 <= shard[0] < shard[1]:
        raise DatasetError(f"set_file_shard: expected integers 0 <= index < count, got {index!r}, {count!r}")
    _hooks["shard"] = shard


class DatasetBase:
    """The settings every dataset shares, under Paddle's 2.x and 1.x spellings."""

    _feed_name = "MultiSlotDataFeed"

    def __init__(self) -> None:
        self.batch_size, self.thread_num = 1, 1
        self.pipe_command, self.download_cmd = "cat", "cat"
        self.input_type, self.on_bad_line = 0, "raise"
        self.filelist: list[str] = []
        self.use_var: list = []
        self._slots: tuple = ()
        self._given: set[str] = set()  # the fields desc() prints, as protobuf prints only set fields

    def init(
        self,
        batch_size: int = 1,
        thread_num: int = 1,
        use_var=(),
        pipe_command: str = "cat",
        input_type: int = 0,
        fs_name: str = "",
        fs_ugi: str = "",
        download_cmd: str = "cat",
        on_bad_line: str = "raise",
    ) -> None:
        """Paddle 2.x settings in one call. `on_bad_line` is not Paddle's (Paddle aborts on a malformed
        line): "raise" stops with the file:line and the reason, "skip" leaves such lines out with a
        warning on stderr (the first 10, then a count)."""
        self.set_batch_size(batch_size)
        self.set_thread(thread_num)
        self.set_use_var(use_var)
        self.set_pipe_command(pipe_command)
        self.set_input_type(input_type)
        self.set_hdfs_config(fs_name, fs_ugi)
        self.set_download_cmd(download_cmd)
        self.set_on_bad_line(on_bad_line)

    def set_batch_size(self, batch_size: int) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise DatasetError(f"dataset batch_size: expected an integer >= 1, got {batch_size!r}")
        self.batch_size = batch_size
        self._given.add("batch_size")

    def set_thread(self, thread_num: int) -> None:
        """Reader threads; each takes whole files (more threads than files read one file each)."""
        if not isinstance(thread_num, int) or isinstance(thread_num, bool):
            raise DatasetError(f"dataset thread_num: expected an integer, got {thread_num!r}")
        self.thread_num = max(1, thread_num)

    def set_use_var(self, var_list) -> None:
        self._slots = slots_from_vars(var_list)
        self.use_var = list(var_list)

    def set_pipe_command(self, pipe_command: str) -> None:
        if not isinstance(pipe_command, str) or not pipe_command.strip():
            raise DatasetError(f"dataset pipe_command: expected a shell command, got {pipe_command!r}")
        self.pipe_command = pipe_command

    def set_filelist(self, filelist) -> None:
        if isinstance(filelist, str) or not all(isinstance(f, str) for f in filelist):
            raise DatasetError(f"dataset set_filelist: expected a list of file names, got {filelist!r}")
        self.filelist = list(filelist)

    def set_input_type(self, input_type: int) -> None:
        if input_type != 0:
            raise DatasetError(
                f"dataset input_type: only 0 (one sample per line) is supported; got {input_type!r} "
                "(1, one batch per line, is not)"
            )
        self.input_type = 0
        self._given.add("input_type")

    def set_hdfs_config(self, fs_name: str, fs_ugi: str) -> None:
        if fs_name:
            raise DatasetError(f"dataset set_hdfs_config: HDFS is not available; expected fs_name '', got {fs_name!r}")

    def set_download_cmd(self, download_cmd: str) -> None:
        """Paddle uses it only for files on HDFS/AFS, which are not available; kept for desc()."""
        self.download_cmd = download_cmd

    def set_on_bad_line(self, policy: str) -> None:
        """Not Paddle's: "raise" (the default) or "skip" malformed lines; see `init`."""
        if policy not in BAD_LINE_POLICIES:
            raise DatasetError(f"dataset on_bad_line: expected one of {BAD_LINE_POLICIES}, got {policy!r}")
        self.on_bad_line = policy

    def desc(self) -> str:
        """The settings as the text of Paddle's DataFeedDesc protobuf."""
        lines = [f'name: "{self._feed_name}"']
        if "batch_size" in self._given:
            lines.append(f"batch_size: {self.batch_size}")
        if self._slots:
            lines.append("multi_slot_desc {")
            for slot, var in zip(self._slots, self.use_var):
                kind = {"float32": "float", "int64": "uint64", "int32": "uint32"}[slot.dtype]
                lines += ["  slots {", f'    name: "{slot.name}"', f'    type: "{kind}"']
                lines += ["    is_dense: true"] if slot.dense else []
                lines.append("    is_used: true")
                lines += [f"    shape: {d}" for d in (var.shape if slot.dense else ())]
                lines.append("  }")
            lines.append("}")
        lines.append(f'pipe_command: "{self.pipe_command}"')
        if "input_type" in self._given:
            lines.append(f"input_type: {self.input_type}")
        return "\n".join(lines) + "\n"

    # Paddle 2.x keeps the setters private; scripts that reach for them find them
    _set_batch_size, _set_thread, _set_use_var = set_batch_size, set_thread, set_use_var
    _set_pipe_command, _set_input_type, _set_hdfs_config = set_pipe_command, set_input_type, set_hdfs_config
    _set_download_cmd, _desc = set_download_cmd, desc

    # -- for the consumers ---------------------------------------------------------------------
    def _files(self) -> list[str]:
        index, count = _hooks["shard"]
        return [f for i, f in enumerate(self.filelist) if i % count == index]

    def _parser(self, log: BadLineLog | None = None) -> MultiSlotParser:
        if not self._slots:
            raise DatasetError(
                f"{type(self).__name__}: no use_var set; expected init(use_var=[...]) or set_use_var([...])"
            )
        if log is None and self.on_bad_line == "skip":
            log = BadLineLog()
        return MultiSlotParser(self._slots, log)

    def _names(self) -> list[str]:
        return [slot.name for slot in self._slots]

    def _batch_source(self) -> BatchSource:
        raise NotImplementedError


class QueueDataset(DatasetBase):
    """Streams its files through reader threads; nothing is kept in memory between passes."""

    _feed_name = "MultiSlotDataFeed"

    def _batch_source(self) -> StreamSource:
        files = self._files()
        threads = max(1, min(self.thread_num, len(files)))
        return StreamSource(files, self._parser(), self.pipe_command, self.batch_size, threads, self._names())

    def local_shuffle(self) -> None:
        raise NotImplementedError(
            "QueueDataset does not support local shuffle, please use InMemoryDataset for local_shuffle"
        )

    def global_shuffle(self, fleet=None) -> None:
        raise NotImplementedError(
            "QueueDataset does not support global shuffle, please use InMemoryDataset for global_shuffle"
        )


class InMemoryDataset(DatasetBase):
    """Loads its files into columnar memory (one array per slot, not an object per sample), shuffles
    them locally or across trainers, and serves batches from memory each pass, with no re-parsing.

    Shuffles draw their randomness from a NumPy Generator seeded from Python's `random` module, so
    `random.seed(s)` fixes them; each shuffle advances that state. As in Paddle, loading again
    replaces what is in memory. Unlike Paddle, which then trains on nothing, a pass over a dataset
    never loaded, or released, is an error.
    """

    _feed_name = "MultiSlotInMemoryDataFeed"
    _ACCEPTED = {"data_feed_type", "queue_num", "fleet_send_batch_size", "fleet_send_sleep_seconds", "candidate_size"}
    _UNSUPPORTED = {"parse_ins_id", "parse_content", "merge_size", "fea_eval"}  # they change what a line holds

    def __init__(self) -> None:
        super().__init__()
        self._memory: Columns | None = None
        self._loader: MemoryLoader | None = None
        self.queue_num = self.fleet_send_batch_size = self.fleet_send_sleep_seconds = None

    def init(self, **kwargs) -> None:
        """Paddle 2.x's settings, plus its InMemoryDataset extras (data_feed_type, queue_num,
        fleet_send_batch_size, fleet_send_sleep_seconds, merge_size, parse_ins_id, parse_content)
        and `on_bad_line` (see DatasetBase.init)."""
        base = {k: kwargs.pop(k) for k in list(kwargs) if k in _BASE_ARGS}
        self._extras(kwargs)
        super().init(**base)

    def update_settings(self, **kwargs) -> None:
        """Paddle's InMemoryDataset.update_settings: any of init's keywords, only those given change."""
        base = {k: kwargs.pop(k) for k in list(kwargs) if k in _BASE_ARGS}
        self._extras(kwargs)
        for key, value in base.items():
            if key in ("fs_name", "fs_ugi"):
                self.set_hdfs_config(base.get("fs_name", ""), base.get("fs_ugi", ""))
            else:
                getattr(self, _BASE_ARGS[key])(value)

    def _init_distributed_settings(self, **kwargs) -> None:
        self._extras(kwargs)

    # Fluid 1.x's setters of the same extras (Paddle 2.x keeps them private)
    def set_queue_num(self, queue_num: int) -> None:
        self._extras({"queue_num": queue_num})

    def set_parse_ins_id(self, parse_ins_id: bool) -> None:
        self._extras({"parse_ins_id": parse_ins_id})

    def set_parse_content(self, parse_content: bool) -> None:
        self._extras({"parse_content": parse_content})

    def set_fleet_send_batch_size(self, fleet_send_batch_size: int = 1024) -> None:
        self._extras({"fleet_send_batch_size": fleet_send_batch_size})

    def set_fleet_send_sleep_seconds(self, fleet_send_sleep_seconds: int = 0) -> None:
        self._extras({"fleet_send_sleep_seconds": fleet_send_sleep_seconds})

    def set_merge_by_lineid(self, merge_size: int = 2) -> None:
        self._extras({"merge_size": merge_size})

    _set_queue_num, _set_parse_ins_id, _set_parse_content = set_queue_num, set_parse_ins_id, set_parse_content
    _set_fleet_send_batch_size, _set_fleet_send_sleep_seconds = set_fleet_send_batch_size, set_fleet_send_sleep_seconds
    _set_merge_by_lineid = set_merge_by_lineid

    def _extras(self, kwargs: dict) -> None:
        for key, value in kwargs.items():
            if key in self._UNSUPPORTED:
                if value and not (key == "merge_size" and value <= 0):
                    raise DatasetError(
                        f"InMemoryDataset {key}={value!r}: not supported (it changes what each line holds); "
                        f"expected {key} left at its default"
                    )
            elif key == "data_feed_type":
                if value != self._feed_name:
                    raise DatasetError(f"InMemoryDataset data_feed_type: expected {self._feed_name!r}, got {value!r}")
            elif key in self._ACCEPTED:
                setattr(self, key, value)  # they tune Paddle's transport and threads, not the samples
            else:
                known = sorted({*_BASE_ARGS, *self._ACCEPTED, *self._UNSUPPORTED})
                raise DatasetError(
                    f"InMemoryDataset: unknown setting {key!r}{close_matches(key, known)}; "
                    f"expected one of {', '.join(known)}"
                )

    # -- loading ---------------------------------------------------------------------------------
    def load_into_memory(self, is_shuffle: bool = False) -> None:
        """Parse every file (thread_num threads, whole files each) into memory. `is_shuffle` only
        matters to Paddle's GPU parameter server, as there."""
        self.preload_into_memory()
        self.wait_preload_done()

    def preload_into_memory(self, thread_num: int | None = None) -> None:
        """Start loading in the background; `wait_preload_done()` finishes it."""
        if self._loader is not None:
            raise DatasetError("InMemoryDataset: a preload is still running; expected wait_preload_done() first")
        files = self._files()
        threads = max(1, min(thread_num or self.thread_num, len(files)))
        self._loader = MemoryLoader(files, self._parser(), self.pipe_command, threads)

    def wait_preload_done(self) -> None:
        if self._loader is None:
            raise DatasetError(
                "InMemoryDataset.wait_preload_done: nothing is loading; expected preload_into_memory() first"
            )
        loader, self._loader = self._loader, None
        self._memory = None  # free the old samples before the new ones are joined into one array per slot
        self._memory = loader.wait().freeze()
        if loader.log is not None:
            loader.log.summary()

    def release_memory(self) -> None:
        self._memory = None

    # -- shuffles and sizes ------------------------------------------------------------------------
    def local_shuffle(self) -> None:
        memory = self._loaded("local_shuffle")
        self._memory = memory.take(_rng().permutation(memory.n)).freeze()

    def global_shuffle(self, fleet=None, thread_num: int = 12) -> None:
        """Send each sample to a random trainer, then shuffle locally. As in Paddle, without `fleet`
        there is one trainer; without an installed worker exchange (one process), too."""
        memory = self._loaded("global_shuffle")
        exchange = _hooks["exchange"]
        workers = int(fleet.worker_num()) if fleet is not None and exchange is not None else 1
        rng = _rng()
        if workers > 1:
            dest = rng.integers(0, workers, memory.n)
            order = np.argsort(dest, kind="stable")
            bounds = np.concatenate([[0], np.cumsum(np.bincount(dest, minlength=workers))])
            grouped = memory.take(order)
            payloads = [grouped.slice(bounds[w], bounds[w + 1]).to_arrays() for w in range(workers)]
            received = exchange(payloads)
            parts = [Columns.from_arrays(p, memory, f"global_shuffle: from worker {i}") for i, p in enumerate(received)]
            memory = Columns.concat(parts)
        self._memory = memory.take(rng.permutation(memory.n)).freeze()

    def get_memory_data_size(self, fleet=None) -> int:
        """Samples in memory: on this trainer, or (with `fleet` and an installed all-reduce) on all."""
        return self._size(fleet)

    def get_shuffle_data_size(self, fleet=None) -> int:
        """Samples in memory after the last shuffle, counted as get_memory_data_size does."""
        return self._size(fleet)

    def _size(self, fleet) -> int:
        local = 0 if self._memory is None else self._memory.n
        allreduce = _hooks["allreduce"]
        if fleet is None or allreduce is None:
            return local
        return int(np.asarray(allreduce(np.array([local], dtype=np.int64)))[0])

    def _loaded(self, what: str) -> Columns:
        if self._loader is not None:
            raise DatasetError(
                f"InMemoryDataset.{what}: a preload is still running; expected wait_preload_done() first"
            )
        if self._memory is None:
            raise DatasetError(f"InMemoryDataset.{what}: nothing in memory; expected load_into_memory() first")
        return self._memory

    def _batch_source(self) -> MemorySource:
        return MemorySource(self._loaded("train_from_dataset"), self.batch_size, self._names())


def _rng() -> np.random.Generator:
    return np.random.default_rng(random.getrandbits(64))


_BASE_ARGS = {
    "batch_size": "set_batch_size",
    "thread_num": "set_thread",
    "use_var": "set_use_var",
    "pipe_command": "set_pipe_command",
    "input_type": "set_input_type",
    "fs_name": "set_hdfs_config",
    "fs_ugi": "set_hdfs_config",
    "download_cmd": "set_download_cmd",
    "on_bad_line": "set_on_bad_line",
}
_FACTORY = {"QueueDataset": QueueDataset, "InMemoryDataset": InMemoryDataset}


class DatasetFactory:
    """Fluid's `fluid.DatasetFactory().create_dataset("QueueDataset" | "InMemoryDataset")`."""

    def create_dataset(self, datafeed_class: str = "QueueDataset") -> DatasetBase:
        if datafeed_class not in _FACTORY:
            raise DatasetError(
                f"DatasetFactory: datafeed class {datafeed_class!r} does not exist here"
                f"{close_matches(str(datafeed_class), _FACTORY)}; expected one of {', '.join(_FACTORY)}"
            )
        return _FACTORY[datafeed_class]()
