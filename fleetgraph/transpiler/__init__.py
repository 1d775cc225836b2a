"""Compile-time passes over programs: autodiff and the distributed rewrites."""

from .backward import append_backward, gradients
from .collective import collective_startup, insert_allreduce
from .distribute_transpiler import DistributeTranspiler, DistributeTranspilerConfig
from .fuse_allreduce import Bucket, fuse_allreduce, fuse_allreduce_with_plan, plan_buckets
from .ps_plan import DistPlan, HashName, RoundRobin, make_plan
from .ps_pserver import build_pserver_program, build_pserver_startup
from .ps_trainer import build_trainer_program, build_trainer_startup

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
    "build_pserver_program",
    "build_pserver_startup",
    "build_trainer_program",
    "build_trainer_startup",
    "gradients",
    "make_plan",
]
