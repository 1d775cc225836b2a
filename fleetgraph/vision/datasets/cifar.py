"""CIFAR-10 and CIFAR-100 as Paddle 2.0's paddle.vision.datasets: (32x32x3 HWC image, int64 label),
read by fleetgraph.dataset.cifar's parser from data_file, Paddle's cached archive, or its synthetic stand-in."""

from __future__ import annotations

import numpy as np

from ...dataset import cifar as _cifar
from ...io import Dataset
from ._common import ImageSamples, check_mode, need_source

__all__ = ["Cifar10", "Cifar100"]

# the archive members each mode reads (Paddle's MODE_FLAG_MAP) and the default reader of each
_FLAGS = {("train", 10): "data_batch", ("test", 10): "test_batch", ("train", 100): "train", ("test", 100): "test"}
_DEFAULTS = {
    ("train", 10): _cifar.train10, ("test", 10): _cifar.test10,
    ("train", 100): _cifar.train100, ("test", 100): _cifar.test100,
}  # fmt: skip


class Cifar10(ImageSamples, Dataset):
    """data_file: Paddle's cifar-10-python.tar.gz; without it Paddle's cache or the synthetic stand-in."""

    CLASSES = 10

    def __init__(self, data_file=None, mode="train", transform=None, download=True, backend=None):
        self.mode = check_mode(type(self).__name__, mode, ("train", "test"))
        self._init_backend(backend)
        self.transform = transform
        self.data_file = data_file
        key = (self.mode, self.CLASSES)
        if data_file is None:
            need_source(type(self).__name__, "data_file", download)
            reader = _DEFAULTS[key]()
        else:
            reader = _cifar.reader_creator(data_file, _FLAGS[key])
        # the parser scales pixels to [0, 1]; Paddle's images keep the files' 0-255 bytes
        self.data = [(np.rint(sample * 255.0).astype("uint8"), label) for sample, label in reader()]

    def __getitem__(self, idx):
        image, label = self.data[idx]
        image = np.reshape(image, [3, 32, 32]).transpose([1, 2, 0])
        return self._picture(image), np.array(label).astype("int64")

    def __len__(self):
        return len(self.data)


class Cifar100(Cifar10):
    """data_file: Paddle's cifar-100-python.tar.gz; labels are the 100 fine labels."""

    CLASSES = 100
