"""paddle.dataset's corpora (imdb, cifar, wmt14, wmt16, conll05, sentiment, and mnist's and
uci_housing's 1.8 names): Paddle's file formats, written small here, parsed into Paddle's sample
layouts; and the synthetic stand-ins: real shapes and sizes, the same in every run, said on stderr."""

from __future__ import annotations

import gzip
import io
import itertools
import pickle
import re
import tarfile
import zipfile

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
    assert 5000 < len(word_idx) < 5300 and word_idx["<unk>"] == len(word_idx) - 1  # Paddle tests: 5,147
    good, bad = ({word_idx[f"{side}{i}"] for i in range(300)} for side in ("good", "bad"))
    right = []
    for side, label in (("pos", 0), ("neg", 1)):
        for doc in itertools.islice(imdb.tokenize(re.compile(rf"aclImdb/test/{side}/")), 500):
            ids = [word_idx.get(w, word_idx["<unk>"]) for w in doc]
            right.append((sum(w in good for w in ids) > sum(w in bad for w in ids)) == (label == 0))
    assert np.mean(right) > 0.9


def _cifar_batch(data: np.ndarray, labels: list[int], key: bytes) -> bytes:
    return pickle.dumps({b"batch_label": b"b", key: labels, b"data": data, b"filenames": [b"f"] * len(labels)}, 2)


def test_cifar_reads_the_pickled_batches_as_paddle(data_home):
    pixels = np.random.default_rng(0).integers(0, 256, size=(4, 3072), dtype=np.uint8)
    _write_tar(
        data_home / "cifar" / "cifar-10-python.tar.gz",
        {
            "cifar-10-batches-py/batches.meta": pickle.dumps({b"label_names": []}),
            "cifar-10-batches-py/data_batch_1": _cifar_batch(pixels[:2], [3, 9], b"labels"),
            "cifar-10-batches-py/data_batch_2": _cifar_batch(pixels[2:3], [0], b"labels"),
            "cifar-10-batches-py/test_batch": _cifar_batch(pixels[3:], [7], b"labels"),
        },
    )
    _write_tar(
        data_home / "cifar" / "cifar-100-python.tar.gz",
        {
            "cifar-100-python/meta": pickle.dumps({b"fine_label_names": []}),
            "cifar-100-python/train": _cifar_batch(pixels[:3], [99, 5, 0], b"fine_labels"),
            "cifar-100-python/test": _cifar_batch(pixels[3:], [42], b"fine_labels"),
        },
    )
    cifar = paddle.dataset.cifar
    train = list(cifar.train10()())
    assert [label for _, label in train] == [3, 9, 0]
    assert all(x.dtype == np.float32 and x.shape == (3072,) for x, _ in train)
    np.testing.assert_array_equal(np.stack([x for x, _ in train]), (pixels[:3] / 255.0).astype(np.float32))
    assert [label for _, label in cifar.test10()()] == [7]
    assert [label for _, label in itertools.islice(cifar.test10(cycle=True)(), 3)] == [7, 7, 7]
    assert [label for _, label in cifar.train100()()] == [99, 5, 0]
    (x, label), *rest = list(cifar.test100()())
    assert label == 42 and rest == [] and np.array_equal(x, (pixels[3] / 255.0).astype(np.float32))
    by_path = cifar.reader_creator(str(data_home / "cifar" / "cifar-10-python.tar.gz"), "data_batch")
    assert [label for _, label in by_path()] == [3, 9, 0]


