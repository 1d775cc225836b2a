"""paddle.text's datasets as Paddle 2.0's: each a paddle.io Dataset whose samples are Paddle 2.0's
tuples of NumPy arrays, read through the 1.x parsers from small archives in Paddle's formats (in the
data home, or given as data_file), loadable by paddle.io.DataLoader; no file and no download refused;
a synthetic stand-in said on stderr."""

from __future__ import annotations

import gzip
import io
import tarfile
import zipfile

import numpy as np
import pytest

import fleetgraph as paddle
from fleetgraph.dataset import common, uci_housing
from fleetgraph.ir import FleetgraphError

text = paddle.text


@pytest.fixture
def data_home(tmp_path, monkeypatch):
    """An empty data home (and no Paddle cache) with the stderr notices not yet given."""
    monkeypatch.setenv("FLEETGRAPH_DATA_HOME", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setattr(common, "_warned", set())
    return tmp_path


def _tar(path, members: dict[str, bytes]):
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


def _lines(*lines: str) -> bytes:
    return "".join(line + "\n" for line in lines).encode()


def _as_lists(sample) -> list:
    return [np.asarray(f).tolist() for f in sample]


def test_uci_housing_serves_normalized_float32_rows_split_80_20(data_home, monkeypatch):
    monkeypatch.setattr(uci_housing, "_DATA", None)
    rows = np.arange(10 * 14, dtype=float).reshape(10, 14) ** 1.5
    path = data_home / "uci_housing" / "housing.data"
    path.parent.mkdir()
    path.write_text("\n".join(" ".join(map(str, r)) for r in rows))
    train, test = text.UCIHousing(mode="train"), text.UCIHousing(mode="test")
    assert (len(train), len(test)) == (8, 2)
    x, y = test[1]
    feats = rows[:, :-1]
    np.testing.assert_allclose(x, ((feats - feats.mean(0)) / (feats.max(0) - feats.min(0)))[9], rtol=1e-6)
    assert x.dtype == y.dtype == np.float32 and y.shape == (1,) and y[0] == np.float32(rows[9, -1])
    (bx, by), *_ = list(paddle.io.DataLoader(train, batch_size=4))
    assert bx.shape == [4, 13] and by.shape == [4, 1]


def test_imdb_labels_positive_reviews_0_and_keeps_the_word_index(data_home):
    _tar(
        data_home / "imdb" / "imdb%2FaclImdb_v1.tar.gz",
        {
            "aclImdb/train/pos/0_9.txt": b"A good, GOOD film!\n",
            "aclImdb/train/neg/0_2.txt": b"A bad film.\r\n",
            "aclImdb/test/pos/1_8.txt": b"good",
        },
    )
    train = text.Imdb(mode="train", cutoff=1)
    assert train.word_idx == {"good": 0, "a": 1, "film": 2, "<unk>": 3}
    assert [_as_lists(train[i]) for i in range(len(train))] == [[[1, 0, 0, 2], [0]], [[1, 3, 2], [1]]]
    assert _as_lists(text.Imdb(mode="test", cutoff=1)[0]) == [[0], [0]]


def test_imikolov_ngrams_and_sequences_as_paddle_2(data_home):
    ptb = "./simple-examples/data/ptb.{}.txt"
    files = {"train": " a b c \n b c \n", "valid": " a c \n", "test": " c a \n"}
    _tar(data_home / "imikolov" / "simple-examples.tgz", {ptb.format(k): v.encode() for k, v in files.items()})
    grams = text.Imikolov(data_type="NGRAM", window_size=3, min_word_freq=0)
    assert grams.word_idx == {"<e>": 0, "<s>": 1, "c": 2, "a": 3, "b": 4, "<unk>": 5}
    assert [_as_lists(grams[i]) for i in range(3)] == [[1, 3, 4], [3, 4, 2], [4, 2, 0]]
    assert grams[0][0].shape == ()
    seqs = text.Imikolov(data_type="SEQ", window_size=-1, mode="test", min_word_freq=0)
    assert [_as_lists(seqs[i]) for i in range(len(seqs))] == [[[1, 2, 3], [2, 3, 0]]]
    with pytest.raises(FleetgraphError, match="data_type 'BAD'"):
        text.Imikolov(data_type="BAD")


def test_movielens_fields_are_paddle_2s_eight_arrays(data_home):
    path = data_home / "movielens" / "ml-1m.zip"
    path.parent.mkdir()
    with zipfile.ZipFile(path, "w") as package:
        package.writestr("ml-1m/movies.dat", "1::Toy Story (1995)::Animation|Comedy\n2::Jumanji (1995)::Adventure\n")
        package.writestr("ml-1m/users.dat", "1::F::1::10::48067\n2::M::56::16::70072\n")
        package.writestr("ml-1m/ratings.dat", "1::1::5::978300760\n2::2::3::978302109\n")
    ratings = text.Movielens(mode="train", test_ratio=0.0)
    assert len(ratings) == 2 and len(text.Movielens(mode="test", test_ratio=0.0)) == 0
    assert _as_lists(ratings[0]) == [[1], [1], [0], [10], [1], [1, 2], [2, 1], [5.0]]
    assert [f.shape for f in ratings[1]] == [(1,)] * 6 + [(1,), (1,)]


def _conll05_files(folder):
    folder.mkdir(parents=True)
    (folder / "wordDict.txt").write_text("<unk>\nbos\neos\nJohn\nate\nan\napple\ntoday\n")
    (folder / "verbDict.txt").write_text("eat\n")
    (folder / "targetDict.txt").write_text("".join(f"B-{t}\nI-{t}\n" for t in ["A0", "A1", "AM-TMP", "V"]) + "O\n")
    words = _lines("John", "ate", "an", "apple", "today", "")
    props = _lines("-\t(A0*)", "eat\t(V*)", "-\t(A1*", "-\t*)", "-\t(AM-TMP*)", "")
    return _tar(
        folder / "tests.tar.gz",
        {
            "conll05st-release/test.wsj/words/test.wsj.words.gz": gzip.compress(words),
            "conll05st-release/test.wsj/props/test.wsj.props.gz": gzip.compress(props),
        },
    )


def test_conll05st_reads_the_given_files_into_nine_slots(data_home):
    archive = _conll05_files(data_home / "given")
    d = data_home / "given"
    srl = text.Conll05st(
        data_file=str(archive),
        word_dict_file=str(d / "wordDict.txt"),
        verb_dict_file=str(d / "verbDict.txt"),
        target_dict_file=str(d / "targetDict.txt"),
        emb_file="emb-path",
    )
    assert len(srl) == 1 and srl.get_embedding() == "emb-path"
    assert _as_lists(srl[0]) == [
        [3, 4, 5, 6, 7],
        [1] * 5,
        [3] * 5,
        [4] * 5,
        [5] * 5,
        [6] * 5,
        [0] * 5,
        [1, 1, 1, 1, 0],
        [0, 6, 2, 3, 4],
    ]
    assert srl.get_dict()[1] == {"eat": 0}


def test_wmt14_and_wmt16_pairs_from_a_given_archive(data_home):
    wmt14_tar = _tar(
        data_home / "w14.tgz",
        {
            "wmt14/src.dict": _lines("<s>", "<e>", "<unk>", "le", "chat"),
            "wmt14/trg.dict": _lines("<s>", "<e>", "<unk>", "the", "cat"),
            "wmt14/train/train": _lines("le chat\tthe cat", "no tab here"),
            "wmt14/gen/gen": _lines("chat\tcat"),
        },
    )
    w14 = text.WMT14(data_file=str(wmt14_tar), mode="train", dict_size=5)
    assert [_as_lists(w14[0])] == [[[0, 3, 4, 1], [0, 3, 4], [3, 4, 1]]]
    assert w14.get_dict(reverse=True)[1][4] == "cat"
    assert _as_lists(text.WMT14(data_file=str(wmt14_tar), mode="gen", dict_size=4)[0]) == [[0, 2, 1], [0, 2], [2, 1]]
    wmt16_tar = _tar(
        data_home / "w16.tgz",
        {"wmt16/train": _lines("a b\tx y", "a c\tz y"), "wmt16/val": _lines("c d\ty w"), "wmt16/test": _lines("b\tx")},
    )
    w16 = text.WMT16(data_file=str(wmt16_tar), mode="val", src_dict_size=4, trg_dict_size=10, lang="de")
    assert _as_lists(w16[0]) == [[0, 3, 2, 1], [0, 5, 2], [5, 2, 1]]  # y w -> c d
    assert w16.get_dict("en") == {"<s>": 0, "<e>": 1, "<unk>": 2, "a": 3, "b": 4, "c": 5}
    assert w16.get_dict("de", reverse=True) == {0: "<s>", 1: "<e>", 2: "<unk>", 3: "y"}
    assert len(text.WMT16(data_file=str(wmt16_tar), mode="train", src_dict_size=10, trg_dict_size=10)) == 2


def test_no_file_without_download_and_bad_arguments_are_refused(data_home):
    with pytest.raises(FleetgraphError, match="data_file is not set and download=False"):
        text.WMT16(mode="train", src_dict_size=10, trg_dict_size=10, download=False)
    with pytest.raises(FleetgraphError, match="mode 'dev'"):
        text.Imdb(mode="dev")
    with pytest.raises(FleetgraphError, match="dict_size=-1"):
        text.WMT14(data_file="x.tgz")
    with pytest.raises(NotImplementedError, match="Imdb: data_file"):
        text.Imdb(data_file="aclImdb_v1.tar.gz")


def test_without_files_the_synthetic_stand_in_is_said_on_stderr(data_home, monkeypatch, capsys):
    monkeypatch.setattr(uci_housing, "_DATA", None)
    train = text.UCIHousing()
    assert "SYNTHETIC" in capsys.readouterr().err
    assert len(train) == int(506 * 0.8) and train[0][0].shape == (13,)
    with pytest.raises(FleetgraphError, match="the archive has no ./simple-examples/data/ptb.test.txt"):
        text.Imikolov(data_type="SEQ", mode="test")
    assert text.datasets.UCIHousing is text.UCIHousing
