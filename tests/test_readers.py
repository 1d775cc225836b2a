"""Readers, DataFeeder and the datasets (real files when present, labelled synthetic data otherwise)."""

from __future__ import annotations

import gzip
import importlib
import random

import numpy as np
import pytest

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.ir import Program, ShapeError, program_guard


def _numbers(n):
    return lambda: iter(range(n))


def test_batch_groups_samples_and_keeps_or_drops_the_remainder():
    assert list(paddle.batch(_numbers(5), 2)()) == [[0, 1], [2, 3], [4]]
    assert list(paddle.batch(_numbers(5), 2, drop_last=True)()) == [[0, 1], [2, 3]]
    with pytest.raises(ValueError, match="batch_size expected a positive int"):
        paddle.batch(_numbers(5), 0)


def test_shuffle_permutes_within_the_buffer_and_is_seedable():
    random.seed(3)
    a = list(paddle.reader.shuffle(_numbers(100), buf_size=10)())
    random.seed(3)
    b = list(paddle.reader.shuffle(_numbers(100), buf_size=10)())
    assert a == b and sorted(a) == list(range(100)) and a != list(range(100))
    assert sorted(a[:10]) == list(range(10))  # a window never mixes with the next


def test_data_feeder_stacks_samples_in_the_variable_dtype_and_shape():
    main = Program()
    with program_guard(main, Program()):
        x = fluid.layers.data(name="x", shape=[13], dtype="float32")
        label = fluid.layers.data(name="label", shape=[1], dtype="int64")
    feeder = fluid.DataFeeder(place=fluid.CPUPlace(), feed_list=[x, label])
    feed = feeder.feed([(np.arange(13.0), 3), (np.ones(13), 4)])
    assert feed["x"].dtype == np.float32 and feed["x"].shape == (2, 13)
    assert feed["label"].dtype == np.int64 and feed["label"].tolist() == [[3], [4]]
    with pytest.raises(ShapeError, match=r"DataFeeder: 'x' expected samples of shape \[13\], got \[12\]"):
        feeder.feed([(np.ones(12), 1)])


def test_uci_housing_synthetic_set_has_the_real_shape_and_says_so_once(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("FLEETGRAPH_DATA_HOME", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path))
    from fleetgraph.dataset import common, uci_housing

    monkeypatch.setattr(uci_housing, "_DATA", None)
    monkeypatch.setattr(common, "_warned", set())
    train = list(uci_housing.train()())
    test = list(uci_housing.test()())
    list(uci_housing.train()())
    err = capsys.readouterr().err
    assert err.count("SYNTHETIC") == 1
    assert len(train) == 404 and len(test) == 102
    x, y = train[0]
    assert x.shape == (13,) and y.shape == (1,)


def test_uci_housing_reads_the_real_file_when_present(monkeypatch, tmp_path):
    rows = np.arange(3 * 14, dtype=float).reshape(3, 14) + np.eye(3, 14)
    (tmp_path / "uci_housing").mkdir()
    (tmp_path / "uci_housing" / "housing.data").write_text("\n".join(" ".join(map(str, r)) for r in rows))
    monkeypatch.setenv("FLEETGRAPH_DATA_HOME", str(tmp_path))
    from fleetgraph.dataset import uci_housing

    monkeypatch.setattr(uci_housing, "_DATA", None)
    samples = list(uci_housing.train()()) + list(uci_housing.test()())
    feats = rows[:, :-1]
    want = (feats - feats.mean(0)) / (feats.max(0) - feats.min(0))
    np.testing.assert_allclose(np.array([s[0] for s in samples]), want)
    np.testing.assert_allclose(np.array([s[1][0] for s in samples]), rows[:, -1])


def test_mnist_reads_idx_files_when_present(monkeypatch, tmp_path):
    images = np.random.default_rng(0).integers(0, 256, size=(5, 784), dtype=np.uint8)
    labels = np.array([3, 1, 4, 1, 5], dtype=np.uint8)
    folder = tmp_path / "mnist"
    folder.mkdir()
    with gzip.open(folder / "train-images-idx3-ubyte.gz", "wb") as f:
        f.write(b"\0" * 16 + images.tobytes())
    with gzip.open(folder / "train-labels-idx1-ubyte.gz", "wb") as f:
        f.write(b"\0" * 8 + labels.tobytes())
    monkeypatch.setenv("FLEETGRAPH_DATA_HOME", str(tmp_path))
    mnist = importlib.import_module("fleetgraph.dataset.mnist")
    samples = list(mnist.train()())
    assert [s[1] for s in samples] == [3, 1, 4, 1, 5]
    np.testing.assert_allclose(samples[0][0], images[0] / 255.0 * 2 - 1, atol=1e-6)


def test_synthetic_flowers_are_flowers_shaped_in_ten_classes_and_alike_in_every_process(monkeypatch, capsys):
    monkeypatch.setenv("FLEETGRAPH_DATA_HOME", "/nonexistent")
    monkeypatch.setattr(paddle.dataset.common, "search_paths", lambda name, f: [f"/nonexistent/{name}/{f}"])
    monkeypatch.setenv("FLEETGRAPH_FLOWERS_SAMPLES", "5")
    first = list(paddle.dataset.flowers.train(use_xmap=True)())
    again = list(paddle.dataset.flowers.train()())
    assert len(first) == 5 and all(img.shape == (3 * 224 * 224,) and img.dtype == np.float32 for img, _ in first)
    assert all(0 <= label < 10 for _, label in first)
    assert all(np.array_equal(a, b) and la == lb for (a, la), (b, lb) in zip(first, again))
    assert "SYNTHETIC stand-in: 5 pictures of 3x224x224 in 10 classes" in capsys.readouterr().err
    monkeypatch.setenv("FLEETGRAPH_FLOWERS_SAMPLES", "none")
    with pytest.raises(ValueError, match="FLEETGRAPH_FLOWERS_SAMPLES='none': expected a positive number"):
        paddle.dataset.flowers.test()


def test_image_backend_and_cuda_queries_answer_as_paddle_does():
    paddle.vision.set_image_backend("cv2")
    assert paddle.vision.get_image_backend() == "cv2"
    paddle.vision.set_image_backend("pil")
    with pytest.raises(ValueError, match="expected one of \\['pil', 'cv2', 'tensor'\\], got 'opencv'"):
        paddle.vision.set_image_backend("opencv")
    assert paddle.is_compiled_with_cuda() is False and fluid.is_compiled_with_cuda() is False
