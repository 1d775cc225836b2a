"""`paddle.static`: building and running static programs."""

from ..executor import Executor, Scope, global_scope, scope_guard
from ..executor.place import CPUPlace, CUDAPlace
from ..ir import Parameter, Program, Variable, default_main_program, default_startup_program, name_scope, program_guard
from ..layers.control_flow import Print
from ..layers.io import data
from ..layers.nn import accuracy, auc
from ..optimizer.ema import ExponentialMovingAverage
from ..store.persistence import load, save
from ..store.persistence import static_load_inference_model as load_inference_model
from ..store.persistence import static_save_inference_model as save_inference_model
from ..transpiler.backward import append_backward, gradients
from . import nn
from .compiler import BuildStrategy, CompiledProgram, ExecutionStrategy, cpu_places

__all__ = [
    "Print",
    "BuildStrategy",
    "CPUPlace",
    "CUDAPlace",
    "CompiledProgram",
    "ExecutionStrategy",
    "ExponentialMovingAverage",
    "Executor",
    "Parameter",
    "Program",
    "Scope",
    "Variable",
    "accuracy",
    "append_backward",
    "auc",
    "cpu_places",
    "data",
    "default_main_program",
    "default_startup_program",
    "global_scope",
    "gradients",
    "load",
    "load_inference_model",
    "nn",
    "name_scope",
    "program_guard",
    "save",
    "save_inference_model",
    "scope_guard",
]
