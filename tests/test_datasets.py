"""paddle.dataset's corpora (imdb, cifar, wmt14, wmt16, conll05, sentiment, and mnist's and
uci_housing's 1.8 names): Paddle's file formats, written small here, parsed into Paddle's sample
layouts; and the synthetic stand-ins: real shapes and sizes, the same in every run, said on stderr."""

from __future__ import annotations

import io
import itertools
import re
import tarfile

import numpy as np
import pytest

import fleetgraph as paddle
from fleetgraph.dataset import common


@pytest.fixture
def data_home(tmp_path, monkeypatch):
    """An empty data home (and no Paddle cache) with the stderr notices not yet given."""
    monkeypatch.setenv("FLEETGRAPH_DATA_HOME", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setattr(common, "_warned", set())
    return tmp_path


def _write_tar(path, members: dict[str, bytes]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))


def test_imdb_reads_aclimdb_as_paddle_positive_reviews_first(data_home):
    _write_tar(
        data_home / "imdb" / "imdb%2FaclImdb_v1.tar.gz",
        {
            "aclImdb/train/pos/0_9.txt": b"A good, GOOD film!\n",
            "aclImdb/train/neg/0_2.txt": b"A bad film.\r\n",
            "aclImdb/train/unsup/0_0.txt": b"ignored words",
            "aclImdb/test/neg/1_1.txt": b"Bad bad caf\xc3\xa9",
            "aclImdb/test/pos/1_8.txt": b"good",
        },
    )
    imdb = paddle.dataset.imdb
    word_idx = imdb.build_dict(re.compile(r"aclImdb/train/.*\.txt$"), 0)
    # counts: good 2, a 2, film 2, bad 1, ignored 1, words 1; ties by spelling, '<unk>' last
    assert word_idx == {"a": 0, "film": 1, "good": 2, "bad": 3, "ignored": 4, "words": 5, "<unk>": 6}
    assert list(imdb.train(word_idx)()) == [([0, 2, 2, 1], 0), ([0, 3, 1], 1)]
    assert list(imdb.test(word_idx)()) == [([2], 0), ([3, 3, 6], 1)]
    assert imdb.word_dict() == {"<unk>": 0}  # nothing seen more than 150 times
    assert "café" in imdb.build_dict(re.compile(r"aclImdb/test/.*"), 0)


def test_imdb_synthetic_has_a_real_sized_dictionary_and_a_learnable_signal(data_home, capsys):
    imdb = paddle.dataset.imdb
    first = list(itertools.islice(imdb.tokenize(re.compile(r"aclImdb/train/pos/")), 3))
    assert first == list(itertools.islice(imdb.tokenize(re.compile(r"aclImdb/train/pos/")), 3))
    assert "SYNTHETIC" in capsys.readouterr().err and capsys.readouterr().err == ""
    word_idx = imdb.word_dict()
    assert 4500 < len(word_idx) < 5600 and word_idx["<unk>"] == len(word_idx) - 1
    samples = imdb.test(word_idx)()
    good = {word_idx[f"good{i}"] for i in range(300)}
    right = [(sum(w in good for w in ids) * 2 > len(ids) / 12) == (label == 0) for ids, label in samples]
    assert len(right) == 5000 and np.mean(right) > 0.9
