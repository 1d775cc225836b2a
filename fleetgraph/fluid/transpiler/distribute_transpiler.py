"""`fluid.transpiler.distribute_transpiler`."""

from ...transpiler import DistributeTranspiler, DistributeTranspilerConfig

__all__ = ["DistributeTranspiler", "DistributeTranspilerConfig"]
