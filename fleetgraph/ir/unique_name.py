"""Unique variable and layer names (`fc_0`, `fc_0.w_0`), with `guard()` to start a fresh namespace."""

from __future__ import annotations

import contextlib
from collections import defaultdict


class UniqueNameGenerator:
    def __init__(self, prefix: str = "") -> None:
        self.prefix = prefix
        self.ids: dict[str, int] = defaultdict(int)

    def __call__(self, key: str) -> str:
        n = self.ids[key]
        self.ids[key] += 1
        return f"{self.prefix}{key}_{n}"


_generator = UniqueNameGenerator()


def generate(key: str) -> str:
    """'fc' -> 'fc_0', then 'fc_1', ... within the current namespace."""
    return _generator(key)


def generate_with_ignorable_key(key: str) -> str:
    return _generator(key)


def switch(new_generator: UniqueNameGenerator | None = None) -> UniqueNameGenerator:
    global _generator
    old, _generator = _generator, new_generator or UniqueNameGenerator()
    return old


@contextlib.contextmanager
def guard(new_generator: str | UniqueNameGenerator | None = None):
    """Names generated inside start from zero again (a string becomes a prefix)."""
    if isinstance(new_generator, str):
        new_generator = UniqueNameGenerator(new_generator)
    old = switch(new_generator)
    try:
        yield
    finally:
        switch(old)
