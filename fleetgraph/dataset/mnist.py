"""MNIST digits (784 pixels scaled to [-1, 1], label 0-9): the real IDX files when present, else a
synthetic separable set of the same shape (said once on stderr)."""

from __future__ import annotations

import gzip

import numpy as np

from .common import find, warn_synthetic

_FILES = {
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}
_SYNTHETIC_ROWS = {"train": 6000, "test": 1000}


def _read_idx(path: str, header: int) -> np.ndarray:
    with gzip.open(path, "rb") as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=header)


def _synthetic(part: str) -> tuple[np.ndarray, np.ndarray]:
    """Ten fixed prototypes close to a shared pattern; each sample is its class prototype plus strong
    noise, so the classes are separable but take some training to tell apart."""
    base_rng = np.random.default_rng(784)
    protos = base_rng.uniform(-0.5, 0.5, size=784) + 0.08 * base_rng.normal(size=(10, 784))
    rng = np.random.default_rng(0 if part == "train" else 1)
    labels = rng.integers(0, 10, size=_SYNTHETIC_ROWS[part])
    images = np.clip(protos[labels] + rng.normal(0.0, 0.5, size=(len(labels), 784)), -1.0, 1.0)
    return images.astype(np.float32), labels.astype(np.int64)


def _load(part: str):
    img_file, lbl_file = _FILES[part]
    img_path, lbl_path = find("mnist", img_file), find("mnist", lbl_file)
    if img_path and lbl_path:
        images = _read_idx(img_path, 16).reshape(-1, 784).astype(np.float32) / 255.0 * 2.0 - 1.0
        return images, _read_idx(lbl_path, 8).astype(np.int64)
    warn_synthetic("mnist", "10 classes of noisy fixed 784-pixel prototypes")
    return _synthetic(part)


def _reader(part: str):
    def reader():
        images, labels = _load(part)
        for image, label in zip(images, labels):
            yield image, int(label)

    return reader


def train():
    return _reader("train")


def test():
    return _reader("test")
