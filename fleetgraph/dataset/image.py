"""`paddle.dataset.image`: Paddle 1.8's picture helpers for readers' mappers, on HWC NumPy arrays.
Paddle decodes and resizes with OpenCV; here Pillow decodes (the fleetgraph[vision] extra) into the
arrays cv2.imdecode gives (HWC in BGR order, or HW grey), and resize_short is OpenCV's bicubic
(INTER_CUBIC: A = -0.75, half-pixel centres, edge pixels repeated, 11-bit fixed-point weights) in
NumPy. Checked against OpenCV 5: equal to its own code (cv2.setUseOptimized(False)) but for about one
value in 100,000, where its vector loop rounds a float32 sum differently; builds that resize through
Intel's IPP (the PyPI wheels, by default) differ from that by one on about 4% of values."""

from __future__ import annotations

import io
import os
import pickle
import tarfile

import numpy as np

__all__ = [
    "load_image_bytes", "load_image", "resize_short", "to_chw", "center_crop", "random_crop", "left_right_flip",
    "simple_transform", "load_and_transform", "batch_images_from_tar",
]  # fmt: skip


def pillow(where: str, hint: str = ""):
    """The PIL.Image module, or an ImportError that says what needs it and how to get it (then hint)."""
    try:
        from PIL import Image
    except ImportError:
        raise ImportError(
            f"{where}: PIL images and decoding pictures need Pillow, which is not installed; install the "
            f"extra (pip install 'fleetgraph[vision]', or pillow>=10){hint}"
        ) from None
    return Image


def _decoded(picture, is_color: bool) -> np.ndarray:
    """cv2's IMREAD_COLOR (3 channels, BGR, alpha dropped) or IMREAD_GRAYSCALE (H, W); the grey is
    Pillow's ITU-R 601-2 (OpenCV's decoders round theirs per format, within a grey level of it)."""
    if not is_color:
        return np.asarray(picture.convert("L"))
    return np.ascontiguousarray(np.asarray(picture.convert("RGB"))[..., ::-1])


def load_image_bytes(bytes, is_color=True):
    """A picture file's bytes (JPEG, PNG ...) decoded, as cv2.imdecode(buf, 1 if is_color else 0)."""
    image = pillow("load_image_bytes")
    try:
        picture = image.open(io.BytesIO(bytes))
    except image.UnidentifiedImageError:
        raise ValueError(
            f"load_image_bytes: expected the bytes of a picture file, got {len(bytes)} bytes Pillow cannot decode"
        ) from None
    return _decoded(picture, is_color)


def load_image(file, is_color=True):
    """A picture file decoded, as cv2.imread(file, 1 if is_color else 0)."""
    with pillow("load_image").open(file) as picture:
        return _decoded(picture, is_color)


def _cubic_taps(dst: int, src: int) -> tuple[np.ndarray, np.ndarray]:
    """OpenCV's INTER_CUBIC along one axis: for each output, the four source indices (clamped to the
    edge) and their weights in 1/2048, from the float32 kernel at (d + 0.5) * src / dst - 0.5."""
    pos = ((np.arange(dst) + 0.5) * (1.0 / (dst / src)) - 0.5).astype(np.float32)
    start = np.floor(pos).astype(np.int64)
    x = pos - start.astype(np.float32)
    a = np.float32(-0.75)
    c0 = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a
    c1 = ((a + 2) * x - (a + 3)) * x * x + 1
    c2 = ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1
    c3 = np.float32(1) - c0 - c1 - c2
    weights = np.rint(np.stack([c0, c1, c2, c3], axis=1) * np.float32(2048)).astype(np.int64)
    index = np.clip(start[:, None] + np.arange(-1, 3)[None, :], 0, src - 1)
    return index, weights


def _resize_cubic(im: np.ndarray, oh: int, ow: int) -> np.ndarray:
    """cv2.resize(im, (ow, oh), interpolation=INTER_CUBIC) of a uint8 (H, W[, C]) image: a horizontal pass
    kept in integers, a vertical one scaled by 2^-22 and rounded to the nearest byte."""
    h, w = im.shape[:2]
    data = (im[:, :, None] if im.ndim == 2 else im).astype(np.int64)
    cols, col_weights = _cubic_taps(ow, w)
    rows, row_weights = _cubic_taps(oh, h)
    across = np.einsum("hwkc,wk->hwc", data[:, cols], col_weights)
    down = np.einsum("hkwc,hk->hwc", across[rows], row_weights)
    out = np.clip(np.rint(down / float(1 << 22)), 0, 255).astype(np.uint8)
    return out[:, :, 0] if im.ndim == 2 else out


