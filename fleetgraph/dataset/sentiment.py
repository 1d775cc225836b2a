"""NLTK's movie_reviews corpus (`paddle.dataset.sentiment`): 1,000 negative and 1,000 positive reviews
as (word ids, label 0 negative / 1 positive), negative and positive files taken in turn; train() the
first 1,600, test() the last 400. get_word_dict() is [(word, id)] by falling count (ties in order of
first appearance, negative files first). Words are NLTK's WordPunctTokenizer's (runs of letters and
digits, or of other non-space characters).

The corpus is read, without NLTK, from where Paddle and NLTK keep it: corpora/movie_reviews (its
folder, or movie_reviews.zip) under $FLEETGRAPH_DATA_HOME, Paddle's cache, $NLTK_DATA or NLTK's
usual folders. Without it, a synthetic corpus in the zip's layout is generated, said once on stderr,
and read by the same code: Zipf-drawn words of a 40,000-word vocabulary (about the real 39,768 seen),
the most common ones spelled as the real corpus's (',', 'the', '.', 'a', 'and', ...), and about one
word in 25 a sentiment word of the review's side (one in five of those from the other side).

Unlike Paddle's, train() and test() return readers that are both iterable (Paddle's returned
generators) and callable (so paddle.batch takes them), and may be read again."""

from __future__ import annotations

import collections
import functools
import io
import itertools
import os
import re
import sys
import zipfile
from dataclasses import dataclass

import numpy as np

from .common import search_paths, warn_synthetic, zip_bytes

__all__ = ["get_word_dict", "test", "train"]

NUM_TRAINING_INSTANCES = 1600
NUM_TOTAL_INSTANCES = 2000
_TOKEN = re.compile(r"\w+|[^\w\s]+")
_FILE = re.compile(r"(neg|pos)/[^.][^/]*\.txt$")
_COMMON = [",", "the", ".", "a", "and", "of", "to", "'", "is", "in", "s", '"', "it", "that", "-", ")", "("]
_SIDE_WORDS = 300


def _locations() -> list[str]:
    """Where corpora/movie_reviews may be: Paddle's homes, then NLTK's data path."""
    nltk_homes = [p for p in os.environ.get("NLTK_DATA", "").split(os.pathsep) if p]
    nltk_homes += [
        os.path.expanduser("~/nltk_data"),
        *(os.path.join(sys.prefix, d) for d in ("nltk_data", "share/nltk_data", "lib/nltk_data")),
    ]
    nltk_homes += [
        "/usr/share/nltk_data",
        "/usr/local/share/nltk_data",
        "/usr/lib/nltk_data",
        "/usr/local/lib/nltk_data",
    ]
    return search_paths("corpora", "movie_reviews") + [os.path.join(h, "corpora", "movie_reviews") for h in nltk_homes]


def _find() -> str | None:
    for path in _locations():
        for candidate in (path, path + ".zip"):
            if os.path.exists(candidate):
                return candidate
    return None


@functools.cache
def _synthetic() -> bytes:
    rng = np.random.default_rng(1600)
    vocab = np.array(
        _COMMON
        + [f"w{i}" for i in range(40000 - len(_COMMON) - 2 * _SIDE_WORDS)]
        + [f"{side}{i}" for side in ("bad", "good") for i in range(_SIDE_WORDS)],
        dtype=object,
    )
    plain = len(vocab) - 2 * _SIDE_WORDS
    zipf = 1.0 / np.arange(1, plain + 1)
    members = {}
    for side, label in enumerate(("neg", "pos")):
        lengths = rng.integers(300, 1280, size=1000)
        total = lengths.sum()
        words = rng.choice(plain, size=total, p=zipf / zipf.sum())
        sides = np.where(rng.random(total) < 0.8, side, 1 - side)
        sentiment = plain + sides * _SIDE_WORDS + rng.integers(0, _SIDE_WORDS, size=total)
        ids = np.where(rng.random(total) < 1 / 25, sentiment, words)
        for i, review in enumerate(np.split(vocab[ids], np.cumsum(lengths)[:-1])):
            members[f"movie_reviews/{label}/cv{i:03d}_{int(rng.integers(10000, 30000))}.txt"] = (
                " ".join(review) + "\n"
            ).encode("ascii")
    members["movie_reviews/README"] = b"A synthetic stand-in for the polarity dataset v2.0.\n"
    return zip_bytes(members)


