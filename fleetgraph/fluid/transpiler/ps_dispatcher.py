"""`fluid.transpiler.ps_dispatcher`: how a parameter's blocks are spread over the pservers."""

from ...transpiler.ps_plan import HashName, PSDispatcher, RoundRobin

__all__ = ["HashName", "PSDispatcher", "RoundRobin"]