def test_cifar_synthetic_has_cifar_shapes_and_learnable_classes(data_home, capsys):
    cifar = paddle.dataset.cifar
    test = list(cifar.test10()())
    assert "SYNTHETIC" in capsys.readouterr().err
    x, labels = np.stack([s[0] for s in test]), np.array([s[1] for s in test])
    assert x.shape == (2000, 3072) and x.dtype == np.float32 and 0 <= x.min() and x.max() <= 1
    assert set(labels) == set(range(10))
    train = list(itertools.islice(cifar.train10()(), 2000))
    means = np.stack([np.mean([s[0] for s in train if s[1] == c], axis=0) for c in range(10)])
    nearest = np.argmin(((x[:, None, :] - means[None]) ** 2).sum(-1), axis=1)
    assert np.mean(nearest == labels) > 0.9
    again = next(cifar.test10()())
    assert np.array_equal(again[0], x[0]) and again[1] == labels[0]
    assert max(label for _, label in cifar.test100()()) == 99


def _lines(*lines: str) -> bytes:
    return "".join(line + "\n" for line in lines).encode()


def test_wmt14_reads_the_archive_and_its_dictionaries_as_paddle(data_home):
    _write_tar(
        data_home / "wmt14" / "wmt14.tgz",
        {
            "wmt14/src.dict": _lines("<s>", "<e>", "<unk>", "le", "chat"),
            "wmt14/trg.dict": _lines("<s>", "<e>", "<unk>", "the", "cat"),
            "wmt14/train/train": _lines(
                "le chat\tthe cat", "no tab here", "le chien\tthe dog", " ".join(["le"] * 79) + "\tthe"
            ),
            "wmt14/test/test": _lines("chat\tcat"),
        },
    )
    wmt14 = paddle.dataset.wmt14
    assert list(wmt14.train(5)()) == [([0, 3, 4, 1], [0, 3, 4], [3, 4, 1]), ([0, 3, 2, 1], [0, 3, 2], [3, 2, 1])]
    assert list(wmt14.test(4)()) == [([0, 2, 1], [0, 2], [2, 1])]  # 'chat' and 'cat' are past the 4th line
    assert wmt14.get_dict(4) == ({0: "<s>", 1: "<e>", 2: "<unk>", 3: "le"}, {0: "<s>", 1: "<e>", 2: "<unk>", 3: "the"})
    assert wmt14.get_dict(3, reverse=False)[1] == {"<s>": 0, "<e>": 1, "<unk>": 2}


def test_wmt14_synthetic_has_30000_word_dictionaries_and_aligned_pairs(data_home, capsys):
    wmt14 = paddle.dataset.wmt14
    src_dict, trg_dict = wmt14.get_dict(30000)
    assert len(src_dict) == len(trg_dict) == 30000 and (src_dict[2], trg_dict[1]) == ("<unk>", "<e>")
    assert "SYNTHETIC" in capsys.readouterr().err
    pairs = list(itertools.islice(wmt14.train(30000)(), 100))
    assert pairs == list(itertools.islice(wmt14.train(30000)(), 100))
    for src, trg, trg_next in pairs:
        assert src[0] == 0 and src[-1] == 1 and trg[0] == 0 and trg_next[-1] == 1
        assert len(src) - 2 == len(trg) - 1 == len(trg_next) - 1  # word for word
        assert trg[1:] == trg_next[:-1]
    assert sum(1 for _ in wmt14.test(30000)()) == 1000


def test_wmt16_builds_dictionaries_from_the_training_text_as_paddle(data_home):
    _write_tar(
        data_home / "wmt16" / "wmt16.tar.gz",
        {
            "wmt16/train": _lines("a b\tx y", "a c\tz y", "bad line"),
            "wmt16/val": _lines("c d\ty w"),
            "wmt16/test": _lines("b\tx"),
        },
    )
    wmt16 = paddle.dataset.wmt16
    assert wmt16.get_dict("en", 10) == {"<s>": 0, "<e>": 1, "<unk>": 2, "a": 3, "b": 4, "c": 5}
    assert wmt16.get_dict("de", 5, reverse=True) == {0: "<s>", 1: "<e>", 2: "<unk>", 3: "y", 4: "x"}
    assert list(wmt16.train(10, 10)()) == [([0, 3, 4, 1], [0, 4, 3], [4, 3, 1]), ([0, 3, 5, 1], [0, 5, 3], [5, 3, 1])]
    assert list(wmt16.validation(10, 4, src_lang="de")()) == [([0, 3, 2, 1], [0, 2, 2], [2, 2, 1])]  # c, d past 4
    (data_home / "wmt16" / "en_4.dict").write_text("<s>\n<e>\n<unk>\nb\n")  # Paddle's dictionary file wins
    assert list(wmt16.test(4, 10)()) == [([0, 3, 1], [0, 4], [4, 1])]
    with pytest.raises(ValueError, match="wmt16: src_lang; expected 'en' .* or 'de' .*, got 'fr'"):
        wmt16.train(10, 10, src_lang="fr")


