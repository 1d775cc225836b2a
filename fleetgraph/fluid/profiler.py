"""`fluid.profiler`: profile ops, messages and waits; Paddle's report and a Chrome trace."""

from ..utils.profiler import cuda_profiler, profiler, reset_profiler, start_profiler, stop_profiler

__all__ = ["cuda_profiler", "profiler", "reset_profiler", "start_profiler", "stop_profiler"]
