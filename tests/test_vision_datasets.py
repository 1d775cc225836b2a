"""paddle.vision.datasets: Paddle 2.0's (image, label) samples from real-format files written here, from
fleetgraph's synthetic stand-ins, and from directories of .npy pictures (PIL images, and the error
without Pillow: test_vision_pil.py)."""

import gzip
import pickle

import numpy as np
import pytest
from archive_helpers import write_tar

import fleetgraph as paddle
from fleetgraph.vision import datasets, get_image_backend, image_load, set_image_backend
from fleetgraph.vision.datasets import (
    MNIST,
    VOC2012,
    Cifar10,
    Cifar100,
    DatasetFolder,
    FashionMNIST,
    Flowers,
    ImageFolder,
)


@pytest.fixture(autouse=True)
def _empty_data_home(tmp_path, monkeypatch):
    """No real data sets: the cache paths point into this test's folder; the stand-ins' once-only
    stderr notices are left unsaid for the tests that check them."""
    monkeypatch.setenv("FLEETGRAPH_DATA_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(paddle.dataset.common, "_warned", set())


def _idx_files(folder, images, labels):
    image_path, label_path = folder / "images.gz", folder / "labels.gz"
    with gzip.open(image_path, "wb") as f:
        f.write(np.array([2051, len(images), 28, 28], ">u4").tobytes() + images.astype("uint8").tobytes())
    with gzip.open(label_path, "wb") as f:
        f.write(np.array([2049, len(labels)], ">u4").tobytes() + labels.astype("uint8").tobytes())
    return str(image_path), str(label_path)


def test_mnist_reads_idx_files_as_paddles_0_to_255_pixels(tmp_path):
    rng = np.random.RandomState(0)
    images, labels = rng.randint(0, 256, (5, 28, 28)), np.array([3, 1, 4, 1, 5])
    paths = _idx_files(tmp_path, images, labels)
    for kind in (MNIST, FashionMNIST):
        data = kind(*paths, mode="test", backend="cv2")
        assert len(data) == 5
        image, label = data[2]
        assert image.dtype == np.float32 and image.shape == (28, 28)
        np.testing.assert_array_equal(image, images[2])
        assert label.dtype == np.int64 and label.tolist() == [4]
    flipped = MNIST(*paths, backend="cv2", transform=lambda x: x[:, ::-1])[0][0]
    np.testing.assert_array_equal(flipped, images[0][:, ::-1])


def test_mnist_without_files_uses_the_synthetic_stand_in_and_fashion_refuses():
    data = MNIST(mode="test", backend="cv2")
    assert len(data) == 1000
    image, label = data[0]
    assert image.shape == (28, 28) and 0 <= image.min() <= image.max() <= 255 and label.shape == (1,)
    with pytest.raises(FileNotFoundError, match="fashion-mnist"):
        FashionMNIST(backend="cv2")
    with pytest.raises(ValueError, match="downloading automatically is disabled"):
        MNIST(download=False, backend="cv2")
    with pytest.raises(ValueError, match="mode"):
        MNIST(mode="valid", backend="cv2")
    with pytest.raises(ValueError, match="backend"):
        MNIST(backend="tensor")


def test_a_dataloader_batches_mnist_samples():
    loader = paddle.io.DataLoader(MNIST(mode="test", backend="cv2"), batch_size=4)
    images, labels = next(iter(loader))
    assert images.shape == [4, 28, 28] and labels.shape == [4, 1]


def _cifar_archive(path, folder, member, key, data, labels):
    return write_tar(path, {f"{folder}/{member}": pickle.dumps({b"data": data, key: labels})}, "w:gz")


def test_cifar_reads_its_pickled_batches_as_hwc_pictures(tmp_path):
    data = np.random.RandomState(1).randint(0, 256, (3, 3072)).astype("uint8")
    ten = _cifar_archive(tmp_path / "c10.tar.gz", "cifar-10-batches-py", "test_batch", b"labels", data, [7, 2, 9])
    cifar = Cifar10(ten, mode="test", backend="cv2")
    image, label = cifar[1]
    assert len(cifar) == 3 and image.shape == (32, 32, 3) and image.dtype == np.float32
    np.testing.assert_array_equal(image, data[1].reshape(3, 32, 32).transpose(1, 2, 0))
    assert label.dtype == np.int64 and label.shape == () and int(label) == 2
    assert len(Cifar10(ten, mode="train", backend="cv2")) == 0  # no data_batch members in this archive
    hundred = _cifar_archive(tmp_path / "c100.tar.gz", "cifar-100-python", "train", b"fine_labels", data, [99, 0, 5])
    assert int(Cifar100(hundred, backend="cv2")[0][1]) == 99


def test_cifar_without_files_uses_the_synthetic_stand_in():
    cifar = Cifar100(mode="test", backend="cv2")
    image, label = cifar[0]
    assert len(cifar) == 2000 and image.shape == (32, 32, 3) and 0 <= int(label) < 100


def test_flowers_stand_in_gives_rgb_pictures_and_oxfords_labels(monkeypatch):
    monkeypatch.setenv("FLEETGRAPH_FLOWERS_SAMPLES", "5")
    flowers = Flowers(mode="valid", backend="cv2")
    assert len(flowers) == 5
    in_order = [flowers[i] for i in range(5)]
    image, label = flowers[3]  # read again out of order: the same sample
    np.testing.assert_array_equal(image, in_order[3][0])
    assert image.shape == (224, 224, 3) and image.dtype == np.float32 and 0 <= image.min() <= image.max() <= 255
    assert label.shape == (1,) and 1 <= int(label[0]) <= 10
    with pytest.raises(ValueError, match="data_file is not set"):
        Flowers(download=False, backend="cv2")


def _voc_archive(path, names):
    members = {"VOCdevkit/VOC2012/ImageSets/Segmentation/val.txt": "\n".join(names).encode()}
    for name in names:
        members[f"VOCdevkit/VOC2012/JPEGImages/{name}.jpg"] = b"not decoded here"
        members[f"VOCdevkit/VOC2012/SegmentationClass/{name}.png"] = b"not decoded here"
    return write_tar(path, members)


def test_voc2012_indexes_its_tar(tmp_path):
    voc = VOC2012(_voc_archive(tmp_path / "voc.tar", ["2007_000032", "2007_000039"]), mode="valid", backend="cv2")
    assert len(voc) == 2
    assert voc.data[1] == "VOCdevkit/VOC2012/JPEGImages/2007_000039.jpg"
    assert voc.labels[0] == "VOCdevkit/VOC2012/SegmentationClass/2007_000032.png"
    with pytest.raises(FileNotFoundError, match="VOCtrainval_11-May-2012.tar"):
        VOC2012(backend="cv2")


def test_dataset_folder_labels_npy_pictures_by_class_directory(tmp_path):
    rng = np.random.RandomState(2)
    pictures = {}
    for cls, count in (("cat", 2), ("dog", 1)):
        (tmp_path / cls).mkdir()
        for i in range(count):
            pictures[(cls, i)] = rng.randint(0, 256, (4, 5, 3)).astype("uint8")
            np.save(tmp_path / cls / f"{i}.npy", pictures[(cls, i)])
    (tmp_path / "dog" / "notes.txt").write_text("not a picture")
    data = DatasetFolder(str(tmp_path), transform=lambda x: x.astype("float32") / 255.0)
    assert data.classes == ["cat", "dog"] and data.class_to_idx == {"cat": 0, "dog": 1}
    assert len(data) == 3 and data.targets == [0, 0, 1]
    sample, target = data[2]
    np.testing.assert_allclose(sample, pictures[("dog", 0)] / 255.0, rtol=1e-6)
    assert target == 1
    flat = ImageFolder(str(tmp_path))
    assert len(flat) == 3 and isinstance(flat[0], list)
    np.testing.assert_array_equal(flat[1][0], pictures[("cat", 1)])
    with pytest.raises(RuntimeError, match="Found 0"):
        DatasetFolder(str(tmp_path), extensions=(".bmp",))


def test_image_load_reads_npy_pictures_with_cv2_and_checks_the_backend(tmp_path):
    np.save(tmp_path / "y.npy", np.zeros((2, 2, 3), "uint8"))
    assert image_load(str(tmp_path / "y.npy"), backend="cv2").shape == (2, 2, 3)
    with pytest.raises(ValueError):
        image_load("tmp.jpg", backend=1)
    assert [datasets.mnist, datasets.cifar, datasets.flowers, datasets.folder, datasets.voc2012]


def test_the_backend_setting_is_kept():
    saved = get_image_backend()
    try:
        set_image_backend("cv2")
        assert get_image_backend() == "cv2" and MNIST(mode="test").backend == "cv2"
        with pytest.raises(ValueError):
            set_image_backend(1)
    finally:
        set_image_backend(saved)
