"""Data types as Paddle spells them ('float32', 'int64', ...), converted from whatever users pass."""

from __future__ import annotations

import numpy as np

from .errors import DTypeError, close_matches

DTYPES = ("float16", "float32", "float64", "int8", "uint8", "int16", "int32", "int64", "bool")
FLOAT_DTYPES = ("float16", "float32", "float64")

_ALIASES = {"float": "float32", "double": "float64", "int": "int32", "long": "int64", "fp32": "float32"}


def convert_dtype(dtype) -> str:
    """Normalize a dtype given as a string, a NumPy dtype or type, or a framework constant."""
    if isinstance(dtype, str):
        name = dtype.lower().rsplit(".", 1)[-1]  # 'paddle.float32' -> 'float32'
        name = _ALIASES.get(name, name)
        if name in DTYPES:
            return name
        raise DTypeError(f"unknown dtype {dtype!r}{close_matches(name, DTYPES)}; expected one of {', '.join(DTYPES)}")
    try:
        name = np.dtype(dtype).name
    except TypeError:
        raise DTypeError(f"unknown dtype {dtype!r}; expected one of {', '.join(DTYPES)}") from None
    if name not in DTYPES:
        raise DTypeError(f"unsupported dtype {name!r}; expected one of {', '.join(DTYPES)}")
    return name


def is_float(dtype: str) -> bool:
    return dtype in FLOAT_DTYPES
