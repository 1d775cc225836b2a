"""The runtime: Executor, Scope and places (CPU with NumPy kernels)."""

from ..ops.rng import seed
from .executor import Executor
from .feed_fetch import check_feed
from .native import tune_allocator, tune_blas_threads
from .place import CPUPlace, CUDAPlace, Place
from .scope import Scope, global_scope, scope_guard

tune_allocator()
tune_blas_threads()

__all__ = ["CPUPlace", "CUDAPlace", "Executor", "Place", "Scope", "check_feed", "global_scope", "scope_guard", "seed"]
