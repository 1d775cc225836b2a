"""Data for training from files: the MultiSlot parser, Paddle's Dataset classes and data generators."""

from __future__ import annotations

from .dataset import (
    DatasetBase,
    DatasetFactory,
    InMemoryDataset,
    QueueDataset,
    set_file_shard,
    set_worker_allreduce,
    set_worker_exchange,
)
from .errors import BadLineError, DatasetError, DatasetTimeoutError, PipeCommandError
from .generator import DataGenerator, MultiSlotDataGenerator, MultiSlotStringDataGenerator
from .multislot import MultiSlotParser, Slot, slots_from_vars
from .source import BatchSource

__all__ = [
    "BadLineError",
    "BatchSource",
    "DataGenerator",
    "DatasetBase",
    "DatasetError",
    "DatasetFactory",
    "DatasetTimeoutError",
    "InMemoryDataset",
    "MultiSlotDataGenerator",
    "MultiSlotParser",
    "MultiSlotStringDataGenerator",
    "PipeCommandError",
    "QueueDataset",
    "Slot",
    "set_file_shard",
    "set_worker_allreduce",
    "set_worker_exchange",
    "slots_from_vars",
]
