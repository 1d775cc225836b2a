"""`from fluid.incubate.fleet.collective import fleet`: the same Fleet, initialized for collective
training with `fleet.init(role_maker.PaddleCloudRoleMaker(is_collective=True))`; `CollectiveOptimizer`
is what its `distributed_optimizer` returns (Fluid 1.x's name)."""

from fleetgraph import absent
from fleetgraph.distributed.fleet import DistributedStrategy, fleet
from fleetgraph.distributed.fleet.base.fleet_base import DistributedOptimizer, Fleet, Mode
from fleetgraph.distributed.fs_wrapper import LocalFS
from fleetgraph.executor import Executor
from fleetgraph.fluid.parallel_executor import ParallelExecutor
from fleetgraph.ir import Program
from fleetgraph.static import CompiledProgram, compiler


class CollectiveOptimizer(DistributedOptimizer):
    """`CollectiveOptimizer(optimizer, strategy)`: the optimizer wrapped for the collective fleet."""

    def __init__(self, optimizer, strategy=None) -> None:
        super().__init__(fleet, optimizer, strategy if strategy is not None else DistributedStrategy())


__getattr__ = absent.getattr_for(__name__)

__all__ = [
    "CollectiveOptimizer",
    "CompiledProgram",
    "DistributedStrategy",
    "Executor",
    "Fleet",
    "LocalFS",
    "Mode",
    "ParallelExecutor",
    "Program",
    "compiler",
    "fleet",
]
