"""The program IR: Program / Block / Operator / Variable, the op registry, verify and serialization."""

from . import unique_name
from .clone import clone_program
from .dtypes import DTYPES, convert_dtype
from .errors import (
    DTypeError,
    EOFException,
    FleetgraphError,
    FleetgraphTypeError,
    FleetgraphValueError,
    KernelError,
    ShapeError,
    UnknownNameError,
    VerifyError,
)
from .framework import (
    default_main_program,
    default_startup_program,
    device_guard,
    get_default_dtype,
    name_scope,
    program_guard,
    set_default_dtype,
    switch_main_program,
    switch_startup_program,
)
from .program import Block, Operator, OpRole, Parameter, Program, Variable, VarType, op_summary
from .prune import prune_with_input
from .registry import InferContext, OpDef, get_op_def, make_grad_op, register_op, registered_ops
from .serialize import load_arrays, load_program, program_from_json, program_to_json, save_arrays, save_program
from .verify import verify

# Paddle's Program methods whose work lives in modules that import `program`: attached here, above both.
Program.clone = clone_program
Program._prune_with_input = prune_with_input

__all__ = [
    "Block",
    "DTYPES",
    "DTypeError",
    "EOFException",
    "FleetgraphError",
    "FleetgraphTypeError",
    "FleetgraphValueError",
    "InferContext",
    "KernelError",
    "OpDef",
    "OpRole",
    "Operator",
    "Parameter",
    "Program",
    "ShapeError",
    "UnknownNameError",
    "VarType",
    "Variable",
    "VerifyError",
    "convert_dtype",
    "default_main_program",
    "default_startup_program",
    "get_default_dtype",
    "get_op_def",
    "load_arrays",
    "device_guard",
    "name_scope",
    "load_program",
    "make_grad_op",
    "op_summary",
    "program_from_json",
    "program_guard",
    "set_default_dtype",
    "program_to_json",
    "register_op",
    "registered_ops",
    "save_arrays",
    "save_program",
    "switch_main_program",
    "switch_startup_program",
    "unique_name",
    "verify",
]
