"""`fluid.parallel_executor`: ParallelExecutor, which lives in paddle.static."""

from ..static.parallel_executor import ParallelExecutor

__all__ = ["ParallelExecutor"]