def test_wmt16_synthetic_dictionaries_have_paddles_full_sizes(data_home, capsys):
    wmt16 = paddle.dataset.wmt16
    samples = list(itertools.islice(wmt16.train(src_dict_size=100000, trg_dict_size=100000)(), 10))
    assert "SYNTHETIC" in capsys.readouterr().err
    for src, trg, trg_next in samples:  # Paddle's wmt16_test checks
        assert (src[0], src[-1], trg[0], trg_next[-1]) == (0, 1, 0, 1) and len(src) == len(trg) + 1
    assert len(wmt16.get_dict("en", 100000)) == 11250 and len(wmt16.get_dict("de", 100000)) == 19220
    words = wmt16.get_dict("en", 1000, True)
    assert len(words) == 1000 and [words[0], words[1], words[2]] == ["<s>", "<e>", "<unk>"]
    assert sum(1 for _ in wmt16.test(1000, 1000)()) == 1000


def _write_conll05(folder) -> None:
    folder.mkdir(parents=True)
    (folder / "conll05st%2FwordDict.txt").write_text("<unk>\nbos\neos\nJohn\nate\nan\napple\ntoday\nRun\n")
    (folder / "verbDict.txt").write_text("eat\nrun\n")  # the plain name is found too
    tags = ["A0", "A1", "AM-TMP", "V", "AM-MNR"]
    (folder / "conll05st%2FtargetDict.txt").write_text("".join(f"B-{t}\nI-{t}\n" for t in tags) + "O\n")
    (folder / "conll05st%2Femb").write_bytes(b"\0" * 16 + np.ones((9, 32), np.float32).tobytes())
    words = _lines("John", "ate", "an", "apple", "today", "", "Run", "fast", "")
    props = _lines("-\t(A0*)", "eat\t(V*)", "-\t(A1*", "-\t*)", "-\t(AM-TMP*)", "", "run\t(V*)", "-\t(AM-MNR*)", "")
    _write_tar(
        folder / "conll05st-tests.tar.gz",
        {
            "conll05st-release/test.wsj/words/test.wsj.words.gz": gzip.compress(words),
            "conll05st-release/test.wsj/props/test.wsj.props.gz": gzip.compress(props),
        },
    )


def test_conll05_yields_paddles_nine_slots_per_predicate(data_home):
    _write_conll05(data_home / "conll05st")
    conll05 = paddle.dataset.conll05
    word_dict, verb_dict, label_dict = conll05.get_dict()
    assert (len(word_dict), verb_dict) == (9, {"eat": 0, "run": 1})
    # the tags sorted (Paddle: in set order), B- then I- for each, O last
    assert list(label_dict) == [f"{bi}-{t}" for t in ["A0", "A1", "AM-MNR", "AM-TMP", "V"] for bi in "BI"] + ["O"]
    first, second = list(conll05.test()())
    assert first == (
        [3, 4, 5, 6, 7],
        [1] * 5,
        [3] * 5,
        [4] * 5,
        [5] * 5,
        [6] * 5,
        [0] * 5,
        [1, 1, 1, 1, 0],
        [0, 8, 2, 3, 6],
    )
    # the predicate first: 'bos' twice before it, the unknown 'fast' (id 0) and 'eos' after
    assert second == ([8, 0], [1, 1], [1, 1], [8, 8], [0, 0], [2, 2], [1, 1], [1, 1], [8, 4])
    emb = np.fromfile(conll05.get_embedding(), dtype=np.float32, offset=16)
    assert emb.reshape(-1, 32).shape == (9, 32)


