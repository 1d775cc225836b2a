"""Random number generators for random ops: seeded per op when the op has a seed, else one global one."""

from __future__ import annotations

import zlib

import numpy as np

_global = np.random.default_rng()


def seed(value: int) -> None:
    """Make unseeded random ops (seed attr 0) reproducible from here on, like `paddle.seed`."""
    global _global
    _global = np.random.default_rng(int(value))


def generator_for(op_seed: int, key: str) -> np.random.Generator:
    """A seeded op draws the same numbers on every run. Its stream is keyed by the variable it writes,
    not its position, so ops sharing a seed still draw different numbers, and a rewritten program (a
    pserver's startup) that initializes the same variable draws the same values."""
    if op_seed:
        return np.random.default_rng([int(op_seed), zlib.crc32(key.encode())])
    return _global
