"""`paddle.static`: building and running static programs."""

from ..executor import Executor, Scope, global_scope, scope_guard
from ..executor.place import CPUPlace, CUDAPlace
from ..ir import Parameter, Program, Variable, default_main_program, default_startup_program, name_scope, program_guard
from ..layers.io import data
from ..layers.nn import accuracy, auc
from ..persistence import load, save
from ..persistence import static_load_inference_model as load_inference_model
from ..persistence import static_save_inference_model as save_inference_model
from ..transpiler.backward import append_backward, gradients
from . import nn


class CompiledProgram:
    """Paddle's wrapper for data-parallel execution; the executor runs the wrapped program."""

    def __init__(self, program_or_graph, build_strategy=None) -> None:
        self._program = program_or_graph

    def with_data_parallel(
        self, loss_name=None, build_strategy=None, exec_strategy=None, share_vars_from=None, places=None
    ):
        return self


def cpu_places(device_count=None):
    return [CPUPlace()] * (device_count or 1)


__all__ = [
    "CPUPlace",
    "CUDAPlace",
    "CompiledProgram",
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
