"""What a pserver checks of a message before it uses it: its framing, and its value against the program."""

from __future__ import annotations

import numpy as np

from ...ir import FleetgraphError, VarType
from ...ops.selected_rows import SelectedRows
from .wire import MAGIC, Kind, Message


class Refused(FleetgraphError):
    """A message the pserver answers with an error (and logs), then goes on serving."""


def is_batch(body) -> bool:
    """A SEND_BATCH message (its header's kind byte), which `decode` reads in parts."""
    head = body[0].bytes if hasattr(body[0], "bytes") else bytes(body[0])
    return len(head) > 4 and head[:4] == MAGIC and head[4] == Kind.SEND_BATCH


def check_value(var, msg: Message) -> None:
    """The value must have the dtype, shape and kind (dense or sparse) the program declares."""
    value = msg.value
    if value is None:
        raise Refused(f"{msg.name!r} carries no value")
    sparse = isinstance(value, SelectedRows)
    if sparse != (var.type == VarType.SELECTED_ROWS):
        raise Refused(
            f"{msg.name!r}: expected {'sparse' if not sparse else 'dense'} rows, got {'sparse' if sparse else 'dense'}"
        )
    dense = value.value if sparse else value
    want_shape = tuple(var.shape[1:]) if sparse else tuple(var.shape)
    got_shape = tuple(dense.shape[1:]) if sparse else tuple(dense.shape)
    if dense.dtype != _dtype(var.dtype) or got_shape != want_shape or (sparse and value.height != var.shape[0]):
        raise Refused(
            f"{msg.name!r}: expected {var.dtype} {list(var.shape)}, got {dense.dtype.name} "
            f"{list(value.shape if sparse else dense.shape)}"
        )


_DTYPES: dict[str, np.dtype] = {}


def _dtype(name: str) -> np.dtype:
    """np.dtype(name), looked up once per name: a check per received array."""
    if name not in _DTYPES:
        _DTYPES[name] = np.dtype(name)
    return _DTYPES[name]