def test_conll05_synthetic_has_the_real_dictionary_sizes(data_home, capsys):
    conll05 = paddle.dataset.conll05
    word_dict, verb_dict, label_dict = conll05.get_dict()
    assert (len(word_dict), len(verb_dict), len(label_dict)) == (44068, 3162, 59)
    assert "SYNTHETIC" in capsys.readouterr().err
    samples = list(itertools.islice(conll05.test()(), 200))
    for sample in samples:
        assert len(sample) == 9 and len({len(slot) for slot in sample}) == 1
        assert label_dict["B-V"] in sample[-1] and max(sample[0]) < 44068
    assert samples == list(itertools.islice(conll05.test()(), 200))
    emb = np.fromfile(conll05.get_embedding(), dtype=np.float32, offset=16)
    assert emb.shape == (44068 * 32,)


_REVIEWS = {
    "neg/cv000_1.txt": "bad , bad film .\n",
    "neg/cv001_2.txt": "the plot's dull\n",
    "pos/cv000_3.txt": "a good film !\n",
    "pos/cv001_4.txt": "good , good .\n",
}


def _check_sentiment_reads(st, monkeypatch) -> None:
    # counts: good 3, then bad , film . twice, the rest once, each tie in order of first appearance
    words = ["good", "bad", ",", "film", ".", "the", "plot", "'", "s", "dull", "a", "!"]
    assert st.get_word_dict() == [(w, i) for i, w in enumerate(words)]
    assert st.sort_files() == ["neg/cv000_1.txt", "pos/cv000_3.txt", "neg/cv001_2.txt", "pos/cv001_4.txt"]
    monkeypatch.setattr(st, "NUM_TRAINING_INSTANCES", 3)
    assert list(st.train()) == [([1, 2, 1, 3, 4], 0), ([10, 0, 3, 11], 1), ([5, 6, 7, 8, 9], 0)]
    reader = st.test()
    assert list(reader) == list(reader()) == [([0, 2, 0, 4], 1)]  # iterable as Paddle's, callable as a reader


def test_sentiment_reads_the_movie_reviews_folder_in_paddles_cache(data_home, monkeypatch):
    for fileid, text in {**_REVIEWS, "README": "not a review"}.items():
        path = data_home / "corpora" / "movie_reviews" / fileid
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    _check_sentiment_reads(paddle.dataset.sentiment, monkeypatch)


def test_sentiment_reads_the_movie_reviews_zip_on_nltks_path(data_home, monkeypatch):
    nltk_data = data_home / "nltk"
    (nltk_data / "corpora").mkdir(parents=True)
    with zipfile.ZipFile(nltk_data / "corpora" / "movie_reviews.zip", "w") as package:
        for fileid, text in _REVIEWS.items():
            package.writestr(f"movie_reviews/{fileid}", text)
    monkeypatch.setenv("NLTK_DATA", str(nltk_data))
    _check_sentiment_reads(paddle.dataset.sentiment, monkeypatch)


def test_sentiment_synthetic_corpus_has_the_real_sizes_and_top_words(data_home, capsys):
    st = paddle.dataset.sentiment
    word_dict = st.get_word_dict()
    assert "SYNTHETIC" in capsys.readouterr().err
    assert 39000 < len(word_dict) < 40500  # the real corpus has 39,768 words
    # Paddle's test_sentiment.py: the ten most frequent words of the real corpus
    assert word_dict[:10] == [(w, i) for i, w in enumerate([",", "the", ".", "a", "and", "of", "to", "'", "is", "in"])]
    train, test = list(st.train()), list(st.test())
    assert (len(train), len(test)) == (1600, 400)
    assert [label for _, label in test[:4]] == [0, 1, 0, 1]
    ids = dict(word_dict)
    good, bad = ({ids[f"{side}{i}"] for i in range(300)} for side in ("good", "bad"))
    right = [(sum(w in good for w in x) > sum(w in bad for w in x)) == label for x, label in test]
    assert np.mean(right) > 0.9


