"""What the registry and the op checks read of an op, its block and its variables, declared as
protocols: `program.Operator`, `Block` and `Variable` satisfy them, and `program` imports the
registry to append ops, so the registry must not import `program` back."""

from __future__ import annotations

from typing import Any, Protocol


class VarView(Protocol):
    name: str
    shape: tuple[int, ...]
    dtype: str
    lod_level: int
    type: Any


class OpView(Protocol):
    type: str
    inputs: dict[str, list[str]]
    outputs: dict[str, list[str]]
    attrs: dict[str, Any]


class BlockView(Protocol):
    def var_recursive(self, name: str) -> VarView: ...
