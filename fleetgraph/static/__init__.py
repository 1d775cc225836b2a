"""`paddle.static`: building and running static programs. Paddle's names fleetgraph lacks raise
NotInFleetgraph."""

from .. import absent
from ..executor import Executor, Scope, global_scope, scope_guard
from ..executor.place import CPUPlace, CUDAPlace, cuda_places
from ..ir import (
    Parameter,
    Program,
    Variable,
    default_main_program,
    default_startup_program,
    device_guard,
    name_scope,
    program_guard,
)
from ..jit import InputSpec
from ..layers import create_global_var, create_parameter, py_func
from ..layers.control_flow import Print
from ..layers.io import data
from ..layers.nn import accuracy, auc
from ..optimizer.ema import ExponentialMovingAverage
from ..param_attr import WeightNormParamAttr
from ..store.persistence import load, load_program_state, load_vars, save, save_vars, set_program_state
from ..store.persistence import static_load_inference_model as load_inference_model
from ..store.persistence import static_save_inference_model as save_inference_model
from ..transpiler.backward import append_backward, gradients
from . import nn
from .compiler import BuildStrategy, CompiledProgram, ExecutionStrategy, cpu_places, xpu_places
from .io import (
    deserialize_persistables,
    deserialize_program,
    load_from_file,
    save_to_file,
    serialize_persistables,
    serialize_program,
)
from .parallel_executor import ParallelExecutor

__all__ = [
    "ParallelExecutor",
    "accuracy",
    "append_backward",
    "auc",
    "BuildStrategy",
    "CompiledProgram",
    "cpu_places",
    "CPUPlace",
    "create_global_var",
    "create_parameter",
    "cuda_places",
    "CUDAPlace",
    "data",
    "default_main_program",
    "default_startup_program",
    "deserialize_persistables",
    "deserialize_program",
    "device_guard",
    "ExecutionStrategy",
    "Executor",
    "ExponentialMovingAverage",
    "global_scope",
    "gradients",
    "InputSpec",
    "load",
    "load_from_file",
    "load_inference_model",
    "load_program_state",
    "load_vars",
    "name_scope",
    "nn",
    "Parameter",
    "Print",
    "Program",
    "program_guard",
    "py_func",
    "save",
    "save_inference_model",
    "save_to_file",
    "save_vars",
    "Scope",
    "scope_guard",
    "serialize_persistables",
    "serialize_program",
    "set_program_state",
    "Variable",
    "WeightNormParamAttr",
    "xpu_places",
]

__getattr__ = absent.getattr_for(__name__)
