"""Distributed training: the Fleet API, role makers, the launcher and the file datasets."""

from .. import absent
from ..data import InMemoryDataset, QueueDataset
from ..dygraph.parallel import ParallelEnv, get_rank, get_world_size, init_parallel_env
from . import fleet
from .collective import ReduceOp, all_gather, all_reduce, barrier, broadcast, reduce, scatter
from .model_parallel import split
from .parallel import DataParallel
from .spawn import spawn

__all__ = [
    "DataParallel",
    "ReduceOp",
    "all_gather",
    "all_reduce",
    "barrier",
    "broadcast",
    "reduce",
    "scatter",
    "split",
    "spawn",
    "InMemoryDataset",
    "ParallelEnv",
    "QueueDataset",
    "fleet",
    "get_rank",
    "get_world_size",
    "init_parallel_env",
]

__getattr__ = absent.getattr_for(__name__)
