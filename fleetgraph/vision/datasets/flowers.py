"""Oxford 102 Flowers as Paddle 2.0's paddle.vision.datasets: (HWC picture, int64 label of shape [1], 1-102).
Real files (data_file, label_file, setid_file, or Paddle's cache) need SciPy and Pillow, as Paddle's;
without them the pictures come from fleetgraph.dataset.flowers' synthetic stand-in, undone back to
224x224 RGB pixels, its labels counted from 1 as Oxford's."""

from __future__ import annotations

import io
import itertools
import tarfile

import numpy as np

from ...dataset import flowers as _flowers
from ...dataset.common import find
from ...io import Dataset
from ..image import pillow
from ._common import ImageSamples, check_mode, need_source

__all__ = ["Flowers"]

_FLAGS = {"train": "tstid", "test": "trnid", "valid": "valid"}  # Paddle reads Oxford's test set for training
_FILES = ("102flowers.tgz", "imagelabels.mat", "setid.mat")


class Flowers(ImageSamples, Dataset):
    def __init__(
        self,
        data_file=None,
        label_file=None,
        setid_file=None,
        mode="train",
        transform=None,
        download=True,
        backend=None,
    ):
        where = type(self).__name__
        self.mode = check_mode(where, mode, ("train", "valid", "test"))
        self.flag = _FLAGS[self.mode]
        self._init_backend(backend)
        self.transform = transform
        given = {"data_file": data_file, "label_file": label_file, "setid_file": setid_file}
        for argument, path in given.items():
            if path is None:
                need_source(where, argument, download)
        paths = [path or find("flowers", name) for path, name in zip(given.values(), _FILES)]
        self.data_file, self.label_file, self.setid_file = paths
        if all(paths):
            self._load_anno()
        else:
            self._synthetic = {"train": _flowers.train, "test": _flowers.test, "valid": _flowers.valid}[self.mode]
            self._cursor = None
            self.indexes = range(_flowers._synthetic_count())

    def _load_anno(self):
        try:
            from scipy import io as scio
        except ImportError:
            raise ImportError("Flowers: the .mat label files need SciPy, which is not installed") from None
        self.data_tar = tarfile.open(self.data_file)
        self.name2mem = {member.name: member for member in self.data_tar.getmembers()}
        self.labels = scio.loadmat(self.label_file)["labels"][0]
        self.indexes = scio.loadmat(self.setid_file)[self.flag][0]

    def _synthetic_sample(self, idx: int):
        """The stand-in's sample idx: read in order, so a pass over the dataset makes each picture once."""
        if self._cursor is None or self._cursor[0] > idx:
            self._cursor = (0, self._synthetic()())
        position, samples = self._cursor
        chw, label = next(itertools.islice(samples, idx - position, None))
        self._cursor = (idx + 1, samples)
        bgr = chw.reshape(3, _flowers.SIZE, _flowers.SIZE) * 255.0 + _flowers.MEAN  # undo simple_transform
        return np.clip(np.rint(bgr[::-1].transpose(1, 2, 0)), 0, 255), label + 1

    def __getitem__(self, idx):
        if not hasattr(self, "data_tar"):
            image, label = self._synthetic_sample(idx)
        else:
            index = self.indexes[idx]
            label = self.labels[index - 1]
            with self.data_tar.extractfile(self.name2mem[f"jpg/image_{index:05d}.jpg"]) as f:
                image = pillow("Flowers").open(io.BytesIO(f.read()))  # 'pil': the JPEG as opened, as Paddle's
            if self.backend == "cv2":
                image = np.array(image.convert("RGB"))
        return self._picture(image), np.array([label]).astype("int64")

    def __len__(self):
        return len(self.indexes)
