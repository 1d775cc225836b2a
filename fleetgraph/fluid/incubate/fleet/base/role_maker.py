"""`fluid.incubate.fleet.base.role_maker`: the same role makers as `fleetgraph.distributed.fleet`, and
Fluid 1.x's collective one."""

from fleetgraph import absent
from fleetgraph.distributed.fleet.base.role_maker import (
    MPISymetricRoleMaker,
    PaddleCloudRoleMaker,
    Role,
    RoleMakerBase,
    UserDefinedRoleMaker,
)


class UserDefinedCollectiveRoleMaker(UserDefinedRoleMaker):
    """Fluid 1.x: `UserDefinedCollectiveRoleMaker(current_id=0, worker_endpoints=[...])`, the rank and
    every rank's endpoint of a collective job."""

    def __init__(self, current_id=0, worker_endpoints=None) -> None:
        count = len(worker_endpoints.split(",") if isinstance(worker_endpoints, str) else worker_endpoints or [])
        super().__init__(current_id, Role.WORKER, count or 1, worker_endpoints=worker_endpoints, is_collective=True)


__getattr__ = absent.getattr_for(__name__)

__all__ = [
    "MPISymetricRoleMaker",
    "PaddleCloudRoleMaker",
    "Role",
    "RoleMakerBase",
    "UserDefinedCollectiveRoleMaker",
    "UserDefinedRoleMaker",
]
