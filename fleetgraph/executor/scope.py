"""Scopes hold the values of variables between runs (parameters, optimizer state)."""

from __future__ import annotations

import contextlib
from collections import ChainMap

import numpy as np

from ..ops.lod_tensor import LoDTensor, LoDTensorArray, placed


class Tensor:
    """A view of one scope entry with Paddle's LoDTensor surface: `np.array(t)`, `t.set(a, place)`,
    the LoD methods. What it writes goes into the scope, so the next run sees it; the entry is a
    LoDTensor only while it has a LoD (kernels of plain variables get plain arrays)."""

    def __init__(self, scope: Scope, name: str) -> None:
        self._scope, self._name = scope, name

    def __array__(self, dtype=None, copy=None):
        """The value (`copy=True`: a copy, which the next run's in-place optimizer update leaves alone)."""
        value = np.asarray(self._scope.vars[self._name])
        if dtype is not None:
            return value.astype(dtype, copy=bool(copy))
        return value.copy() if copy else value

    def _lod_tensor(self) -> LoDTensor:
        value = self._scope.vars.get(self._name)
        return value if isinstance(value, LoDTensor) else LoDTensor(value)

    def _update(self, method: str, *args):
        """Apply a LoDTensor method to the entry and store the result back into the scope."""
        tensor = self._lod_tensor()
        result = getattr(tensor, method)(*args)
        self._scope.vars[self._name] = tensor if tensor.levels else tensor.data
        return result

    def set(self, array, place=None) -> None:
        """A copy of `array` as the value, in the array module of `place` (a GPU's, a strict one) when
        given; the LoD stays. Whatever the entry held before (a table, nothing yet) is replaced."""
        old = self._scope.vars.get(self._name)
        data = placed(array, place)
        self._scope.vars[self._name] = (
            LoDTensor(data, old.levels) if isinstance(old, LoDTensor) and old.levels else data
        )

    def _set_dims(self, dims) -> None:
        self._update("_set_dims", dims)

    def _alloc_float(self, place=None) -> None:
        self._update("_alloc_float", place)

    def _alloc_int(self, place=None) -> None:
        self._update("_alloc_int", place)

    def set_lod(self, lod) -> None:
        self._update("set_lod", lod)

    def set_recursive_sequence_lengths(self, lengths) -> None:
        self._update("set_recursive_sequence_lengths", lengths)

    def _get_dims(self) -> list[int]:
        return self._lod_tensor()._get_dims()

    def shape(self) -> list[int]:
        return self._get_dims()

    def lod(self) -> list[list[int]]:
        return self._lod_tensor().lod()

    def recursive_sequence_lengths(self) -> list[list[int]]:
        return self._lod_tensor().recursive_sequence_lengths()

    def has_valid_recursive_sequence_lengths(self) -> bool:
        return self._lod_tensor().has_valid_recursive_sequence_lengths()

    def _dtype(self):
        return np.asarray(self._scope.vars[self._name]).dtype

    def __getitem__(self, index) -> LoDTensor:
        return self._lod_tensor()[index]

    def __repr__(self) -> str:
        return f"Tensor({self._name!r}, {np.asarray(self._scope.vars.get(self._name))!r})"


class ScopeVar:
    def __init__(self, scope: Scope, name: str) -> None:
        self._scope, self.name = scope, name

    def get_tensor(self) -> Tensor:
        return Tensor(self._scope, self.name)

    get_selected_rows = get_tensor

    def get_lod_tensor_array(self) -> LoDTensorArray:
        """A tensor array's elements as LoDTensors (Paddle's LoDTensorArray is a list of them)."""
        value = self._scope.vars.get(self.name)
        if not isinstance(value, list):
            raise TypeError(f"variable {self.name!r} holds {type(value).__name__}, not a tensor array")
        return LoDTensorArray(v if isinstance(v, LoDTensor) else LoDTensor(np.asarray(v)) for v in value)

    def set_int(self, value: int) -> None:
        self._scope.vars[self.name] = int(value)

    def is_int(self) -> bool:
        return type(self._scope.vars.get(self.name)) is int

    def get_int(self) -> int:
        value = self._scope.vars.get(self.name)
        if type(value) is not int:
            raise TypeError(f"variable {self.name!r} holds {type(value).__name__}, not an int")
        return value


class _Entries(ChainMap):
    """A kid scope's entries: its own, then its ancestors'. As in Paddle, an entry an ancestor holds is
    updated where it lives (a kid scope's run trains its parent's parameters); a new one is the kid's."""

    def __setitem__(self, name: str, value) -> None:
        for entries in self.maps:
            if name in entries:
                entries[name] = value
                return
        self.maps[0][name] = value


class Scope:
    """A name -> array map; `find_var(name).get_tensor()` reads it the way Paddle scripts do. A kid
    scope (`new_scope()`) sees its ancestors' entries."""

    def __init__(self, parent: Scope | None = None) -> None:
        self.vars: dict[str, object] | _Entries = {} if parent is None else _Entries({}, parent.vars)
        self._parent, self._kids = parent, []

    def var(self, name: str) -> ScopeVar:
        """The variable `name`, declared here (holding nothing yet) unless this scope or an ancestor has it."""
        if name not in self.vars:
            self.vars[name] = None
        return ScopeVar(self, name)

    def find_var(self, name: str) -> ScopeVar | None:
        """The variable declared as `name` here or in an ancestor; None when there is none."""
        return ScopeVar(self, name) if name in self.vars else None

    def local_var_names(self) -> list[str]:
        return list(self.vars.maps[0] if isinstance(self.vars, _Entries) else self.vars)

    def new_scope(self) -> Scope:
        kid = Scope(self)
        self._kids.append(kid)
        return kid

    def parent(self) -> Scope | None:
        return self._parent

    def drop_kids(self) -> None:
        """Forget the kid scopes (their entries go with them; the ancestors' stay)."""
        self._kids.clear()

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
