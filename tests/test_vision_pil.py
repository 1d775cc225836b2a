"""paddle.vision on PIL images (Paddle 2.0's 'pil' backend, Pillow an extra): each functional against
NumPy formulas of Pillow's arithmetic, against the NumPy/cv2 path where the two backends agree (flips,
crops, pads, grey, to_tensor, upsampling), and against Paddle 2.0's test_transforms.py; the class
pipelines of Paddle's docs; datasets handing out PIL images; and the error without Pillow."""

import io
import pickle
import sys

import numpy as np
import pytest
from archive_helpers import write_tar

Image = pytest.importorskip("PIL.Image")

import fleetgraph as paddle  # noqa: E402
from fleetgraph.vision import get_image_backend, image_load, set_image_backend  # noqa: E402
from fleetgraph.vision import transforms as T  # noqa: E402
from fleetgraph.vision.datasets import MNIST, VOC2012, Cifar10, DatasetFolder, Flowers, ImageFolder  # noqa: E402
from fleetgraph.vision.transforms import functional as F  # noqa: E402


def _array(h=20, w=30, c=3, seed=0):
    shape = (h, w, c) if c else (h, w)
    return np.random.RandomState(seed).randint(0, 256, shape).astype("uint8")


def _pillow_gray(a):
    """Pillow's convert('L'): ITU-R 601-2 in 16-bit fixed point."""
    i = a.astype(np.int64)
    return (i[..., 0] * 19595 + i[..., 1] * 38470 + i[..., 2] * 7471 + 0x8000) >> 16


def _blend(degenerate, a, factor):
    """ImageEnhance: degenerate + factor * (image - degenerate) in float32, clipped, truncated."""
    degenerate = np.float32(degenerate)
    return np.clip(degenerate + np.float32(factor) * (a.astype(np.float32) - degenerate), 0, 255).astype(int)


# -- functionals --------------------------------------------------------------------------------------


def test_geometry_equals_the_numpy_path():
    a = _array(28, 24)
    p = Image.fromarray(a)
    same = [
        lambda x: F.center_crop(x, 4), lambda x: F.center_crop(x, (10, 7)), lambda x: F.crop(x, 2, 3, 10, 5),
        F.hflip, F.vflip, lambda x: F.pad(x, [1, 2], padding_mode="reflect"),
        lambda x: F.pad(x, (1, 2, 3, 4), padding_mode="symmetric"), lambda x: F.pad(x, 3, padding_mode="edge"),
        lambda x: F.pad(x, (2, 1), fill=(9, 8, 7)),
    ]  # fmt: skip
    for op in same:
        out = op(p)
        assert isinstance(out, Image.Image) and out.mode == "RGB"
        np.testing.assert_array_equal(np.array(out), op(a))
    zeros = np.zeros([28, 24, 3], "uint8")  # Paddle's test_resize: both backends give zeros of one shape
    np.testing.assert_array_equal(np.array(F.resize(Image.fromarray(zeros), 40)), F.resize(zeros, 40))
    assert F.resize(p, 40).size == (40, 46) and F.resize(p, 24) is p


def test_resize_uses_pillows_filters_and_upsamples_as_opencv():
    row = np.array([[0, 255]], dtype="uint8")  # centres -0.25 (clamped), 0.25, 0.75, 1.25 (clamped)
    np.testing.assert_array_equal(np.array(F.resize(Image.fromarray(row), (1, 4))), [[0, 64, 191, 255]])
    np.testing.assert_array_equal(F.resize(row, (1, 4)), [[0, 64, 191, 255]])
    p = Image.fromarray(_array(20, 30))
    for name in ("nearest", "bilinear", "bicubic", "box", "lanczos", "hamming"):
        expected = p.resize((15, 9), getattr(Image.Resampling, name.upper()))
        np.testing.assert_array_equal(np.array(F.resize(p, (9, 15), name)), np.array(expected))
    with pytest.raises(ValueError, match="interpolation for a PIL image should be one of"):
        F.resize(p, 10, "area")
    with pytest.raises(TypeError):
        F.resize(p, "1")
    with pytest.raises(ValueError, match="positive output size"):
        T.Resize(-1)(p)


