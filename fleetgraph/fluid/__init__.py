"""The Fluid 1.x namespace (`import fleetgraph.fluid as fluid`)."""

from .. import clip, initializer, regularizer
from ..data import DatasetFactory
from ..data.feeder import DataFeeder
from ..executor import Executor, Scope, global_scope, scope_guard
from ..executor.place import CPUPlace, CUDAPlace, is_compiled_with_cuda
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
from ..layers.io import data as _static_data
from ..layers.nn import embedding_v2 as embedding
from ..ops.lod_tensor import LoDTensor, create_lod_tensor, create_random_int_lodtensor
from ..param_attr import ParamAttr, WeightNormParamAttr
from ..static import BuildStrategy, CompiledProgram, ExecutionStrategy, compiler, cpu_places
from ..transpiler import DistributeTranspiler, DistributeTranspilerConfig
from ..transpiler.backward import gradients
from . import (
    backward,
    core,
    data_feeder,
    dataset,
    dygraph,
    executor,
    framework,
    io,
    layers,
    metrics,
    nets,
    optimizer,
    reader,
    transpiler,
)
from .parallel_executor import ParallelExecutor


def data(name, shape, dtype="float32", lod_level=0):
    """`fluid.data`: like `paddle.static.data`, the full shape with None for the batch dimension."""
    return _static_data(name, shape, dtype, lod_level)


__all__ = [
    "BuildStrategy",
    "CPUPlace",
    "CUDAPlace",
    "CompiledProgram",
    "DataFeeder",
    "DatasetFactory",
    "DistributeTranspiler",
    "DistributeTranspilerConfig",
    "ExecutionStrategy",
    "Executor",
    "LoDTensor",
    "ParallelExecutor",
    "ParamAttr",
    "Parameter",
    "Program",
    "Scope",
    "Variable",
    "WeightNormParamAttr",
    "backward",
    "clip",
    "compiler",
    "core",
    "cpu_places",
    "create_lod_tensor",
    "create_random_int_lodtensor",
    "data",
    "data_feeder",
    "dataset",
    "default_main_program",
    "default_startup_program",
    "dygraph",
    "embedding",
    "executor",
    "framework",
    "global_scope",
    "gradients",
    "initializer",
    "io",
    "is_compiled_with_cuda",
    "layers",
    "metrics",
    "name_scope",
    "nets",
    "optimizer",
    "program_guard",
    "reader",
    "regularizer",
    "scope_guard",
    "transpiler",
    "unique_name",
]
