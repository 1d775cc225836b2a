"""paddle.dataset.imikolov and movielens: Paddle's file formats parsed as Paddle's code parses them
(small archives written here in those formats), and the synthetic stand-ins' sizes and signal."""

from __future__ import annotations

import io
import itertools
import tarfile
import zipfile

import pytest

import fleetgraph as paddle
from fleetgraph.dataset import imikolov


@pytest.fixture
def data_home(tmp_path, monkeypatch):
    monkeypatch.setenv("FLEETGRAPH_DATA_HOME", str(tmp_path))
    yield tmp_path


def _write_tgz(path, files: dict[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tf:
        for name, text in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(text.encode())
            tf.addfile(info, io.BytesIO(text.encode()))


def test_imikolov_parses_ptb_files_as_paddle(data_home):
    _write_tgz(
        data_home / "imikolov" / "simple-examples.tgz",
        {imikolov.TRAIN_FILE: " a b c \n b c \n", imikolov.TEST_FILE: " a c \n"},
    )
    # counts: <s> 3, <e> 3, c 3, a 2, b 2; most frequent first, ties by spelling, <unk> last
    word_idx = paddle.dataset.imikolov.build_dict(min_word_freq=0)
    assert word_idx == {"<e>": 0, "<s>": 1, "c": 2, "a": 3, "b": 4, "<unk>": 5}
    assert list(paddle.dataset.imikolov.train(word_idx, 3)())[:3] == [(1, 3, 4), (3, 4, 2), (4, 2, 0)]
    seq = paddle.dataset.imikolov.train(word_idx, 0, paddle.dataset.imikolov.DataType.SEQ)
    assert next(seq()) == ([1, 3, 4, 2], [3, 4, 2, 0])
    assert list(paddle.dataset.imikolov.test(word_idx, 5, paddle.dataset.imikolov.DataType.SEQ)()) == [
        ([1, 3, 2], [3, 2, 0])
    ]
    assert paddle.dataset.imikolov.build_dict(min_word_freq=2) == {"<e>": 0, "<s>": 1, "c": 2, "<unk>": 3}


def test_movielens_parses_ml1m_as_paddle(data_home):
    path = data_home / "movielens" / "ml-1m.zip"
    path.parent.mkdir(parents=True)
    with zipfile.ZipFile(path, "w") as package:
        package.writestr(
            "ml-1m/movies.dat",
            "1::Toy Story (1995)::Animation|Children's|Comedy\n2::Jumanji (1995)::Adventure|Children's|Fantasy\n",
        )
        package.writestr("ml-1m/users.dat", "1::F::1::10::48067\n2::M::56::16::70072\n")
        package.writestr("ml-1m/ratings.dat", "1::1::5::978300760\n2::2::3::978302109\n")
    ml = paddle.dataset.movielens
    assert ml.movie_categories() == {"Adventure": 0, "Animation": 1, "Children's": 2, "Comedy": 3, "Fantasy": 4}
    assert ml.get_movie_title_dict() == {"jumanji": 0, "story": 1, "toy": 2}
    assert list(ml.train(test_ratio=0.0)()) == [
        [1, 1, 0, 10, 1, [1, 2, 3], [2, 1], [5.0]],
        [2, 0, 6, 16, 2, [0, 2, 4], [0], [1.0]],
    ]
    assert list(ml.test(test_ratio=0.0)()) == []
    assert (ml.max_user_id(), ml.max_movie_id(), ml.max_job_id()) == (2, 2, 16)
    assert ml.user_info()[2].value() == [2, 0, 6, 16] and ml.movie_info()[1].title == "Toy Story "


def test_synthetic_stand_ins_have_the_real_sizes_and_say_so(data_home, capsys):
    word_idx = imikolov.build_dict()
    assert 1800 < len(word_idx) < 2300  # PTB's dictionary at min_word_freq=50 has 2,074 words
    grams = list(itertools.islice(imikolov.train(word_idx, 5)(), 1000))
    assert all(len(g) == 5 and max(g) <= word_idx["<unk>"] for g in grams)
    assert "SYNTHETIC" in capsys.readouterr().err
    ml = paddle.dataset.movielens
    assert (ml.max_user_id(), ml.max_movie_id(), ml.max_job_id()) == (6040, 3952, 20)
    assert len(ml.movie_categories()) == 18 and len(ml.get_movie_title_dict()) == 5174
    first = list(itertools.islice(ml.train()(), 200))
    assert first == list(itertools.islice(ml.train()(), 200))  # deterministic
    assert {s[-1][0] for s in first} <= {-3.0, -1.0, 1.0, 3.0, 5.0}