def test_mnist_reader_creator_reads_a_pair_of_idx_files_as_paddle(tmp_path):
    images = np.random.default_rng(1).integers(0, 256, size=(3, 784), dtype=np.uint8)
    with gzip.open(tmp_path / "images.gz", "wb") as f:
        f.write(np.array([2051, 3, 28, 28], ">u4").tobytes() + images.tobytes())
    with gzip.open(tmp_path / "labels.gz", "wb") as f:
        f.write(np.array([2049, 3], ">u4").tobytes() + bytes([7, 0, 9]))
    samples = list(paddle.dataset.mnist.reader_creator(str(tmp_path / "images.gz"), str(tmp_path / "labels.gz"), 1)())
    assert [label for _, label in samples] == [7, 0, 9]
    np.testing.assert_allclose(samples[2][0], images[2] / 255.0 * 2.0 - 1.0, atol=1e-6)
    assert samples[0][0].dtype == np.float32 and samples[0][0].shape == (784,)
    with pytest.raises(ValueError, match="mnist.reader_creator: buffer_size; expected a positive int, got 0"):
        paddle.dataset.mnist.reader_creator("images.gz", "labels.gz", 0)


def test_mnist_fetch_says_when_the_synthetic_set_stands_in(data_home, capsys):
    paddle.dataset.mnist.fetch()
    assert "fleetgraph.dataset.mnist: real data not found" in capsys.readouterr().err


def test_uci_housing_has_paddles_loader_globals_and_predict_reader(data_home, monkeypatch):
    uci = paddle.dataset.uci_housing
    monkeypatch.setattr(uci, "_DATA", None)
    monkeypatch.setattr(uci, "_RATIO", uci.TRAIN_RATIO)
    rows = np.arange(5 * 14, dtype=float).reshape(5, 14) ** 1.5
    (data_home / "housing.data").write_text("\n".join(" ".join(map(str, r)) for r in rows))
    assert uci.UCI_TRAIN_DATA is None and uci.feature_names[-1] == "LSTAT"
    uci.load_data(str(data_home / "housing.data"), ratio=0.6)
    uci.load_data("ignored once loaded")
    feats = rows[:, :-1]
    normalized = (feats - feats.mean(0)) / (feats.max(0) - feats.min(0))
    np.testing.assert_allclose(uci.UCI_TRAIN_DATA[:, :-1], normalized[:3])
    np.testing.assert_allclose(uci.UCI_TEST_DATA[:, -1], rows[3:, -1])
    (features,) = uci.predict_reader()
    np.testing.assert_allclose(features, normalized[3])
    assert [y[0] for _, y in uci.train()()] == list(rows[:3, -1])


def test_flowers_synthetic_refuses_a_mapper_it_could_not_apply(data_home, capsys):
    with pytest.raises(NotImplementedError, match="flowers: mapper; the synthetic stand-in serves pictures already"):
        paddle.dataset.flowers.train(mapper=lambda sample: sample)
    paddle.dataset.flowers.fetch()
    assert "fleetgraph.dataset.flowers: real data not found" in capsys.readouterr().err


def test_fetch_finds_the_files_or_says_the_synthetic_sets_stand_in(data_home, capsys):
    for module in ("imdb", "cifar", "wmt14", "wmt16", "conll05", "sentiment"):
        getattr(paddle.dataset, module).fetch()
    err = capsys.readouterr().err
    for name in ("imdb", "cifar", "wmt14", "wmt16", "conll05st", "sentiment"):
        assert f"fleetgraph.dataset.{name}: real data not found" in err