def test_pad_keeps_a_palette_and_crop_reads_zeros_past_the_edge():
    p = Image.fromarray(_array(6, 5)).convert("P")
    for mode in ("constant", "reflect"):
        padded = F.pad(p, [1, 2], padding_mode=mode)
        assert padded.mode == "P" and padded.getpalette() == p.getpalette() and padded.size == (7, 10)
    np.testing.assert_array_equal(
        np.array(F.pad(p, [1, 2], padding_mode="reflect")), F.pad(np.array(p), [1, 2], 0, "reflect")
    )
    gray = Image.fromarray(_array(4, 4, c=0))
    np.testing.assert_array_equal(np.array(F.pad(gray, 1, fill=7))[0], [7] * 6)
    beyond = np.array(F.crop(gray, 2, 2, 4, 4))
    np.testing.assert_array_equal(beyond[:2, :2], np.array(gray)[2:, 2:])
    assert beyond.shape == (4, 4) and not beyond[2:].any() and not beyond[:, 2:].any()
    with pytest.raises(ValueError):
        F.pad(gray, [1.0, 2.0, 3.0])
    with pytest.raises(TypeError):
        F.pad(gray, 1, {})


def test_enhancers_blend_as_pillows_imageenhance():
    a = _array()
    p = Image.fromarray(a)
    gray = _pillow_gray(a)
    for factor in (0.4, 1.7):
        np.testing.assert_array_equal(np.array(F.adjust_brightness(p, factor)), _blend(0, a, factor))
        mean = int(gray.mean() + 0.5)  # Contrast blends with the mean grey, not the cv2 backend's 74
        np.testing.assert_array_equal(np.array(F.adjust_contrast(p, factor)), _blend(mean, a, factor))
        np.testing.assert_array_equal(np.array(F.adjust_saturation(p, factor)), _blend(gray[..., None], a, factor))
    np.testing.assert_array_equal(np.array(F.adjust_brightness(p, 1.0)), a)


def test_hue_turns_primaries_like_the_cv2_path_and_leaves_grey():
    primaries = np.array([[[255, 0, 0], [0, 255, 0], [0, 0, 255], [128, 128, 128]]], dtype="uint8")
    turned = F.adjust_hue(Image.fromarray(primaries), 1 / 3)  # hue + uint8(85): red -> green -> blue -> red
    np.testing.assert_array_equal(np.array(turned), [[[0, 255, 0], [0, 0, 255], [255, 0, 0], [128, 128, 128]]])
    np.testing.assert_array_equal(np.array(turned), F.adjust_hue(primaries[..., ::-1].copy(), 1 / 3)[..., ::-1])
    back = F.adjust_hue(Image.fromarray(primaries), -1 / 3)  # wraps: hue + 171
    np.testing.assert_array_equal(np.array(back)[0, 1:], [[255, 0, 0], [0, 255, 0], [128, 128, 128]])
    gray = Image.fromarray(_array(c=0))
    assert F.adjust_hue(gray, 0.4) is gray
    with pytest.raises(ValueError, match=r"\[-0.5, 0.5\]"):
        F.adjust_hue(gray, 0.6)


