"""paddle.dataset.image (Paddle 1.8's mapper helpers, decoding on Pillow, OpenCV's bicubic in NumPy)
and paddle.dataset.flowers' default mappers over real-format files: values from OpenCV 5 (printed by
cv2.resize with cv2.setUseOptimized(False)), cv2.imdecode's BGR order, and Paddle 1.8's test_image.py."""

import io
import os
import pickle
import sys
import types

import numpy as np
import pytest
from archive_helpers import write_tar

Image = pytest.importorskip("PIL.Image")

import fleetgraph as paddle  # noqa: E402
from fleetgraph.dataset import image  # noqa: E402

CODES = (np.arange(63, dtype=np.int64).reshape(7, 9) * 37 % 256).astype(np.uint8)
OPENCV_CUBIC_3x4 = [[64, 175, 46, 56], [87, 80, 166, 159], [190, 200, 71, 182]]
OPENCV_CUBIC_10x12 = [
    [0, 13, 46, 74, 99, 125, 164, 210, 251, 82, 0, 36],
    [32, 55, 85, 118, 163, 214, 163, 73, 115, 64, 43, 78],
    [97, 125, 166, 182, 154, 195, 124, 0, 28, 77, 126, 152],
    [145, 174, 227, 211, 34, 20, 62, 82, 108, 135, 172, 200],
    [241, 122, 67, 100, 46, 55, 97, 141, 187, 242, 178, 59],
    [187, 68, 4, 59, 105, 149, 191, 200, 146, 179, 124, 5],
    [46, 74, 111, 138, 164, 184, 226, 212, 35, 19, 72, 101],
    [94, 120, 169, 218, 254, 122, 51, 92, 64, 80, 121, 149],
    [168, 203, 182, 131, 173, 83, 32, 83, 128, 161, 191, 214],
    [210, 255, 165, 0, 36, 82, 122, 147, 172, 200, 233, 255],
]


def _png(array) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(array).save(buffer, "PNG")
    return buffer.getvalue()


