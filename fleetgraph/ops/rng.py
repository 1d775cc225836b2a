"""Random streams for random ops: a seeded op draws from a key made of its seed and the variable it
writes; an unseeded one from a key taken from one global generator (fixed by `paddle.seed`)."""

from __future__ import annotations

import numpy as np

from .counter_rng import CounterRNG, derive_key

_global = np.random.default_rng()


def seed(value: int) -> None:
    """Make unseeded random ops (seed attr 0) reproducible from here on, like `paddle.seed`."""
    global _global
    _global = np.random.default_rng(int(value))


def generator_for(op_seed: int, key: str) -> CounterRNG:
    """A seeded op draws the same numbers on every run. Its key comes from the variable it writes,
    not its position, so ops sharing a seed still draw different numbers, and a rewritten program (a
    pserver's startup) that initializes the same variable draws the same values."""
    if op_seed:
        return CounterRNG(derive_key(op_seed, key))
    return CounterRNG(int(_global.integers(0, 2**63)))