def test_rotate_by_quarter_turns_equals_rot90_and_fills_outside():
    square = Image.fromarray(np.arange(16, dtype="uint8").reshape(4, 4))
    np.testing.assert_array_equal(np.array(F.rotate(square, 90)), np.rot90(np.arange(16).reshape(4, 4)))
    wide = Image.fromarray(np.arange(6, dtype="uint8").reshape(2, 3))
    np.testing.assert_array_equal(np.array(F.rotate(wide, 90, expand=True)), np.rot90(np.arange(6).reshape(2, 3)))
    a = _array(28, 28)  # Paddle's test_rotate: both backends expand to one shape
    assert np.array(F.rotate(Image.fromarray(a), 80, expand=True)).shape == F.rotate(a, 80, expand=True).shape
    ones = Image.fromarray(np.full((5, 5, 3), 200, "uint8"))
    for image, corner in ((ones, [7, 7, 7]), (ones.convert("L"), 7)):
        np.testing.assert_array_equal(np.array(F.rotate(image, 45, "bilinear", fill=7))[0, 0], corner)
    with pytest.raises(ValueError, match="'nearest', 'bilinear', 'bicubic'"):
        F.rotate(ones, 10, "box")


def test_grayscale_is_pillows_601_grey_equal_to_the_cv2_paths():
    a = _array()
    one, three = F.to_grayscale(Image.fromarray(a)), F.to_grayscale(Image.fromarray(a), 3)
    assert one.mode == "L" and three.mode == "RGB"
    np.testing.assert_array_equal(np.array(one), _pillow_gray(a))
    np.testing.assert_array_equal(np.array(one), F.to_grayscale(a)[..., 0])
    np.testing.assert_array_equal(np.array(three), np.repeat(_pillow_gray(a)[..., None], 3, axis=2))
    with pytest.raises(ValueError, match="1 or 3"):
        F.to_grayscale(one, 5)


def test_to_tensor_reads_each_pil_mode_as_paddles():
    a = _array(28, 28, c=0)
    p = Image.fromarray(a)
    np.testing.assert_allclose(F.to_tensor(p, "HWC").numpy(), F.to_tensor(a, "HWC").numpy())
    np.testing.assert_allclose(F.to_tensor(p).numpy(), a[None] / np.float32(255.0))
    rgb = F.to_tensor(Image.fromarray(_array(28, 24)))
    assert rgb.shape == [3, 28, 24] and rgb.dtype == paddle.float32
    bilevel = np.array(p.convert("1"))  # dithered: True where Pillow puts white
    for mode, dtype, channels, values in (
        ("I", "int32", 1, a), ("I;16", "int32", 1, a), ("F", "float32", 1, a),
        ("1", "float32", 1, bilevel.astype(float)), ("YCbCr", "float32", 3, None),
    ):  # fmt: skip
        tensor = F.to_tensor(p.convert(mode))
        assert tensor.shape == [channels, 28, 28] and str(tensor.numpy().dtype) == dtype, mode
        if values is not None:
            np.testing.assert_array_equal(tensor.numpy()[0], values)
    with pytest.raises(ValueError, match="CHW or HWC"):
        F.to_tensor(p, data_format=1)


def test_normalize_reads_a_pil_image_as_hwc_float32():
    a = _array()
    out = F.normalize(Image.fromarray(a), [127.5] * 3, [127.5] * 3, data_format="HWC")
    assert out.dtype == np.float32 and out.shape == (20, 30, 3)
    np.testing.assert_allclose(out, (a - np.float32(127.5)) / np.float32(127.5))
    np.testing.assert_allclose(F.normalize(Image.fromarray(a), [0, 0, 0], [1, 1, 1], "HWC", to_rgb=True), a[..., ::-1])


# -- classes ------------------------------------------------------------------------------------------


def test_the_docs_pipeline_turns_a_pil_image_into_a_normalized_tensor():
    np.random.seed(0)
    pipeline = T.Compose([
        T.Resize(100), T.RandomCrop(64), T.RandomHorizontalFlip(), T.ColorJitter(0.4, 0.4, 0.4, 0.4),
        T.ToTensor(), T.Normalize(mean=[0.5, 0.5, 0.5], std=[0.5, 0.5, 0.5]),
    ])  # fmt: skip
    out = pipeline(Image.fromarray(_array(120, 150)))
    assert isinstance(out, paddle.Tensor) and out.shape == [3, 64, 64] and out.dtype == paddle.float32
    assert -1.0 <= float(out.min()) <= float(out.max()) <= 1.0
    for step in (T.Resize(100), T.RandomCrop(64), T.RandomHorizontalFlip(), T.ColorJitter(0.4, 0.4, 0.4, 0.4)):
        assert isinstance(step(Image.fromarray(_array(120, 150))), Image.Image)


