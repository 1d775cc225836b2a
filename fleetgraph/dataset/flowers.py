"""Oxford 102 flowers as Paddle 1.8's `paddle.dataset.flowers` reads them: samples (image, label), the
label 0-101. Paddle's train() reads the set Oxford calls test ('tstid', 6,149 images) and test() the
one it calls train ('trnid'), and so do these.

The real files (102flowers.tgz, imagelabels.mat, setid.mat) are read when present and SciPy is
installed: the mapper gets (JPEG bytes, label), as Paddle's. Its default mappers (train_mapper,
test_mapper) decode with paddle.dataset.image (Pillow) and give a flat float32 3x224x224 CHW BGR
picture: resized to 256 on its short side, randomly cropped and flipped for training or centre-cropped,
minus the per-channel mean (Paddle's docstrings say pixels in [0, 1]; its code, followed here, does not
scale). Otherwise a synthetic stand-in of the same shape, said once on stderr: FLOWERS_SAMPLES
pictures (1,020 unless the environment variable FLEETGRAPH_FLOWERS_SAMPLES says) in 10 classes (a
script with class_dim=10, as seed 002's, runs on it), each its class's coarse pattern plus noise,
drawn from the sample's index so any sample is made alone and alike in every process.
"""

from __future__ import annotations

import functools
import os
import tarfile

import numpy as np

from . import image
from .common import find, warn_synthetic

SIZE, RESIZE = 224, 256
MEAN = np.array([103.94, 116.78, 123.68], dtype=np.float32).reshape(3, 1, 1)  # Paddle's BGR means
SYNTHETIC_CLASSES = 10
_SETS = {"train": "tstid", "test": "trnid", "valid": "valid"}


def _synthetic_count() -> int:
    value = os.environ.get("FLEETGRAPH_FLOWERS_SAMPLES", "1020")
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"FLEETGRAPH_FLOWERS_SAMPLES={value!r}: expected a positive number of samples")
    return int(value)


def _announce_synthetic(count: int) -> None:
    what = f"{count} pictures of 3x{SIZE}x{SIZE} in {SYNTHETIC_CLASSES} classes (coarse patterns plus noise)"
    warn_synthetic("flowers", what)


def _synthetic_reader(part: str, cycle: bool):
    count = _synthetic_count()
    _announce_synthetic(count)
    patterns = np.random.default_rng(102).normal(0.0, 1.0, size=(SYNTHETIC_CLASSES, 3, 7, 7)).astype(np.float32)
    offset = {"train": 0, "test": 1 << 20, "valid": 2 << 20}[part]

    def reader():
        while True:
            for index in range(count):
                rng = np.random.default_rng(offset + index)
                label = int(rng.integers(0, SYNTHETIC_CLASSES))
                coarse = np.repeat(np.repeat(patterns[label], SIZE // 7, axis=1), SIZE // 7, axis=2)
                image = coarse + rng.normal(0.0, 1.0, size=(3, SIZE, SIZE)).astype(np.float32)
                yield image.reshape(-1), label
            if not cycle:
                return

    return reader


def default_mapper(is_train, sample):
    """(JPEG bytes, label) to (flat float32 CHW BGR picture minus the mean, label), as Paddle 1.8's."""
    picture, label = sample
    picture = image.load_image_bytes(picture)
    picture = image.simple_transform(picture, RESIZE, SIZE, is_train, mean=MEAN.reshape(-1))
    return picture.flatten().astype("float32"), label


train_mapper = functools.partial(default_mapper, True)
test_mapper = functools.partial(default_mapper, False)


def _real_reader(part: str, mapper, cycle: bool):
    try:
        from scipy.io import loadmat
    except ImportError as e:
        raise ImportError(f"fleetgraph.dataset.flowers: the real flowers files need SciPy ({e})") from None
    archive = find("flowers", "102flowers.tgz")
    labels = loadmat(find("flowers", "imagelabels.mat"))["labels"][0]
    indexes = loadmat(find("flowers", "setid.mat"))[_SETS[part]][0]

    def reader():
        while True:
            with tarfile.open(archive) as tar:
                members = {m.name: m for m in tar.getmembers()}
                for i in indexes:
                    with tar.extractfile(members[f"jpg/image_{int(i):05d}.jpg"]) as f:
                        yield mapper((f.read(), int(labels[i - 1]) - 1))
            if not cycle:
                return

    return reader


_FILES = ("102flowers.tgz", "imagelabels.mat", "setid.mat")


def _reader(part: str, mapper, cycle: bool):
    if all(find("flowers", f) for f in _FILES):
        return _real_reader(part, mapper, cycle)
    if mapper not in (train_mapper, test_mapper):
        raise NotImplementedError(
            "flowers: mapper; the synthetic stand-in serves pictures already mapped, so it takes no mapper "
            f"but the default ones (the real files {', '.join(_FILES)} under flowers/ in Paddle's cache do)"
        )
    return _synthetic_reader(part, cycle)


def train(mapper=train_mapper, buffered_size=1024, use_xmap=True, cycle=False):
    """The training reader (use_xmap and buffered_size are accepted: the samples come in order)."""
    return _reader("train", mapper, cycle)


def test(mapper=test_mapper, buffered_size=1024, use_xmap=True, cycle=False):
    return _reader("test", mapper, cycle)


def valid(mapper=test_mapper, buffered_size=1024, use_xmap=True):
    return _reader("valid", mapper, False)


def fetch() -> None:
    """Makes the data ready: nothing is downloaded; Paddle's files are found, or the synthetic set is
    announced on stderr."""
    if not all(find("flowers", f) for f in _FILES):
        _announce_synthetic(_synthetic_count())
