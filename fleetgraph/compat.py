"""`paddle.compat` (Fluid's `cpt`): text/bytes conversion and Python-2-compatible rounding."""

from __future__ import annotations

import math

__all__ = ["long_type", "to_text", "to_bytes", "round", "floor_division", "get_exception_message"]

int_type = int
long_type = int


def _convert(obj, one, inplace: bool, dicts: bool):
    """Apply `one` to obj, or to each item of a list or set (each key and value of a dict if `dicts`)."""
    if isinstance(obj, list):
        items = [one(item) for item in obj]
        if inplace:
            obj[:] = items
            return obj
        return items
    if isinstance(obj, set):
        items = {one(item) for item in obj}
        if inplace:
            obj.clear()
            obj.update(items)
            return obj
        return items
    if isinstance(obj, dict) and dicts:
        items = {one(k): one(v) for k, v in obj.items()}
        if inplace:
            obj.clear()
            obj.update(items)
            return obj
        return items
    return one(obj)


def _to_text(obj, encoding="utf-8"):
    if isinstance(obj, bytes):
        return obj.decode(encoding)
    if obj is None or isinstance(obj, (str, bool, float)):
        return obj
    return str(obj)


def _to_bytes(obj, encoding="utf-8"):
    if isinstance(obj, str):
        return obj.encode(encoding)
    if obj is None or isinstance(obj, bytes):
        return obj
    return str(obj).encode(encoding)


def to_text(obj, encoding="utf-8", inplace=False):
    """obj as str (bytes decoded); lists, sets and dicts item by item, in place if asked; None stays."""
    return _convert(obj, lambda item: _to_text(item, encoding), inplace, dicts=True)


def to_bytes(obj, encoding="utf-8", inplace=False):
    """obj as bytes (str encoded); lists and sets item by item, in place if asked."""
    return _convert(obj, lambda item: _to_bytes(item, encoding), inplace, dicts=False)


def round(x, d=0):  # noqa: A001 - Paddle's name
    """Round half away from zero (Python 2's rule; Python 3 rounds half to even), keeping -0.0."""
    if x > 0.0:
        p = 10**d
        return float(math.floor(x * p + 0.5)) / p
    if x < 0.0:
        p = 10**d
        return float(math.ceil(x * p - 0.5)) / p
    return math.copysign(0.0, x)


def floor_division(x, y):
    return x // y


def get_exception_message(exc) -> str:
    assert exc is not None
    return str(exc)
