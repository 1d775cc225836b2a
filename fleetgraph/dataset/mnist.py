"""MNIST digits (`paddle.dataset.mnist`): samples (784 float32 pixels scaled to [-1, 1], int label 0-9)
read from the IDX files (train-images-idx3-ubyte.gz ...) under mnist/ in Paddle's cache when present,
else a synthetic separable set of the same shape (6,000 training and 1,000 test samples; said once on
stderr)."""

from __future__ import annotations

import gzip

import numpy as np

from .common import find, warn_synthetic

__all__ = ["test", "train"]

_FILES = {
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}
_SYNTHETIC_ROWS = {"train": 6000, "test": 1000}
_WHAT = "10 classes of noisy fixed 784-pixel prototypes"


def _read_idx(path: str, header: int) -> np.ndarray:
    with gzip.open(path, "rb") as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=header)


def _read_pair(image_filename: str, label_filename: str) -> tuple[np.ndarray, np.ndarray]:
    """Images (past their 16-byte header) scaled as Paddle's: x / 255 * 2 - 1; labels past their 8."""
    images = _read_idx(image_filename, 16).reshape(-1, 784).astype(np.float32) / 255.0 * 2.0 - 1.0
    return images, _read_idx(label_filename, 8).astype(np.int64)


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
    img_path, lbl_path = (find("mnist", f) for f in _FILES[part])
    if img_path and lbl_path:
        return _read_pair(img_path, lbl_path)
    warn_synthetic("mnist", _WHAT)
    return _synthetic(part)


def _samples(images: np.ndarray, labels: np.ndarray):
    for image, label in zip(images, labels):
        yield image, int(label)


def reader_creator(image_filename: str, label_filename: str, buffer_size: int = 100):
    """A reader of one pair of gzipped IDX files, read when called (buffer_size was the number of
    samples Paddle's unpacked at a time; the samples are the same for any)."""
    if not isinstance(buffer_size, int) or buffer_size < 1:
        raise ValueError(f"mnist.reader_creator: buffer_size; expected a positive int, got {buffer_size!r}")
    return lambda: _samples(*_read_pair(image_filename, label_filename))


def _reader(part: str):
    return lambda: _samples(*_load(part))


def train():
    """The 60,000 training samples (the synthetic stand-in: 6,000)."""
    return _reader("train")


def test():
    return _reader("test")


def fetch() -> None:
    """Makes the data ready: nothing is downloaded; Paddle's files are found, or the synthetic set is
    announced on stderr."""
    for part in _FILES:
        if not all(find("mnist", f) for f in _FILES[part]):
            warn_synthetic("mnist", _WHAT)
