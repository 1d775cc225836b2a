"""`from fluid.incubate.fleet.parameter_server.distribute_transpiler import fleet`: the process's one
Fleet (the same object as `fleetgraph.distributed.fleet.fleet`); its `distributed_optimizer(optimizer,
config)` takes a DistributeTranspilerConfig, a StrategyFactory strategy or a DistributedStrategy."""

from fleetgraph.distributed.fleet import fleet
from fleetgraph.transpiler import DistributeTranspilerConfig

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

__all__ = [
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
