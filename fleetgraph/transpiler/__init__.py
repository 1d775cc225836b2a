"""Compile-time passes over programs: autodiff, pruning, and the distributed rewrites."""

from .backward import append_backward, gradients
from .distribute_transpiler import DistributeTranspiler, DistributeTranspilerConfig
from .ps_plan import DistPlan, HashName, RoundRobin

__all__ = ["DistPlan", "DistributeTranspiler", "DistributeTranspilerConfig", "HashName", "RoundRobin",
           "append_backward", "gradients"]
