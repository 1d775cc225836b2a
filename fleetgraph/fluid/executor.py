"""`fluid.executor`: the Executor and the scope functions under their 1.8 module path, with the
names Paddle's module imports and scripts reach through it."""

from .. import absent
from .. import compat as cpt
from ..executor import Executor, global_scope, scope_guard
from ..ir import Operator, Program, Variable, default_main_program
from ..ir.dtypes import convert_dtype as convert_np_dtype_to_dtype_
from ..static import compiler

__getattr__ = absent.getattr_for(__name__)

__all__ = [
    "Executor",
    "Operator",
    "Program",
    "Variable",
    "compiler",
    "convert_np_dtype_to_dtype_",
    "cpt",
    "default_main_program",
    "global_scope",
    "scope_guard",
]
