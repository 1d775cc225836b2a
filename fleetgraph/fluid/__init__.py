"""The Fluid 1.x namespace (`import fleetgraph.fluid as fluid`)."""

from .. import absent, initializer, regularizer
from .. import compat as cpt
from .. import grad_clip as clip
from ..data import DatasetFactory
from ..data.feeder import DataFeeder
from ..dygraph.tensor import Tensor as VarBase
from ..executor import Executor, Scope, global_scope, scope_guard
from ..executor.place import CPUPlace, CUDAPinnedPlace, CUDAPlace, is_compiled_with_cuda
from ..ir import (
    Parameter,
    Program,
    Variable,
    default_main_program,
    default_startup_program,
    name_scope,
    program_guard,
    unique_name,
)
from ..ir.dtypes import convert_dtype as convert_np_dtype_to_dtype_
from ..layers.io import data as _static_data
from ..layers.manipulation import one_hot_v2 as one_hot
from ..layers.math import monkey_patch_variable
from ..layers.nn import embedding_v2 as embedding
from ..ops.lod_tensor import LoDTensor, create_lod_tensor, create_random_int_lodtensor
from ..param_attr import ParamAttr, WeightNormParamAttr
from ..static import BuildStrategy, CompiledProgram, ExecutionStrategy, compiler, cpu_places
from ..tensor_api import monkey_patch_varbase
from ..transpiler import DistributeTranspiler, DistributeTranspilerConfig, HashName, RoundRobin
from ..transpiler.backward import append_backward, gradients
from . import (
    average,
    backward,
    contrib,
    core,
    data_feeder,
    dataset,
    distribute_lookup_table,
    dygraph,
    executor,
    framework,
    install_check,
    io,
    layers,
    log_helper,
    metrics,
    nets,
    optimizer,
    param_attr,
    profiler,
    reader,
    transpiler,
)
from .core import LoDTensorArray, Tensor
from .dygraph import (
    disable_dygraph,
    disable_imperative,
    enable_dygraph,
    enable_imperative,
    load_dygraph,
    save_dygraph,
)
from .framework import (
    Iterable,
    Operator,
    cuda_pinned_places,
    cuda_places,
    defaultdict,
    device_guard,
    get_flags,
    in_dygraph_mode,
    require_version,
    set_flags,
)
from .incubate import data_generator, fleet
from .io import load, load_program_state, save, set_program_state
from .parallel_executor import ParallelExecutor
from .transpiler import memory_optimize, release_memory


def data(name, shape, dtype="float32", lod_level=0):
    """`fluid.data`: like `paddle.static.data`, the full shape with None for the batch dimension."""
    return _static_data(name, shape, dtype, lod_level)


__all__ = [
    "BuildStrategy",
    "CPUPlace",
    "CUDAPinnedPlace",
    "CUDAPlace",
    "CompiledProgram",
    "DataFeeder",
    "DatasetFactory",
    "DistributeTranspiler",
    "DistributeTranspilerConfig",
    "ExecutionStrategy",
    "Executor",
    "HashName",
    "Iterable",
    "LoDTensor",
    "LoDTensorArray",
    "Operator",
    "ParallelExecutor",
    "ParamAttr",
    "Parameter",
    "Program",
    "RoundRobin",
    "Scope",
    "Tensor",
    "VarBase",
    "Variable",
    "WeightNormParamAttr",
    "append_backward",
    "average",
    "backward",
    "clip",
    "compiler",
    "contrib",
    "convert_np_dtype_to_dtype_",
    "core",
    "cpt",
    "cpu_places",
    "create_lod_tensor",
    "create_random_int_lodtensor",
    "cuda_pinned_places",
    "cuda_places",
    "data",
    "data_feeder",
    "data_generator",
    "dataset",
    "default_main_program",
    "default_startup_program",
    "defaultdict",
    "device_guard",
    "disable_dygraph",
    "disable_imperative",
    "distribute_lookup_table",
    "dygraph",
    "embedding",
    "enable_dygraph",
    "enable_imperative",
    "executor",
    "fleet",
    "framework",
    "get_flags",
    "global_scope",
    "gradients",
    "in_dygraph_mode",
    "initializer",
    "install_check",
    "io",
    "is_compiled_with_cuda",
    "layers",
    "load",
    "load_dygraph",
    "load_program_state",
    "log_helper",
    "memory_optimize",
    "metrics",
    "monkey_patch_varbase",
    "monkey_patch_variable",
    "name_scope",
    "nets",
    "one_hot",
    "optimizer",
    "param_attr",
    "profiler",
    "program_guard",
    "reader",
    "regularizer",
    "release_memory",
    "require_version",
    "save",
    "save_dygraph",
    "scope_guard",
    "set_flags",
    "set_program_state",
    "transpiler",
    "unique_name",
]

__getattr__ = absent.getattr_for(__name__)