def _read_files(location: str | None) -> dict[str, str]:
    """fileid ('neg/cv000_29416.txt') -> text, sorted by fileid, from a folder, a zip, or the synthetic zip."""
    if location is not None and os.path.isdir(location):
        names = (
            os.path.relpath(os.path.join(d, f), location).replace(os.sep, "/")
            for d, _, fs in os.walk(location)
            for f in fs
        )
        texts = {}
        for name in names:
            if _FILE.match(name):
                with open(os.path.join(location, name), encoding="ascii") as f:
                    texts[name] = f.read()
        return dict(sorted(texts.items()))
    package = zipfile.ZipFile(location if location is not None else io.BytesIO(_synthetic()))
    with package:
        prefix = "movie_reviews/"
        names = sorted(
            n[len(prefix) :] for n in package.namelist() if n.startswith(prefix) and _FILE.match(n[len(prefix) :])
        )
        return {name: package.read(prefix + name).decode("ascii") for name in names}


@dataclass(frozen=True)
class _Corpus:
    word_dict: list[tuple[str, int]]
    files: list[str]  # a negative file and a positive one in turn
    data: list[tuple[list[int], int]]  # (word ids, label) of each of files


@functools.cache
def _parse(location: str | None) -> _Corpus:
    """The corpus at location (None: the synthetic one); the location keys the cache."""
    words = {fileid: _TOKEN.findall(text) for fileid, text in _read_files(location).items()}
    neg, pos = ([f for f in words if f.startswith(side + "/")] for side in ("neg", "pos"))
    counts = collections.Counter()
    for fileid in neg + pos:
        counts.update(words[fileid])
    ranked = sorted(counts.items(), key=lambda x: -x[1])  # stable: ties stay in order of first appearance
    word_dict = [(word, i) for i, (word, _) in enumerate(ranked)]
    files = list(itertools.chain.from_iterable(zip(neg, pos)))
    ids = dict(word_dict)
    data = [([ids[w] for w in words[f]], 0 if f.startswith("neg/") else 1) for f in files]
    return _Corpus(word_dict, files, data)


def _corpus() -> _Corpus:
    location = _find()
    if location is None:
        what = "2,000 reviews of Zipf-drawn words with sentiment words, movie_reviews' layout"
        warn_synthetic("sentiment", what, where=" or ".join(_locations()[:2]) + " (or NLTK's data path)")
    return _parse(location)


def get_word_dict() -> list[tuple[str, int]]:
    """[(word, id)], the most frequent word first, over the negative then the positive files."""
    return list(_corpus().word_dict)


def sort_files() -> list[str]:
    """The files, a negative one and a positive one in turn."""
    return list(_corpus().files)


def load_sentiment_data() -> list[tuple[list[int], int]]:
    return list(_corpus().data)


class _Reader:
    """Samples that can be iterated (as Paddle's generators) or called for a fresh iterator (a reader)."""

    def __init__(self, samples: list):
        self._samples = samples

    def __call__(self):
        return iter(self._samples)

    def __iter__(self):
        return iter(self._samples)


def reader_creator(data) -> _Reader:
    return _Reader([(ids, label) for ids, label in data])


def train() -> _Reader:
    return reader_creator(load_sentiment_data()[:NUM_TRAINING_INSTANCES])


def test() -> _Reader:
    return reader_creator(load_sentiment_data()[NUM_TRAINING_INSTANCES:])


def fetch() -> None:
    """Makes the data ready: nothing is downloaded; the corpus is found and read, or the synthetic one
    is made (and said on stderr)."""
    _corpus()
