"""`fluid.incubate.fleet.base.role_maker`: the same role makers as `fleetgraph.distributed.fleet`."""

from fleetgraph.distributed.fleet.base.role_maker import PaddleCloudRoleMaker, Role, RoleMakerBase, UserDefinedRoleMaker

__all__ = ["PaddleCloudRoleMaker", "Role", "RoleMakerBase", "UserDefinedRoleMaker"]