def test_classes_give_paddles_shapes_on_pil_images():
    img = Image.fromarray(_array(200, 150))
    assert np.array(T.Pad(10)(img)).shape == (220, 170, 3)  # Paddle's TestTransformsPIL values
    big = Image.fromarray(_array(500, 400))
    crop = T.RandomCrop(224)(big)
    assert np.array(crop).shape == (224, 224, 3)
    assert np.array(T.RandomCrop((140, 160))(crop)).shape == (140, 160, 3)
    assert T.RandomCrop((180, 200), pad_if_needed=True)(crop.crop((0, 0, 160, 140))).size == (200, 180)
    assert np.array(T.Grayscale()(big)).shape == (500, 400) and T.Grayscale(3)(big).mode == "RGB"
    assert T.Transpose()(Image.fromarray(_array(50, 100))).shape == (3, 50, 100)
    assert T.RandomResizedCrop(64)(big).size == (64, 64) and T.CenterCrop(128)(big).size == (128, 128)
    assert T.RandomRotation(45, expand=True)(img).mode == "RGB"
    np.testing.assert_array_equal(np.array(T.RandomHorizontalFlip(1.0)(img)), np.array(img)[:, ::-1])
    np.testing.assert_array_equal(np.array(T.RandomVerticalFlip(1.0)(img)), np.array(img)[::-1])
    padded, other = T.Pad(10, keys=("image",))((img, img))
    assert padded.size == (170, 220) and other is img
    with pytest.raises(TypeError, match="expected a PIL image or a numpy image"):
        T.RandomResizedCrop(64)(1)


# -- datasets -----------------------------------------------------------------------------------------


