"""`fleetgraph.distributed.fleet` (Paddle's `paddle.distributed.fleet`): one `Fleet` per process, its
methods as module functions (`fleet.init(...)`, `fleet.is_server()`, ...) and its programs as module
attributes (`fleet.main_program`, `fleet.startup_program`)."""

from __future__ import annotations

from . import data_generator, metrics
from .base import role_maker
from .base.distributed_strategy import DistributedStrategy
from .base.fleet_base import DistributedOptimizer, Fleet
from .base.role_maker import MPISymetricRoleMaker, PaddleCloudRoleMaker, Role, SlurmRoleMaker, UserDefinedRoleMaker
from .base.util import UtilBase
from .data_generator import MultiSlotDataGenerator, MultiSlotStringDataGenerator
from .instance import fleet

util = fleet.util

init = fleet.init
distributed_optimizer = fleet.distributed_optimizer
distributed_model = fleet.distributed_model
is_server = fleet.is_server
is_worker = fleet.is_worker
is_first_worker = fleet.is_first_worker
worker_index = fleet.worker_index
server_index = fleet.server_index
worker_num = fleet.worker_num
server_num = fleet.server_num
worker_endpoints = fleet.worker_endpoints
server_endpoints = fleet.server_endpoints
init_server = fleet.init_server
run_server = fleet.run_server
init_worker = fleet.init_worker
stop_worker = fleet.stop_worker
barrier_worker = fleet.barrier_worker
save_persistables = fleet.save_persistables
save_inference_model = fleet.save_inference_model


def __getattr__(name: str):
    """`fleet.main_program` / `fleet.startup_program`: the current programs of the process's Fleet."""
    if name in ("main_program", "startup_program"):
        return getattr(fleet, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DistributedOptimizer",
    "DistributedStrategy",
    "Fleet",
    "UtilBase",
    "MultiSlotDataGenerator",
    "MPISymetricRoleMaker",
    "MultiSlotStringDataGenerator",
    "PaddleCloudRoleMaker",
    "Role",
    "SlurmRoleMaker",
    "UserDefinedRoleMaker",
    "barrier_worker",
    "data_generator",
    "distributed_model",
    "distributed_optimizer",
    "fleet",
    "init",
    "init_server",
    "init_worker",
    "metrics",
    "is_first_worker",
    "is_server",
    "is_worker",
    "role_maker",
    "run_server",
    "save_inference_model",
    "save_persistables",
    "server_endpoints",
    "server_index",
    "server_num",
    "stop_worker",
    "util",
    "worker_endpoints",
    "worker_index",
    "worker_num",
]
