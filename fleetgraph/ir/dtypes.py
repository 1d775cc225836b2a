"""Data types as Paddle spells them ('float32', 'int64', ...), converted from whatever users pass.

bfloat16 is NumPy's only through ml_dtypes, whose import registers the name with NumPy
(`np.dtype('bfloat16')`); its values are IEEE float32 with the low 16 bits rounded away."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from .errors import DTypeError, close_matches

DTYPES = ("float16", "bfloat16", "float32", "float64", "int8", "uint8", "int16", "int32", "int64", "bool")
FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")
BFLOAT16 = np.dtype(ml_dtypes.bfloat16)

# Paddle's VarDesc.VarType codes (framework.proto), which int dtype attrs hold (cast's in_dtype, ...)
VAR_TYPE_CODES = {
    "bool": 0, "int16": 1, "int32": 2, "int64": 3, "float16": 4, "float32": 5, "float64": 6,
    "uint8": 20, "int8": 21, "bfloat16": 22,
}  # fmt: skip
_CODE_NAMES = {code: name for name, code in VAR_TYPE_CODES.items()}

_ALIASES = {"float": "float32", "double": "float64", "int": "int32", "long": "int64", "fp32": "float32"}


def convert_dtype(dtype) -> str:
    """Normalize a dtype given as a string, a NumPy dtype or type, a framework constant or Paddle's
    VarType code (22 is bfloat16)."""
    if isinstance(dtype, str):
        name = dtype.lower().rsplit(".", 1)[-1]  # 'paddle.float32' -> 'float32'
        name = _ALIASES.get(name, name)
        if name in DTYPES:
            return name
        raise DTypeError(f"unknown dtype {dtype!r}{close_matches(name, DTYPES)}; expected one of {', '.join(DTYPES)}")
    if isinstance(dtype, (int, np.integer)) and not isinstance(dtype, bool):
        if int(dtype) in _CODE_NAMES:
            return _CODE_NAMES[int(dtype)]
        raise DTypeError(f"unknown VarType code {dtype}; expected one of {sorted(_CODE_NAMES)}")
    try:
        name = np.dtype(dtype).name
    except TypeError:
        raise DTypeError(f"unknown dtype {dtype!r}; expected one of {', '.join(DTYPES)}") from None
    if name not in DTYPES:
        raise DTypeError(f"unsupported dtype {name!r}; expected one of {', '.join(DTYPES)}")
    return name


def is_float(dtype: str) -> bool:
    return dtype in FLOAT_DTYPES