def test_datasets_with_backend_pil_give_pil_images(tmp_path, monkeypatch):
    monkeypatch.setenv("FLEETGRAPH_DATA_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("FLEETGRAPH_FLOWERS_SAMPLES", "2")
    monkeypatch.setattr(paddle.dataset.common, "_warned", set())  # the stand-ins' notices stay unsaid for others
    digits = MNIST(mode="test", backend="pil")
    image, label = digits[0]
    assert isinstance(image, Image.Image) and image.mode == "L" and image.size == (28, 28)
    np.testing.assert_array_equal(np.array(image), MNIST(mode="test", backend="cv2")[0][0])
    assert label.dtype == np.int64
    assert MNIST(mode="test", backend="pil", transform=T.ToTensor())[0][0].shape == [1, 28, 28]
    flower, _ = Flowers(mode="valid", backend="pil")[1]
    assert isinstance(flower, Image.Image) and flower.mode == "RGB" and flower.size == (224, 224)
    pixels = np.random.RandomState(1).randint(0, 256, (1, 3072)).astype("uint8")
    picture, _ = Cifar10(_cifar_archive(tmp_path / "c.tar.gz", pixels), mode="test", backend="pil")[0]
    assert isinstance(picture, Image.Image) and picture.size == (32, 32)
    np.testing.assert_array_equal(np.array(picture), pixels[0].reshape(3, 32, 32).transpose(1, 2, 0))


def _cifar_archive(path, data):
    payload = pickle.dumps({b"data": data, b"labels": [3] * len(data)})
    return write_tar(path, {"cifar-10-batches-py/test_batch": payload}, "w:gz")


@pytest.fixture
def picture_folder(tmp_path):
    """Paddle's TestTransformsPIL folder, smaller: two classes of two JPEGs, landscape and portrait."""
    saved = get_image_backend()
    rng = np.random.RandomState(3)
    for i in range(2):
        (tmp_path / f"class_{i}").mkdir()
        for j, shape in enumerate(((28, 35, 3), (40, 30, 3))):
            Image.fromarray(rng.randint(0, 256, shape).astype("uint8")).save(tmp_path / f"class_{i}" / f"{j}.jpg")
    yield tmp_path
    set_image_backend(saved)


def test_folders_load_rgb_pil_pictures_through_paddles_pipeline(picture_folder):
    set_image_backend("pil")
    trans = T.Compose([
        T.RandomResizedCrop(24), T.ColorJitter(brightness=0.4, contrast=0.4, saturation=0.4, hue=0.4),
        T.RandomHorizontalFlip(), T.Transpose(),
        T.Normalize(mean=[123.675, 116.28, 103.53], std=[58.395, 57.12, 57.375]),
    ])  # fmt: skip
    data = DatasetFolder(str(picture_folder), transform=trans)
    samples = [data[i] for i in range(len(data))]
    assert [target for _, target in samples] == [0, 0, 1, 1]
    assert all(sample.shape == (3, 24, 24) and sample.dtype == np.float32 for sample, _ in samples)
    raw = ImageFolder(str(picture_folder))[1][0]
    assert isinstance(raw, Image.Image) and raw.mode == "RGB" and raw.size == (30, 40)
    set_image_backend("cv2")
    np.testing.assert_array_equal(ImageFolder(str(picture_folder))[1][0], np.array(raw))
    assert image_load(str(picture_folder / "class_0" / "0.jpg"), backend="pil").size == (35, 28)


def test_voc2012_with_backend_pil_gives_the_picture_and_its_class_map(tmp_path):
    members = {"VOCdevkit/VOC2012/ImageSets/Segmentation/val.txt": b"2007_000032"}
    for member, image, kind in (
        ("JPEGImages/2007_000032.jpg", Image.fromarray(_array(6, 8)), "JPEG"),
        ("SegmentationClass/2007_000032.png", Image.fromarray(_array(6, 8, c=0) % 21).convert("P"), "PNG"),
    ):
        buffer = io.BytesIO()
        image.save(buffer, kind)
        members[f"VOCdevkit/VOC2012/{member}"] = buffer.getvalue()
    picture, classes = VOC2012(write_tar(tmp_path / "voc.tar", members), mode="valid", backend="pil")[0]
    assert picture.size == (8, 6) and picture.mode == "RGB" and classes.mode == "P"
    np.testing.assert_array_equal(np.array(classes), _array(6, 8, c=0) % 21)


# -- without Pillow -----------------------------------------------------------------------------------


def _hide_pillow(monkeypatch):
    """Importing Pillow fails from here on, as where the extra is not installed."""
    for name in [name for name in sys.modules if name == "PIL" or name.startswith("PIL.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "PIL", None)


def test_without_pillow_pil_paths_name_pillow_and_the_extra_and_arrays_still_work(tmp_path, monkeypatch):
    Image.fromarray(_array(4, 4)).save(tmp_path / "x.png")
    _hide_pillow(monkeypatch)
    for call in (
        lambda: MNIST(mode="test", backend="pil"), lambda: image_load(str(tmp_path / "x.png"), backend="pil"),
        lambda: ImageFolder(str(tmp_path))[0], lambda: image_load(str(tmp_path / "x.png"), backend="cv2"),
        lambda: paddle.dataset.image.load_image_bytes((tmp_path / "x.png").read_bytes()),
    ):  # fmt: skip
        with pytest.raises(ImportError, match=r"Pillow.*fleetgraph\[vision\]"):
            call()
    a = _array()
    assert F.resize(a, (10, 15)).shape == (10, 15, 3) and F.to_tensor(a).shape == [3, 20, 30]
    assert MNIST(mode="test", backend="cv2")[0][0].shape == (28, 28)
