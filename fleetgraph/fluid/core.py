"""`fluid.core` (also `paddle.common_ops_import.core`): the few names of Paddle's C++ core that
scripts use directly."""

from ..executor.place import CPUPlace, CUDAPlace
from ..ir import EOFException
from ..ops.lod_tensor import LoDTensor

__all__ = ["CPUPlace", "CUDAPlace", "EOFException", "LoDTensor"]
