"""The PTB language-model corpus (`paddle.dataset.imikolov`): a dictionary by falling frequency and
n-gram or sequence readers, parsed from Paddle's `simple-examples.tgz`. Without the real archive, a
synthetic one in the same format is generated (said once on stderr) and parsed by the same code: a
Zipf vocabulary where each word is followed by a fixed successor 70% of the time, so a model can learn
about 0.7 next-word accuracy."""

from __future__ import annotations

import collections
import functools
import tarfile

import numpy as np

from .common import open_archive, tar_bytes

__all__ = ["DataType", "build_dict", "test", "train"]

TRAIN_FILE = "./simple-examples/data/ptb.train.txt"
TEST_FILE = "./simple-examples/data/ptb.valid.txt"
_ARCHIVES = ("imikolov%2Fsimple-examples.tgz", "simple-examples.tgz")  # Paddle's cache name, then the plain one


class DataType:
    NGRAM = 1
    SEQ = 2


def _synthetic_text(sentences: int, seed: int, vocab: int = 40000) -> bytes:
    """PTB-sized text (PTB's train has 42,068 sentences, about 887,000 words): Zipf-drawn words, each
    followed by its fixed successor 70% of the time; the dictionary at min_word_freq=50 then has about
    PTB's 2,000 words."""
    rng = np.random.default_rng(seed)
    zipf = 1.0 / np.arange(1, vocab + 1)
    successor = np.random.default_rng(7).permutation(vocab)  # the same language in train and test
    lengths = rng.integers(5, 38, size=sentences)
    words = np.empty((sentences, lengths.max()), dtype=np.int64)
    fresh = rng.choice(vocab, size=words.shape, p=zipf / zipf.sum())
    follow = rng.random(words.shape) < 0.7
    words[:, 0] = fresh[:, 0]
    for i in range(1, words.shape[1]):
        words[:, i] = np.where(follow[:, i], successor[words[:, i - 1]], fresh[:, i])
    return "".join(" " + " ".join(f"w{w}" for w in row[:n]) + " \n" for row, n in zip(words, lengths)).encode()


@functools.cache
def _synthetic_archive() -> bytes:
    return tar_bytes({TRAIN_FILE: _synthetic_text(42068, 0), TEST_FILE: _synthetic_text(3370, 1)})


def _lines(filename: str):
    what = "a Zipf language in PTB's format and size, 42,068 training and 3,370 valid sentences"
    with open_archive("imikolov", _ARCHIVES, _synthetic_archive, what) as f, tarfile.open(fileobj=f) as tf:
        for line in tf.extractfile(filename):
            yield line.decode()


def word_count(lines, word_freq=None):
    word_freq = collections.defaultdict(int) if word_freq is None else word_freq
    for line in lines:
        for w in line.strip().split():
            word_freq[w] += 1
        word_freq["<s>"] += 1
        word_freq["<e>"] += 1
    return word_freq


def build_dict(min_word_freq: int = 50) -> dict[str, int]:
    """Words of the training and validation text seen more than min_word_freq times, most frequent
    first (ties by spelling), then '<unk>' last, as Paddle's."""
    freq = word_count(_lines(TEST_FILE), word_count(_lines(TRAIN_FILE)))
    freq.pop("<unk>", None)
    kept = sorted(((w, c) for w, c in freq.items() if c > min_word_freq), key=lambda x: (-x[1], x[0]))
    word_idx = {w: i for i, (w, _) in enumerate(kept)}
    word_idx["<unk>"] = len(kept)
    return word_idx


def reader_creator(filename: str, word_idx: dict, n: int, data_type: int):
    def reader():
        unk = word_idx["<unk>"]
        for line in _lines(filename):
            if data_type == DataType.NGRAM:
                if n <= -1:
                    raise ValueError(f"imikolov: n; expected a gram length >= 0, got {n}")
                words = ["<s>", *line.strip().split(), "<e>"]
                if len(words) >= n:
                    ids = [word_idx.get(w, unk) for w in words]
                    for i in range(n, len(ids) + 1):
                        yield tuple(ids[i - n : i])
            elif data_type == DataType.SEQ:
                ids = [word_idx.get(w, unk) for w in line.strip().split()]
                src, trg = [word_idx["<s>"], *ids], [*ids, word_idx["<e>"]]
                if n > 0 and len(src) > n:
                    continue
                yield src, trg
            else:
                raise ValueError(f"imikolov: data_type; expected DataType.NGRAM or DataType.SEQ, got {data_type!r}")

    return reader


def train(word_idx, n, data_type=DataType.NGRAM):
    """n-grams (tuples of n ids) of the training text, or with DataType.SEQ (src, trg) id sequences
    of at most n ids (n <= 0: any length)."""
    return reader_creator(TRAIN_FILE, word_idx, n, data_type)


def test(word_idx, n, data_type=DataType.NGRAM):
    return reader_creator(TEST_FILE, word_idx, n, data_type)
