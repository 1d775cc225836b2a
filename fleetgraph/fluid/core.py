"""`fluid.core` (also `paddle.common_ops_import.core`): the few names of Paddle's C++ core that
scripts use directly."""

from ..executor import Scope
from ..executor.place import CPUPlace, CUDAPinnedPlace, CUDAPlace, is_compiled_with_cuda
from ..ir import EOFException
from ..ops.lod_tensor import LoDTensor, LoDTensorArray

# Paddle's LoDTensor derives from its Tensor, and fluid.Tensor is LoDTensor: one class serves both
Tensor = LoDTensor

__all__ = [
    "CPUPlace",
    "CUDAPinnedPlace",
    "CUDAPlace",
    "EOFException",
    "LoDTensor",
    "LoDTensorArray",
    "Scope",
    "Tensor",
    "is_compiled_with_cuda",
]
