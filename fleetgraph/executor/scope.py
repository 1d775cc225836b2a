"""Scopes hold the values of variables between runs (parameters, optimizer state)."""

from __future__ import annotations

import contextlib

import numpy as np

from ..ops.lod_tensor import LoDTensor


class Tensor:
    """A view of one scope entry with Paddle's LoDTensor surface: `np.array(t)`, `t.set(a, place)`."""

    def __init__(self, scope: Scope, name: str) -> None:
        self._scope, self._name = scope, name

    def __array__(self, dtype=None, copy=None):
        """The value (`copy=True`: a copy, which the next run's in-place optimizer update leaves alone)."""
        value = np.asarray(self._scope.vars[self._name])
        if dtype is not None:
            return value.astype(dtype, copy=bool(copy))
        return value.copy() if copy else value

    def set(self, array, place=None) -> None:
        """A copy of `array` as the value, in the array module of `place` (a GPU's, a strict one) when given."""
        value = np.array(array)
        module = getattr(place, "array_module", None)
        self._scope.vars[self._name] = value if module is None else module().asarray(value)

    def shape(self) -> list[int]:
        return list(np.shape(self._scope.vars[self._name]))

    def lod(self) -> list[list[int]]:
        value = self._scope.vars[self._name]
        return value.lod() if isinstance(value, LoDTensor) else []

    def recursive_sequence_lengths(self) -> list[list[int]]:
        value = self._scope.vars[self._name]
        return value.recursive_sequence_lengths() if isinstance(value, LoDTensor) else []

    def _dtype(self):
        return np.asarray(self._scope.vars[self._name]).dtype

    def __repr__(self) -> str:
        return f"Tensor({self._name!r}, {np.asarray(self._scope.vars.get(self._name))!r})"


class ScopeVar:
    def __init__(self, scope: Scope, name: str) -> None:
        self._scope, self.name = scope, name

    def get_tensor(self) -> Tensor:
        return Tensor(self._scope, self.name)

    get_selected_rows = get_tensor

    def get_lod_tensor_array(self) -> list[LoDTensor]:
        """A tensor array's elements as LoDTensors (Paddle's LoDTensorArray is a list of them)."""
        value = self._scope.vars.get(self.name)
        if not isinstance(value, list):
            raise TypeError(f"variable {self.name!r} holds {type(value).__name__}, not a tensor array")
        return [v if isinstance(v, LoDTensor) else LoDTensor(np.asarray(v)) for v in value]


class Scope:
    """A name -> array map; `find_var(name).get_tensor()` reads it the way Paddle scripts do."""

    def __init__(self) -> None:
        self.vars: dict[str, object] = {}

    def var(self, name: str) -> ScopeVar:
        self.vars.setdefault(name, None)
        return ScopeVar(self, name)

    def find_var(self, name: str) -> ScopeVar | None:
        return ScopeVar(self, name) if self.vars.get(name) is not None else None

    def local_var_names(self) -> list[str]:
        return list(self.vars)

    def drop_kids(self) -> None:
        """Paddle frees child scopes here; a fleetgraph scope has none."""

    def __contains__(self, name: str) -> bool:
        return self.vars.get(name) is not None


_global_scope = Scope()


def global_scope() -> Scope:
    return _global_scope


@contextlib.contextmanager
def scope_guard(scope: Scope):
    global _global_scope
    old, _global_scope = _global_scope, scope
    try:
        yield
    finally:
        _global_scope = old
