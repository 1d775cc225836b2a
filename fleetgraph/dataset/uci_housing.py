"""UCI housing (`paddle.dataset.uci_housing`): samples (13 normalized float64 features, [median
price]) from housing.data under uci_housing/ in Paddle's cache when present, else a synthetic set of
the same shape (said once on stderr). As Paddle's, each feature becomes (x - mean) / (max - min) over
all rows, and the first 80% of the rows are the training set.

Paddle's load_data also saved a bar chart of the features' ranges to ./image/ranges.png (with
matplotlib); this one draws nothing."""

from __future__ import annotations

import numpy as np

from .. import absent
from .common import find, warn_synthetic

__all__ = ["test", "train"]

feature_names = ["CRIM", "ZN", "INDUS", "CHAS", "NOX", "RM", "AGE", "DIS", "RAD", "TAX", "PTRATIO", "B", "LSTAT"]
FEATURE_NAMES = feature_names
TRAIN_RATIO = 0.8
_DATA: np.ndarray | None = None  # the normalized rows, the first _RATIO of them for training
_RATIO = TRAIN_RATIO
_absent = absent.getattr_for(__name__)


def __getattr__(name: str):
    """Paddle's module globals UCI_TRAIN_DATA and UCI_TEST_DATA: None until the data is loaded."""
    if name in ("UCI_TRAIN_DATA", "UCI_TEST_DATA"):
        if _DATA is None:
            return None
        offset = int(_DATA.shape[0] * _RATIO)
        return _DATA[:offset] if name == "UCI_TRAIN_DATA" else _DATA[offset:]
    return _absent(name)  # Paddle's names fleetgraph lacks raise saying why; others, AttributeError


def _synthetic(rows: int = 506) -> np.ndarray:
    """Features spread like the real ones, prices a fixed linear function plus noise (mean about 22)."""
    rng = np.random.default_rng(506)
    x = rng.uniform(0.0, 1.0, size=(rows, 13)) * rng.uniform(1.0, 100.0, size=13)
    w = rng.normal(0.0, 1.0, size=13) / x.std(axis=0)
    y = 22.5 + 4.0 * ((x - x.mean(axis=0)) @ w) / np.sqrt(13) + rng.normal(0.0, 1.0, size=rows)
    return np.column_stack([x, y])


def _use(data: np.ndarray, ratio: float) -> None:
    global _DATA, _RATIO
    feats = data[:, :-1]
    data[:, :-1] = (feats - feats.mean(axis=0)) / (feats.max(axis=0) - feats.min(axis=0))
    _DATA, _RATIO = data, ratio


def load_data(filename: str, feature_num: int = 14, ratio: float = 0.8) -> None:
    """Reads rows of feature_num numbers (the last the price) from filename, normalizes and splits
    them at ratio; once loaded, later calls change nothing (as Paddle's)."""
    if _DATA is None:
        raw = np.fromfile(filename, sep=" ")
        _use(raw.reshape(raw.shape[0] // feature_num, feature_num), ratio)


def _load() -> tuple[np.ndarray, int]:
    if _DATA is None:
        path = find("uci_housing", "housing.data")
        if path:
            load_data(path, ratio=TRAIN_RATIO)
        else:
            warn_synthetic("uci_housing", "506 rows of 13 features and a price, from a fixed linear model")
            _use(_synthetic(), TRAIN_RATIO)
    return _DATA, int(_DATA.shape[0] * _RATIO)


def _reader(train_part: bool):
    def reader():
        data, offset = _load()
        for row in data[:offset] if train_part else data[offset:]:
            yield row[:-1], row[-1:]

    return reader


def train():
    """The first 80% of the rows: (features, [price])."""
    _load()
    return _reader(True)


def test():
    _load()
    return _reader(False)


def predict_reader() -> tuple[np.ndarray]:
    """The first test row's features, alone in a tuple, for an inference example."""
    data, offset = _load()
    return (data[offset][:-1],)


def fetch() -> None:
    """Makes the data ready: nothing is downloaded; Paddle's file is read, or the synthetic set is made
    (and said on stderr)."""
    _load()
