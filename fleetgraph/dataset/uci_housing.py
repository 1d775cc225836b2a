"""UCI housing: 13 normalized features -> median price; the real housing.data when present, else a
synthetic set of the same shape (said once on stderr)."""

from __future__ import annotations

import numpy as np

from .common import find, warn_synthetic

FEATURE_NAMES = ["CRIM", "ZN", "INDUS", "CHAS", "NOX", "RM", "AGE", "DIS", "RAD", "TAX", "PTRATIO", "B", "LSTAT"]
TRAIN_RATIO = 0.8
_DATA: np.ndarray | None = None


def _synthetic(rows: int = 506) -> np.ndarray:
    """Features spread like the real ones, prices a fixed linear function plus noise (mean about 22)."""
    rng = np.random.default_rng(506)
    x = rng.uniform(0.0, 1.0, size=(rows, 13)) * rng.uniform(1.0, 100.0, size=13)
    w = rng.normal(0.0, 1.0, size=13) / x.std(axis=0)
    y = 22.5 + 4.0 * ((x - x.mean(axis=0)) @ w) / np.sqrt(13) + rng.normal(0.0, 1.0, size=rows)
    return np.column_stack([x, y])


def _load() -> np.ndarray:
    global _DATA
    if _DATA is None:
        path = find("uci_housing", "housing.data")
        if path:
            raw = np.fromfile(path, sep=" ")
            data = raw.reshape(raw.shape[0] // 14, 14)
        else:
            warn_synthetic("uci_housing", "506 rows of 13 features and a price, from a fixed linear model")
            data = _synthetic()
        # Paddle's normalization: (x - mean) / (max - min) per feature
        feats = data[:, :-1]
        data[:, :-1] = (feats - feats.mean(axis=0)) / (feats.max(axis=0) - feats.min(axis=0))
        _DATA = data
    return _DATA


def _reader(part: slice):
    def reader():
        for row in _load()[part]:
            yield row[:-1], row[-1:]

    return reader


def train():
    data = _load()
    return _reader(slice(0, int(len(data) * TRAIN_RATIO)))


def test():
    data = _load()
    return _reader(slice(int(len(data) * TRAIN_RATIO), None))
