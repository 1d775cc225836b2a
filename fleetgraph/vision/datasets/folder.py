"""DatasetFolder and ImageFolder as Paddle 2.0's paddle.vision.datasets: samples found by walking a
directory (one sub-directory per class for DatasetFolder). The default loader reads NumPy .npy pictures
itself; Paddle's picture formats (.jpg, .png ...) need Pillow, and are refused with a reason without it."""

from __future__ import annotations

import os

import numpy as np

from ...io import Dataset
from ...ir import get_default_dtype
from ..image import get_image_backend, pillow

__all__ = ["DatasetFolder", "ImageFolder", "IMG_EXTENSIONS", "default_loader", "has_valid_extension"]

IMG_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp", ".npy")


def has_valid_extension(filename: str, extensions) -> bool:
    return filename.lower().endswith(tuple(extensions))


def default_loader(path: str):
    """.npy: the array it holds. Other pictures through Pillow: an RGB PIL image with the 'pil' backend,
    its HWC uint8 array with 'cv2' (cv2's loader gives RGB too, after its BGR2RGB)."""
    if path.lower().endswith(".npy"):
        return np.load(path)
    image = pillow(f"default_loader {path!r}").open(path).convert("RGB")
    return np.asarray(image) if get_image_backend() == "cv2" else image


def _walk(root: str, is_valid_file) -> list[str]:
    found = []
    for folder, _, names in sorted(os.walk(os.path.expanduser(root), followlinks=True)):
        found += [os.path.join(folder, name) for name in sorted(names) if is_valid_file(os.path.join(folder, name))]
    return found


def _validity(extensions, is_valid_file):
    if extensions is not None:
        return lambda path: has_valid_extension(path, extensions)
    if is_valid_file is None:
        raise ValueError("DatasetFolder: expected extensions or is_valid_file, got neither")
    return is_valid_file


def _none_found(what: str, root: str, extensions) -> RuntimeError:
    return RuntimeError(
        f"Found 0 {what} in subfolders of: {root}\nSupported extensions are: {','.join(extensions or ())}"
    )


class DatasetFolder(Dataset):
    """root/<class>/**/<file>: samples (loader(file), class index), classes sorted by name."""

    def __init__(self, root, loader=None, extensions=None, transform=None, is_valid_file=None):
        self.root = root
        self.transform = transform
        if extensions is None and is_valid_file is None:
            extensions = IMG_EXTENSIONS
        valid = _validity(extensions, is_valid_file)
        self.classes, self.class_to_idx = self._find_classes(root)
        self.samples = [
            (path, index)
            for name, index in sorted(self.class_to_idx.items())
            for path in _walk(os.path.join(root, name), valid)
        ]
        if not self.samples:
            raise _none_found("directories", root, extensions)
        self.loader = default_loader if loader is None else loader
        self.extensions = extensions
        self.targets = [target for _, target in self.samples]
        self.dtype = get_default_dtype()

    def _find_classes(self, dir):
        classes = sorted(entry.name for entry in os.scandir(dir) if entry.is_dir())
        return classes, {name: i for i, name in enumerate(classes)}

    def __getitem__(self, index):
        path, target = self.samples[index]
        sample = self.loader(path)
        return (sample if self.transform is None else self.transform(sample)), target

    def __len__(self):
        return len(self.samples)


class ImageFolder(Dataset):
    """Every file under root, unlabelled: each sample is [loader(file)]."""

    def __init__(self, root, loader=None, extensions=None, transform=None, is_valid_file=None):
        self.root = root
        if extensions is None and is_valid_file is None:
            extensions = IMG_EXTENSIONS
        self.samples = _walk(root, _validity(extensions, is_valid_file))
        if not self.samples:
            raise _none_found("files", root, extensions)
        self.loader = default_loader if loader is None else loader
        self.extensions = extensions
        self.transform = transform

    def __getitem__(self, index):
        sample = self.loader(self.samples[index])
        return [sample if self.transform is None else self.transform(sample)]

    def __len__(self):
        return len(self.samples)