def test_bicubic_resize_gives_opencvs_values():
    np.testing.assert_array_equal(image._resize_cubic(CODES, 3, 4), OPENCV_CUBIC_3x4)
    np.testing.assert_array_equal(image._resize_cubic(CODES, 10, 12), OPENCV_CUBIC_10x12)
    colour = np.stack([CODES, 255 - CODES, CODES // 2], axis=-1)
    np.testing.assert_array_equal(image._resize_cubic(colour, 10, 12)[..., 1], image._resize_cubic(255 - CODES, 10, 12))


def test_resize_short_keeps_the_aspect_and_flips_and_chw_as_paddles_test():
    im = np.random.RandomState(0).randint(0, 256, (300, 260, 3)).astype("uint8")
    im = image.resize_short(im, 256)  # Paddle's test_resize_flip_chw, on a made picture
    assert im.shape == (295, 256, 3)  # 256 * 300 // 260
    np.testing.assert_array_equal(image.left_right_flip(im), np.flip(im, 1))
    assert image.to_chw(im).shape == (3, 295, 256)
    assert image.resize_short(np.zeros((20, 40), "uint8"), 10).shape == (10, 20)
    with pytest.raises(TypeError, match="uint8"):
        image.resize_short(im.astype("float32"), 10)


def test_decoding_gives_cv2s_bgr_and_grey_arrays(tmp_path):
    rgb = np.random.RandomState(1).randint(0, 256, (6, 5, 3)).astype("uint8")
    np.testing.assert_array_equal(image.load_image_bytes(_png(rgb)), rgb[..., ::-1])
    np.testing.assert_array_equal(image.load_image_bytes(_png(rgb), is_color=False), Image.fromarray(rgb).convert("L"))
    gray = rgb[..., 0]
    np.testing.assert_array_equal(image.load_image_bytes(_png(gray)), np.repeat(gray[..., None], 3, axis=2))
    (tmp_path / "x.png").write_bytes(_png(rgb))
    np.testing.assert_array_equal(image.load_image(str(tmp_path / "x.png")), rgb[..., ::-1])
    with pytest.raises(ValueError, match="Pillow cannot decode"):
        image.load_image_bytes(b"not a picture")


def test_simple_transform_crops_flips_and_subtracts_the_channel_mean():
    im = np.random.RandomState(2).randint(0, 256, (40, 30, 3)).astype("uint8")
    out = image.simple_transform(im, 20, 16, is_train=False, mean=[1.0, 2.0, 3.0])
    resized = image.resize_short(im, 20)  # (26, 20, 3)
    expected = resized[5:21, 2:18].transpose(2, 0, 1).astype("float32") - np.array([1, 2, 3], "float32")[:, None, None]
    np.testing.assert_array_equal(out, expected)
    np.random.seed(7)
    top, left, flip = np.random.randint(0, 11), np.random.randint(0, 5), np.random.randint(2) == 0
    np.random.seed(7)
    train = image.simple_transform(im, 20, 16, is_train=True)
    crop = resized[top : top + 16, left : left + 16]
    np.testing.assert_array_equal(train, (crop[:, ::-1] if flip else crop).transpose(2, 0, 1))


def test_batch_images_from_tar_pickles_the_named_members_in_batches(tmp_path):
    members = {f"jpg/image_{i:05d}.jpg": bytes([i]) * 3 for i in range(1, 4)}
    archive = write_tar(tmp_path / "102flowers.tgz", {**members, "README": b"skip"}, "w:gz")
    labels = {name: 10 + i for i, name in enumerate(members)}
    meta = image.batch_images_from_tar(archive, "tstid", labels, num_per_batch=2)
    paths = open(meta).read().split()
    batches = [pickle.load(open(p, "rb")) for p in paths]
    assert [len(b["data"]) for b in batches] == [2, 1] and os.path.dirname(paths[0]).endswith("tstid")
    assert sum((b["data"] for b in batches), []) == list(members.values())
    assert sum((b["label"] for b in batches), []) == [10, 11, 12]
    assert image.batch_images_from_tar(archive, "tstid", {}) == meta  # made once


def test_flowers_real_files_go_through_paddles_default_mappers(tmp_path, monkeypatch):
    rng = np.random.RandomState(3)
    pictures = {i: rng.randint(0, 256, (260, 300, 3)).astype("uint8") for i in (1, 2, 3)}
    folder = tmp_path / "flowers"
    folder.mkdir()
    write_tar(folder / "102flowers.tgz", {f"jpg/image_{i:05d}.jpg": _png(p) for i, p in pictures.items()}, "w:gz")
    mats = {"imagelabels.mat": {"labels": np.array([[5, 9, 102]])}, "setid.mat": {"tstid": np.array([[3, 1]])}}
    for name in mats:
        (folder / name).write_bytes(b"MATLAB 5.0")
    scipy_io = types.SimpleNamespace(loadmat=lambda path: mats[os.path.basename(path)])  # no SciPy here
    monkeypatch.setitem(sys.modules, "scipy", types.SimpleNamespace(io=scipy_io))
    monkeypatch.setitem(sys.modules, "scipy.io", scipy_io)
    monkeypatch.setenv("FLEETGRAPH_DATA_HOME", str(tmp_path))
    flowers = paddle.dataset.flowers
    samples = list(flowers.train(mapper=flowers.test_mapper)())
    assert [label for _, label in samples] == [101, 4]  # Oxford's labels less one, in setid's order
    bgr = pictures[3][..., ::-1]
    expected = image.simple_transform(bgr, 256, 224, False, mean=[103.94, 116.78, 123.68]).reshape(-1)
    assert samples[0][0].shape == (3 * 224 * 224,) and samples[0][0].dtype == np.float32
    np.testing.assert_array_equal(samples[0][0], expected)
    trained = list(flowers.train()())
    assert all(s.shape == (3 * 224 * 224,) for s, _ in trained)
    raw = list(flowers.train(mapper=lambda sample: sample)())
    assert raw[1] == (_png(pictures[1]), 4)  # a mapper gets the JPEG's bytes, as Paddle 1.8's
