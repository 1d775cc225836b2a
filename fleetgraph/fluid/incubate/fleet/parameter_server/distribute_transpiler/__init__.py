"""`from fluid.incubate.fleet.parameter_server.distribute_transpiler import fleet`: the process's one
Fleet (the same object as `fleetgraph.distributed.fleet.fleet`); its `distributed_optimizer(optimizer,
config)` takes a DistributeTranspilerConfig, a StrategyFactory strategy or a DistributedStrategy."""

from fleetgraph import absent
from fleetgraph.distributed.fleet import fleet
from fleetgraph.distributed.fleet.base.fleet_base import DistributedOptimizer, Fleet, Mode
from fleetgraph.distributed.fleet.base.role_maker import MPISymetricRoleMaker
from fleetgraph.executor import Executor
from fleetgraph.fluid.parallel_executor import ParallelExecutor
from fleetgraph.ir import Program, default_main_program, default_startup_program
from fleetgraph.optimizer import Optimizer
from fleetgraph.static import CompiledProgram
from fleetgraph.transpiler import DistributeTranspiler as OriginTranspiler
from fleetgraph.transpiler import DistributeTranspilerConfig, ps_plan

from .distributed_strategy import (
    AsyncStrategy,
    DistributedStrategy,
    GeoStrategy,
    HalfAsyncStrategy,
    ServerRuntimeConfig,
    StrategyFactory,
    SyncStrategy,
    TrainerRuntimeConfig,
)


class DistributedMode:
    """The parameter-server modes, with the values listen_and_serv's `distributed_mode` attr carries."""

    SYNC, ASYNC, HALF_ASYNC, GEO = ps_plan.SYNC, ps_plan.ASYNC, ps_plan.HALF_ASYNC, ps_plan.GEO


__getattr__ = absent.getattr_for(__name__)

__all__ = [
    "CompiledProgram",
    "DistributedMode",
    "DistributedOptimizer",
    "Executor",
    "Fleet",
    "MPISymetricRoleMaker",
    "Mode",
    "Optimizer",
    "OriginTranspiler",
    "ParallelExecutor",
    "Program",
    "default_main_program",
    "default_startup_program",
    "AsyncStrategy",
    "DistributeTranspilerConfig",
    "DistributedStrategy",
    "GeoStrategy",
    "HalfAsyncStrategy",
    "ServerRuntimeConfig",
    "StrategyFactory",
    "SyncStrategy",
    "TrainerRuntimeConfig",
    "fleet",
]
