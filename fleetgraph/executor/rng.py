"""Random number generators for random ops: seeded per op when the op has a seed, else one global one."""

from __future__ import annotations

import numpy as np

_global = np.random.default_rng()


def seed(value: int) -> None:
    """Make unseeded random ops (seed attr 0) reproducible from here on, like `paddle.seed`."""
    global _global
    _global = np.random.default_rng(int(value))


def generator_for(op_seed: int, op_index: int) -> np.random.Generator:
    """A seeded op draws the same numbers on every run; ops sharing a seed still draw different ones."""
    if op_seed:
        return np.random.default_rng([int(op_seed), int(op_index)])
    return _global
