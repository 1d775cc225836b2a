"""`from fluid.incubate.fleet.collective import fleet`: the same Fleet, initialized for collective
training with `fleet.init(role_maker.PaddleCloudRoleMaker(is_collective=True))`; `CollectiveOptimizer`
is what its `distributed_optimizer` returns (Fluid 1.x's name)."""

from fleetgraph.distributed.fleet import DistributedStrategy, fleet
from fleetgraph.distributed.fleet.base.fleet_base import DistributedOptimizer


class CollectiveOptimizer(DistributedOptimizer):
    """`CollectiveOptimizer(optimizer, strategy)`: the optimizer wrapped for the collective fleet."""

    def __init__(self, optimizer, strategy=None) -> None:
        super().__init__(fleet, optimizer, strategy if strategy is not None else DistributedStrategy())


__all__ = ["CollectiveOptimizer", "DistributedStrategy", "fleet"]
