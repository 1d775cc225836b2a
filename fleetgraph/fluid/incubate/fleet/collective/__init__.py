"""`from fluid.incubate.fleet.collective import fleet`: the same Fleet, initialized for collective
training with `fleet.init(role_maker.PaddleCloudRoleMaker(is_collective=True))`."""

from fleetgraph.distributed.fleet import DistributedStrategy, fleet

__all__ = ["DistributedStrategy", "fleet"]