def resize_short(im, size):
    """Resize so the shorter side is size (the other size * long // short), by OpenCV's bicubic."""
    h, w = im.shape[:2]
    h_new, w_new = size, size
    if h > w:
        h_new = size * h // w
    else:
        w_new = size * w // h
    if im.dtype != np.uint8:
        raise TypeError(f"resize_short: expected a uint8 picture (as load_image gives), got {im.dtype}")
    return _resize_cubic(im, h_new, w_new)


def to_chw(im, order=(2, 0, 1)):
    """HWC to CHW (or any order of the same length)."""
    if len(im.shape) != len(order):
        raise ValueError(f"to_chw: expected order of {len(im.shape)} axes for shape {im.shape}, got {order}")
    return im.transpose(order)


def center_crop(im, size, is_color=True):
    """The central size x size box, its corner at ((h - size) // 2, (w - size) // 2)."""
    h, w = im.shape[:2]
    top, left = (h - size) // 2, (w - size) // 2
    return im[top : top + size, left : left + size]


def random_crop(im, size, is_color=True):
    """A size x size box at a corner drawn by np.random.randint, rows first."""
    h, w = im.shape[:2]
    top = np.random.randint(0, h - size + 1)
    left = np.random.randint(0, w - size + 1)
    return im[top : top + size, left : left + size]


def left_right_flip(im, is_color=True):
    """Mirror left to right (a view, as Paddle's)."""
    return im[:, ::-1]


def simple_transform(im, resize_size, crop_size, is_train, is_color=True, mean=None):
    """resize_short, then for training a random crop and, when np.random.randint(2) == 0, a flip, else a
    center crop; CHW float32 minus mean (per channel for a 1-D mean of a colour picture, else elementwise)."""
    im = resize_short(im, resize_size)
    if is_train:
        im = random_crop(im, crop_size, is_color=is_color)
        if np.random.randint(2) == 0:
            im = left_right_flip(im, is_color)
    else:
        im = center_crop(im, crop_size, is_color=is_color)
    if len(im.shape) == 3:
        im = to_chw(im)
    im = im.astype("float32")
    if mean is not None:
        mean = np.array(mean, dtype=np.float32)
        if mean.ndim == 1 and is_color:
            mean = mean[:, np.newaxis, np.newaxis]
        im -= mean
    return im


def load_and_transform(filename, resize_size, crop_size, is_train, is_color=True, mean=None):
    """load_image then simple_transform."""
    return simple_transform(load_image(filename, is_color), resize_size, crop_size, is_train, is_color, mean)


def batch_images_from_tar(data_file, dataset_name, img2label, num_per_batch=1024):
    """Paddle's picture cache: the tar's members named in img2label, in tar order, pickled
    num_per_batch at a time ({'label': [...], 'data': [bytes ...]}) under <data_file>_batch/<dataset_name>/;
    returns the list file of their paths (made once: an existing folder is reused as it is)."""
    out_path = os.path.join(data_file + "_batch", dataset_name)
    meta_file = os.path.join(data_file + "_batch", dataset_name + ".txt")
    if os.path.exists(out_path):
        return meta_file
    os.makedirs(out_path)
    batches = [{"label": [], "data": []}]
    with tarfile.open(data_file) as tar:
        for member in tar.getmembers():
            if member.name in img2label:
                if len(batches[-1]["data"]) == num_per_batch:
                    batches.append({"label": [], "data": []})
                batches[-1]["data"].append(tar.extractfile(member).read())
                batches[-1]["label"].append(img2label[member.name])
    for file_id, batch in enumerate(b for b in batches if b["data"]):
        with open(os.path.join(out_path, f"batch_{file_id}"), "wb") as f:
            pickle.dump(batch, f, protocol=2)
    with open(meta_file, "a") as meta:
        for name in sorted(os.listdir(out_path)):
            meta.write(os.path.abspath(os.path.join(out_path, name)) + "\n")
    return meta_file
