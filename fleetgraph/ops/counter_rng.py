"""Counter-based random numbers: element i of a draw is a pure function of (key, i).

A random init op fills a variable from one key (made from the op's seed and the variable's name).
Because every element depends only on the key and its flat index, any rows can be drawn alone and
equal what drawing the whole variable gives: a pserver draws just the rows it holds, and a lazily
grown sparse table draws a row the first time an id touches it, with no stream to replay. The bits
come from SplitMix64's finalizer over (key + index * golden ratio), a well-tested 64-bit mixer that
NumPy vectorizes; uniform doubles take the top 53 bits, normals come from Box-Muller over two
independent streams, truncated normals redraw out-of-range elements from further streams.
"""

from __future__ import annotations

import zlib

import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = (np.uint64(s) for s in (30, 27, 31, 11))
CHUNK = 1 << 20  # elements drawn at a time: bounds the temporaries of a large draw


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finalizer, in place on uint64."""
    x ^= x >> _S30
    x *= _M1
    x ^= x >> _S27
    x *= _M2
    x ^= x >> _S31
    return x


def derive_key(seed: int, name: str) -> int:
    """The key of a seeded op writing `name`: ops sharing a seed still draw different numbers, and
    every program that initializes the same variable (a pserver's, a trainer's) draws the same."""
    x = np.array([(int(seed) & 0xFFFFFFFF) << 32 | zlib.crc32(name.encode())], dtype=np.uint64)
    return int(_mix(x)[0])


class CounterRNG:
    """Draws for one key. `index` arguments are flat element indices (uint64-convertible arrays)."""

    __slots__ = ("key", "drawn")

    def __init__(self, key: int) -> None:
        self.key = int(key) & 0xFFFFFFFFFFFFFFFF
        self.drawn = 0  # elements handed out by `fresh`: each draw of a fresh array continues the stream

    def fresh(self, count: int) -> np.ndarray:
        """The next `count` element indices of this stream: a kernel drawing a new array each call
        (dropout's mask, nce's samples) gets new numbers each call, until its op is reseeded."""
        index = np.arange(self.drawn, self.drawn + count, dtype=np.uint64)
        self.drawn += count
        return index

    def bits(self, index: np.ndarray, stream: int = 0) -> np.ndarray:
        salt = (self.key ^ (stream * 0x632BE59BD9B4E019)) & 0xFFFFFFFFFFFFFFFF
        stream_key = np.uint64(_mix(np.array([salt], np.uint64))[0])
        with np.errstate(over="ignore"):
            x = (np.asarray(index, dtype=np.uint64) + np.uint64(1)) * _GOLDEN
            x += stream_key
        return _mix(x)

    def uniform01(self, index: np.ndarray, stream: int = 0) -> np.ndarray:
        """Doubles in [0, 1)."""
        return (self.bits(index, stream) >> _S11).astype(np.float64) * (1.0 / (1 << 53))

    def standard_normal(self, index: np.ndarray, stream: int = 1) -> np.ndarray:
        u1 = self.uniform01(index, stream)
        u2 = self.uniform01(index, stream + 1)
        return np.sqrt(-2.0 * np.log1p(-u1)) * np.cos(2.0 * np.pi * u2)

    def truncated_normal(self, index: np.ndarray, bound: float = 2.0) -> np.ndarray:
        """Standard normals redrawn (from the next pair of streams) until within +-bound."""
        index = np.asarray(index, dtype=np.uint64)
        out = self.standard_normal(index, 1)
        bad = np.flatnonzero(np.abs(out) > bound)
        stream = 3
        while bad.size:
            out[bad] = self.standard_normal(index[bad], stream)
            bad = bad[np.abs(out[bad]) > bound]
            stream += 2
        return out

    # -- NumPy Generator's spelling, for kernels that draw a fresh array (dropout's mask) -------------
    def uniform(self, low: float = 0.0, high: float = 1.0, size=None) -> np.ndarray:
        shape = () if size is None else tuple(np.atleast_1d(size))
        count = int(np.prod(shape, dtype=np.int64))
        return (low + (high - low) * self.uniform01(self.fresh(count))).reshape(shape)


# -- what each random init op draws for given elements ---------------------------------------------


def _uniform(rng: CounterRNG, index, attrs) -> np.ndarray:
    low, high = attrs["min"], attrs["max"]
    return low + (high - low) * rng.uniform01(index)


def _gaussian(rng: CounterRNG, index, attrs) -> np.ndarray:
    return attrs["mean"] + attrs["std"] * rng.standard_normal(index)


def _truncated_gaussian(rng: CounterRNG, index, attrs) -> np.ndarray:
    """Paddle's truncated_gaussian_random keeps values within two standard deviations of the mean."""
    return attrs["mean"] + attrs["std"] * rng.truncated_normal(index, 2.0)


INIT_DRAWS = {
    "uniform_random": _uniform,
    "gaussian_random": _gaussian,
    "truncated_gaussian_random": _truncated_gaussian,
}


def draw_elements(op_type: str, attrs: dict, rng: CounterRNG, index: np.ndarray, dtype) -> np.ndarray:
    """The values init op `op_type` gives the flat elements `index` of its variable."""
    return INIT_DRAWS[op_type](rng, index, attrs).astype(dtype)


def draw_full(op_type: str, attrs: dict, rng: CounterRNG, shape, dtype) -> np.ndarray:
    """The whole variable, drawn a chunk at a time into an array of `dtype` (no float64 copy of it)."""
    out = np.empty(shape, dtype=dtype)
    flat = out.reshape(-1)
    for start in range(0, flat.size, CHUNK):
        stop = min(start + CHUNK, flat.size)
        flat[start:stop] = INIT_DRAWS[op_type](rng, np.arange(start, stop, dtype=np.uint64), attrs)
    return out


def draw_rows(op_type: str, attrs: dict, rng: CounterRNG, rows: np.ndarray, width: int, dtype) -> np.ndarray:
    """Rows `rows` (global row ids) of a [*, width] variable, as the whole variable's draw has them."""
    rows = np.asarray(rows, dtype=np.uint64)
    index = (rows[:, None] * np.uint64(width) + np.arange(width, dtype=np.uint64)).reshape(-1)
    return draw_elements(op_type, attrs, rng, index, dtype).reshape(len(rows), width)
