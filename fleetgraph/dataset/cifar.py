"""CIFAR-10 and CIFAR-100 (`paddle.dataset.cifar`): samples (3,072 float32 pixels in [0, 1], in the
files' channel-major order; int label) read from the pickled batches in Paddle's
`cifar-10-python.tar.gz` and `cifar-100-python.tar.gz`. Without a real archive, a synthetic one of
the same layout (a fifth of CIFAR's size, so it is made in a second: 10,000 training and 2,000 test
pictures; 10 or 100 fine labels) is generated, said once on stderr, and parsed by the same code:
each picture is its class's coarse 4x4 colour pattern plus strong noise, so a network can learn the
classes."""

from __future__ import annotations

import functools
import pickle
import tarfile

import numpy as np

from .common import open_archive, open_source, tar_bytes

__all__ = ["test10", "test100", "train10", "train100"]

_ARCHIVES = {10: ("cifar-10-python.tar.gz",), 100: ("cifar-100-python.tar.gz",)}


def _batch(rng, patterns: np.ndarray, name: str, label_key: bytes, count: int) -> bytes:
    """One pickled batch as the real files hold it (bytes keys, uint8 rows of 1,024 red, then
    green, then blue pixels): each picture its class's 4x4 colour pattern, 8x8
    upscaled, plus noise."""
    labels = rng.integers(0, len(patterns), size=count)
    coarse = np.repeat(np.repeat(patterns[labels], 8, axis=2), 8, axis=3).reshape(count, -1)
    noise = rng.integers(-60, 61, size=coarse.shape, dtype=np.int16)
    batch = {
        b"batch_label": name.encode(),
        label_key: labels.tolist(),
        b"data": np.clip(coarse + noise, 0, 255).astype(np.uint8),
        b"filenames": [f"synthetic_{i:05d}.png".encode() for i in range(count)],
    }
    return pickle.dumps(batch, protocol=4)


@functools.cache
def _synthetic(classes: int) -> bytes:
    """The archive's members as the real one names them: cifar-10's five data_batch_N and test_batch
    (key b'labels'), cifar-100's train and test (key b'fine_labels')."""
    rng = np.random.default_rng(classes)
    patterns = rng.integers(40, 216, size=(classes, 3, 4, 4), dtype=np.int16)
    if classes == 10:
        sizes = {f"data_batch_{i}": 2000 for i in range(1, 6)} | {"test_batch": 2000}
        folder, key = "cifar-10-batches-py", b"labels"
    else:
        sizes, folder, key = {"train": 10000, "test": 2000}, "cifar-100-python", b"fine_labels"
    return tar_bytes({f"{folder}/{name}": _batch(rng, patterns, name, key, n) for name, n in sizes.items()})


def reader_creator(filename, sub_name: str, cycle: bool = False):
    """Samples of the archive's members whose name contains sub_name, in archive order (filename:
    its path, or a function opening it); with cycle, again and again."""

    def read_batch(batch):
        labels = batch.get(b"labels", batch.get(b"fine_labels"))
        if labels is None:
            raise ValueError(f"cifar: batch; expected b'labels' or b'fine_labels', got keys {sorted(batch)}")
        for sample, label in zip(batch[b"data"], labels):
            yield (sample / 255.0).astype(np.float32), int(label)

    def reader():
        while True:
            with open_source(filename) as f, tarfile.open(fileobj=f, mode="r") as tf:
                for member in tf:
                    if sub_name in member.name:
                        yield from read_batch(pickle.load(tf.extractfile(member), encoding="bytes"))
            if not cycle:
                break

    return reader


def _source(classes: int):
    what = f"{classes} classes of coarse colour patterns plus noise, 10,000 + 2,000 pictures, CIFAR's layout"
    return lambda: open_archive("cifar", _ARCHIVES[classes], lambda: _synthetic(classes), what)


def train100():
    """CIFAR-100 training samples, labels 0-99."""
    return reader_creator(_source(100), "train")


def test100():
    return reader_creator(_source(100), "test")


def train10(cycle: bool = False):
    """CIFAR-10 training samples, labels 0-9; with cycle, endlessly."""
    return reader_creator(_source(10), "data_batch", cycle=cycle)


def test10(cycle: bool = False):
    return reader_creator(_source(10), "test_batch", cycle=cycle)


def fetch() -> None:
    """Makes the data ready: nothing is downloaded; Paddle's archives are found, or the synthetic ones
    are made (and said on stderr)."""
    for classes in _ARCHIVES:
        _source(classes)().close()
