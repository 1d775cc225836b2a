"""Distributed training: the Fleet API, role makers, the launcher and the file datasets."""

from ..data import InMemoryDataset, QueueDataset
from ..dygraph.parallel import ParallelEnv, get_rank, get_world_size, init_parallel_env
from . import fleet
from .parallel import DataParallel

__all__ = [
    "DataParallel",
    "InMemoryDataset",
    "ParallelEnv",
    "QueueDataset",
    "fleet",
    "get_rank",
    "get_world_size",
    "init_parallel_env",
]
