"""Compile-time passes over programs: autodiff, pruning, and the distributed rewrites."""

from .backward import append_backward, gradients
from .collective import collective_startup, insert_allreduce
from .distribute_transpiler import DistributeTranspiler, DistributeTranspilerConfig
from .fuse_allreduce import Bucket, fuse_allreduce, fuse_allreduce_with_plan, plan_buckets
from .ps_plan import DistPlan, HashName, RoundRobin

__all__ = [
    "Bucket",
    "collective_startup",
    "fuse_allreduce",
    "fuse_allreduce_with_plan",
    "insert_allreduce",
    "plan_buckets",
    "DistPlan",
    "DistributeTranspiler",
    "DistributeTranspilerConfig",
    "HashName",
    "RoundRobin",
    "append_backward",
    "gradients",
]
