"""`fluid.transpiler`."""

from ..transpiler import DistributeTranspiler, DistributeTranspilerConfig, HashName, RoundRobin

__all__ = ["DistributeTranspiler", "DistributeTranspilerConfig", "HashName", "RoundRobin"]
