"""MNIST and Fashion-MNIST as Paddle 2.0's paddle.vision.datasets: (28x28 image, int64 label of shape [1]).
The pixels come from fleetgraph.dataset.mnist's IDX parser (Paddle's cached files, or its synthetic
stand-in for MNIST), back on Paddle's 0-255 scale."""

from __future__ import annotations

import numpy as np

from ...dataset import mnist as _mnist
from ...dataset.common import find, search_paths
from ...io import Dataset
from ._common import ImageSamples, check_mode, need_source

__all__ = ["FashionMNIST", "MNIST"]

_FILES = {  # Paddle's names in its cache, the same for both datasets
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}


class MNIST(ImageSamples, Dataset):
    """image_path and label_path: gzipped IDX files; without them Paddle's cache (<home>/mnist/...) or,
    for MNIST only, the synthetic stand-in. backend 'cv2' gives float32 arrays of 0-255, 'pil' PIL images."""

    NAME = "mnist"

    def __init__(self, image_path=None, label_path=None, mode="train", transform=None, download=True, backend=None):
        where = type(self).__name__
        self.mode = check_mode(where, mode, ("train", "test"))
        self._init_backend(backend)
        self.transform = transform
        self.image_path, self.label_path = image_path, label_path
        if image_path is None or label_path is None:
            need_source(where, "image_path" if image_path is None else "label_path", download)
        samples = list(self._reader()())  # pixels scaled to [-1, 1] by the parser, back to Paddle's 0-255
        self.images = [np.rint((image + 1.0) * 127.5).astype("float32") for image, _ in samples]
        self.labels = [np.array([label]).astype("int64") for _, label in samples]

    def _reader(self):
        names = _FILES[self.mode]
        image_path = self.image_path or find(self.NAME, names[0])
        label_path = self.label_path or find(self.NAME, names[1])
        if image_path and label_path:
            return _mnist.reader_creator(image_path, label_path)
        if self.NAME == "mnist":
            return _mnist.train() if self.mode == "train" else _mnist.test()
        raise FileNotFoundError(
            f"{type(self).__name__}: no {names[0]} and {names[1]} in {' or '.join(search_paths(self.NAME, ''))}, "
            "and fleetgraph downloads nothing; pass image_path and label_path"
        )

    def __getitem__(self, idx):
        return self._picture(np.reshape(self.images[idx], [28, 28]), "L"), self.labels[idx].astype("int64")

    def __len__(self):
        return len(self.labels)


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST in MNIST's format (files under <home>/fashion-mnist/); no stand-in."""

    NAME = "fashion-mnist"
