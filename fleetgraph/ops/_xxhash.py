"""XXH64, the 64-bit xxHash that Paddle's hash op applies to each row's bytes (xxhash.h's
reference algorithm, in Python integers reduced to 64 bits)."""

from __future__ import annotations

_MASK = (1 << 64) - 1
_P1, _P2, _P3 = 11400714785074694791, 14029467366897019727, 1609587929392839161
_P4, _P5 = 9650029242287828579, 2870177450012600261


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _MASK


def _round(acc: int, lane: int) -> int:
    return (_rotl((acc + lane * _P2) & _MASK, 31) * _P1) & _MASK


def _merge(acc: int, v: int) -> int:
    return ((acc ^ _round(0, v)) * _P1 + _P4) & _MASK


def _word(data: bytes, at: int, size: int) -> int:
    return int.from_bytes(data[at : at + size], "little")


def xxh64(data: bytes, seed: int = 0) -> int:
    n, at = len(data), 0
    if n >= 32:
        v = [(seed + _P1 + _P2) & _MASK, (seed + _P2) & _MASK, seed & _MASK, (seed - _P1) & _MASK]
        while at + 32 <= n:
            v = [_round(v[i], _word(data, at + 8 * i, 8)) for i in range(4)]
            at += 32
        h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _MASK
        for lane in v:
            h = _merge(h, lane)
    else:
        h = (seed + _P5) & _MASK
    h = (h + n) & _MASK
    while at + 8 <= n:
        h = (_rotl(h ^ _round(0, _word(data, at, 8)), 27) * _P1 + _P4) & _MASK
        at += 8
    if at + 4 <= n:
        h = (_rotl(h ^ ((_word(data, at, 4) * _P1) & _MASK), 23) * _P2 + _P3) & _MASK
        at += 4
    while at < n:
        h = (_rotl(h ^ ((data[at] * _P5) & _MASK), 11) * _P1) & _MASK
        at += 1
    h ^= h >> 33
    h = (h * _P2) & _MASK
    h ^= h >> 29
    h = (h * _P3) & _MASK
    return h ^ (h >> 32)
