"""`fluid.transpiler`, with the modules scripts import from: `distribute_transpiler`, `ps_dispatcher`."""

from ...transpiler import DistributeTranspiler, DistributeTranspilerConfig, HashName, RoundRobin
from . import distribute_transpiler, ps_dispatcher

__all__ = [
    "DistributeTranspiler",
    "DistributeTranspilerConfig",
    "HashName",
    "RoundRobin",
    "distribute_transpiler",
    "ps_dispatcher",
]
