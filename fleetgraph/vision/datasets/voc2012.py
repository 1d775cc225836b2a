"""PASCAL VOC2012 segmentation as Paddle 2.0's paddle.vision.datasets: (JPEG picture, PNG class map) from
Paddle's VOCtrainval_11-May-2012.tar. The tar's index is read here; decoding its JPEG and PNG members
needs Pillow, as Paddle's does, and there is no stand-in (a segmentation set cannot be faked usefully)."""

from __future__ import annotations

import tarfile

import numpy as np

from ...dataset.common import find, search_paths
from ...io import Dataset
from ..image import pillow
from ._common import ImageSamples, check_mode, need_source

__all__ = ["VOC2012"]

SET_FILE = "VOCdevkit/VOC2012/ImageSets/Segmentation/{}.txt"
DATA_FILE = "VOCdevkit/VOC2012/JPEGImages/{}.jpg"
LABEL_FILE = "VOCdevkit/VOC2012/SegmentationClass/{}.png"
_ARCHIVE = "VOCtrainval_11-May-2012.tar"
_FLAGS = {"train": "trainval", "test": "train", "valid": "val"}  # as Paddle's MODE_FLAG_MAP


class VOC2012(ImageSamples, Dataset):
    def __init__(self, data_file=None, mode="train", transform=None, download=True, backend=None):
        self.mode = check_mode("VOC2012", mode, ("train", "valid", "test"))
        self.flag = _FLAGS[self.mode]
        self._init_backend(backend)
        self.transform = transform
        if data_file is None:
            need_source("VOC2012", "data_file", download)
            data_file = find("voc2012", _ARCHIVE)
            if data_file is None:
                raise FileNotFoundError(
                    f"VOC2012: no {_ARCHIVE} in {' or '.join(search_paths('voc2012', ''))}, and fleetgraph "
                    "downloads nothing; pass data_file"
                )
        self.data_file = data_file
        self.data_tar = tarfile.open(data_file)
        self.name2mem = {member.name: member for member in self.data_tar.getmembers()}
        names = self.data_tar.extractfile(self.name2mem[SET_FILE.format(self.flag)]).read().decode("utf-8").split()
        self.data = [DATA_FILE.format(name) for name in names]
        self.labels = [LABEL_FILE.format(name) for name in names]

    def _decode(self, member: str):
        with self.data_tar.extractfile(self.name2mem[member]) as f:
            picture = pillow("VOC2012")
            image = picture.open(f)
            image.load()
        return image

    def __getitem__(self, idx):
        data, label = self._decode(self.data[idx]), self._decode(self.labels[idx])
        if self.backend == "pil":
            return (data if self.transform is None else self.transform(data)), label
        data = np.array(data)
        data = data if self.transform is None else self.transform(data)
        return data.astype(self.dtype), np.array(label).astype(self.dtype)

    def __len__(self):
        return len(self.data)

    def __del__(self):
        if getattr(self, "data_tar", None):
            self.data_tar.close()
