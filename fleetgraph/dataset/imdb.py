"""The IMDB movie reviews (`paddle.dataset.imdb`): a word dictionary and readers of (word ids, label)
parsed from Paddle's `aclImdb_v1.tar.gz`, label 0 for the positive reviews (all of them first) and 1
for the negative ones, as Paddle's reader_creator orders them. Without the real archive, a synthetic
one of the same layout (5,000 training and 5,000 test reviews, a fifth of IMDB's count so a pass
over it takes seconds; word_dict() has 5,163 words, IMDB's 5,147) is generated, said once on stderr,
and parsed by the same code: Zipf-drawn words where about one word in twelve is a sentiment word of
the review's side (one in five of those from the other side), so a bag of words can learn about 90%.

Unlike Paddle's under Python 3, the dictionary's keys are str, not bytes (Paddle tokenizes the raw
bytes; the same bytes are decoded here as UTF-8 after the same punctuation removal and lowering)."""

from __future__ import annotations

import collections
import functools
import re
import string
import tarfile

import numpy as np

from .common import open_archive, tar_bytes

__all__ = ["build_dict", "test", "train", "word_dict"]

_ARCHIVES = ("imdb%2FaclImdb_v1.tar.gz", "aclImdb_v1.tar.gz")  # Paddle's cache name, then the plain one
_PUNCTUATION = string.punctuation.encode()
_SENTIMENT_WORDS = 300  # per side
_PER_SIDE = 2500  # reviews per side (pos, neg) of each part


def _review_words(rng, count: int, vocab: np.ndarray, zipf: np.ndarray, side: int) -> list[np.ndarray]:
    lengths = rng.integers(40, 420, size=count)
    words = rng.choice(len(vocab) - 2 * _SENTIMENT_WORDS, size=lengths.sum(), p=zipf)
    marked = rng.random(lengths.sum()) < 1 / 12
    sides = np.where(rng.random(lengths.sum()) < 0.8, side, 1 - side)
    first = len(vocab) - 2 * _SENTIMENT_WORDS  # the sentiment words close the vocabulary, 'good's then 'bad's
    sentiment = first + sides * _SENTIMENT_WORDS + rng.integers(0, _SENTIMENT_WORDS, lengths.sum())
    return np.split(vocab[np.where(marked, sentiment, words)], np.cumsum(lengths)[:-1])


@functools.cache
def _synthetic() -> bytes:
    rng = np.random.default_rng(25000)
    plain = 8100
    vocab = np.array(
        [f"w{i}" for i in range(plain)] + [f"{s}{i}" for s in ("good", "bad") for i in range(_SENTIMENT_WORDS)],
        dtype=object,
    )
    zipf = 1.0 / np.arange(1, plain + 1) ** 0.6
    zipf /= zipf.sum()
    members = {}
    for part in ("train", "test"):
        for side, label in enumerate(("pos", "neg")):
            for i, words in enumerate(_review_words(rng, _PER_SIDE, vocab, zipf, side)):
                stars = int(rng.integers(7, 11)) if label == "pos" else int(rng.integers(1, 5))
                text = words[0].capitalize() + " " + " ".join(words[1:]) + ".<br /><br />\n"
                members[f"aclImdb/{part}/{label}/{i}_{stars}.txt"] = text.encode()
    return tar_bytes(members)


def _open():
    what = "10,000 reviews of Zipf-drawn words with sentiment words, aclImdb's layout"
    return open_archive("imdb", _ARCHIVES, _synthetic, what)


def tokenize(pattern):
    """The words of each archive member whose name matches pattern, in archive order: trailing
    newlines and ASCII punctuation removed, lowered, split on whitespace."""
    with _open() as source, tarfile.open(fileobj=source, mode="r") as tarf:
        member = tarf.next()
        while member is not None:
            if pattern.match(member.name):
                text = tarf.extractfile(member).read().rstrip(b"\n\r").translate(None, _PUNCTUATION).lower()
                yield text.decode("utf-8", "replace").split()
            member = tarf.next()


def build_dict(pattern, cutoff: int) -> dict[str, int]:
    """Words seen more than cutoff times in the matching reviews, most frequent first (ties by
    spelling), then '<unk>' last."""
    word_freq = collections.Counter()
    for doc in tokenize(pattern):
        word_freq.update(doc)
    kept = sorted(((w, c) for w, c in word_freq.items() if c > cutoff), key=lambda x: (-x[1], x[0]))
    word_idx = {w: i for i, (w, _) in enumerate(kept)}
    word_idx["<unk>"] = len(kept)
    return word_idx


def reader_creator(pos_pattern, neg_pattern, word_idx):
    """Reads (as Paddle's) every review when called, then serves (ids, 0) for the positive ones and
    (ids, 1) for the negative ones."""
    unk = word_idx["<unk>"]
    samples = [
        ([word_idx.get(w, unk) for w in doc], label)
        for pattern, label in ((pos_pattern, 0), (neg_pattern, 1))
        for doc in tokenize(pattern)
    ]

    def reader():
        yield from samples

    return reader


def _part(part: str, word_idx):
    return reader_creator(
        re.compile(rf"aclImdb/{part}/pos/.*\.txt$"), re.compile(rf"aclImdb/{part}/neg/.*\.txt$"), word_idx
    )


def train(word_idx):
    return _part("train", word_idx)


def test(word_idx):
    return _part("test", word_idx)


def word_dict() -> dict[str, int]:
    """The dictionary of all 50,000 reviews at cutoff 150, as Paddle's."""
    return build_dict(re.compile(r"aclImdb/((train)|(test))/((pos)|(neg))/.*\.txt$"), 150)


def fetch() -> None:
    """Makes the data ready: nothing is downloaded; Paddle's archive is found, or the synthetic one is
    made (and said on stderr)."""
    _open().close()
