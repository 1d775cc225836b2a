"""`fluid.data_feeder`: DataFeeder, and the argument checks Paddle's layers run (`check_type`,
`check_dtype`, `check_variable_and_dtype`, `convert_dtype`), with Paddle's messages, for scripts
and layers written against them.

As Paddle's, the checks do nothing in dygraph mode: there a bad argument fails on the line that
passes it, and the checks would cost every step.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..data.feeder import DataFeeder
from ..dygraph.tensor import Tensor
from ..ir import Variable, default_main_program
from .framework import in_dygraph_mode

# six.moves names Paddle's module imports (and so exports); on Python 3 they are the builtins
range = range  # noqa: A001, PLW0127
xrange = range
zip = zip  # noqa: A001, PLW0127

_DTYPES = ("bool", "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8")
_NUMPY_TYPES = {np.bool_: "bool", **{getattr(np, name): name for name in _DTYPES[1:]}}


def convert_dtype(dtype) -> str:
    """The dtype's name, for a name, a NumPy scalar type or a NumPy dtype; ValueError for any other."""
    if isinstance(dtype, type):
        name = _NUMPY_TYPES.get(dtype)
    elif isinstance(dtype, np.dtype):
        name = dtype.name if dtype.name in _DTYPES else None
    else:
        name = str(dtype) if dtype in _DTYPES else None
    if name is None:
        raise ValueError("dtype must be any of [bool, float16, float32, float64, int8, int16, int32, int64, uint8]")
    return name


def check_type(input, input_name: str, expected_type, op_name: str, extra_message: str = "") -> None:
    if in_dygraph_mode():
        return
    if not isinstance(input, expected_type):
        raise TypeError(
            f"The type of '{input_name}' in {op_name} must be {expected_type}, but received {type(input)}. "
            f"{extra_message}"
        )


def check_dtype(input_dtype, input_name: str, expected_dtype, op_name: str, extra_message: str = "") -> None:
    if in_dygraph_mode():
        return
    name = convert_dtype(input_dtype)
    if name == "float16":
        warnings.warn(
            f"The data type of '{input_name}' in {op_name} only support float16 in GPU now. {extra_message}",
            stacklevel=2,
        )
    if name not in expected_dtype:
        raise TypeError(
            f"The data type of '{input_name}' in {op_name} must be {expected_dtype}, but received {name}. "
            f"{extra_message}"
        )


def check_variable_and_dtype(input, input_name: str, expected_dtype, op_name: str, extra_message: str = "") -> None:
    check_type(input, input_name, (Variable, Tensor), op_name, extra_message)
    check_dtype(input.dtype, input_name, expected_dtype, op_name, extra_message)


__all__ = [
    "DataFeeder",
    "Variable",
    "check_dtype",
    "check_type",
    "check_variable_and_dtype",
    "convert_dtype",
    "default_main_program",
    "in_dygraph_mode",
    "range",
    "xrange",
    "zip",
]
