"""The CoNLL-2005 semantic role labelling test set (`paddle.dataset.conll05`): test() yields, for each
predicate of each sentence, Paddle's nine slots (word ids, the five context-word ids around the
predicate each repeated over the sentence, the predicate's id repeated, the 0/1 mark of the five-word
window, the label ids), read from Paddle's files under conll05st/ in its cache: conll05st-tests.tar.gz
(gzipped words and props columns), wordDict.txt, verbDict.txt, targetDict.txt and emb (a 16-byte
header, then 32 float32 per word), each by Paddle's download name (`conll05st%2FwordDict.txt`) or the
plain one. Paddle's label dictionary numbers the B-/I- tags in set order, which differs between
processes; here the tags are sorted.

Without the real files, synthetic ones of the same formats and sizes (44,068 words, 3,162 verbs, 29
tags so 59 labels, 2,416 sentences) are generated, said once on stderr, and parsed by the same code;
get_embedding() then returns a file written once per process in a temporary folder. Their roles
follow the predicate's position (an A0 span just before it, an A1 span after, sometimes AM-TMP at
the end), so a tagger can learn them."""

from __future__ import annotations

import functools
import gzip
import os
import struct
import tarfile
import tempfile

import numpy as np

from .common import find_any, open_archive, open_source, tar_bytes, warn_synthetic

__all__ = ["get_dict", "get_embedding", "test"]

UNK_IDX = 0
WORDS_NAME = "conll05st-release/test.wsj/words/test.wsj.words.gz"
PROPS_NAME = "conll05st-release/test.wsj/props/test.wsj.props.gz"
_FILES = {name: (f"conll05st%2F{name}", name) for name in ("wordDict.txt", "verbDict.txt", "targetDict.txt", "emb")}
_TAGS = (
    "A0 A1 A2 A3 A4 A5 AA AM AM-ADV AM-CAU AM-DIR AM-DIS AM-EXT AM-LOC AM-MNR AM-MOD AM-NEG AM-PNC AM-PRD AM-REC "
    "AM-TM AM-TMP C-A0 C-A1 R-A0 R-A1 R-A2 R-AM-LOC V"
).split()
_WORDS, _VERBS, _SENTENCES, _EMB_DIM = 44068, 3162, 2416, 32
_PLAIN = _WORDS - 3 - _VERBS  # the word dictionary: <unk>, bos, eos, plain words, the verbs' forms
_WHAT = "44,068 words, 3,162 verbs, 59 labels, 2,416 sentences with position-given roles, CoNLL-05's formats"


def _span(tag: str, length: int) -> list[str]:
    """A role's props column in CoNLL's bracket notation: (TAG* ... *) or (TAG*)."""
    return [f"({tag}*)"] if length == 1 else [f"({tag}*", *["*"] * (length - 2), "*)"]


def _synthetic_sentence(rng, zipf_cdf: np.ndarray) -> tuple[list[str], list[list[str]]]:
    """Words and props columns (lemma column first) of one sentence with one to three predicates."""
    n = int(rng.integers(8, 40))
    words = [f"w{i}" for i in np.searchsorted(zipf_cdf, rng.random(n) * zipf_cdf[-1])]
    verbs = sorted(rng.choice(n, size=int(rng.integers(1, 4)), replace=False))
    lemmas = ["-"] * n
    columns = []
    for v in verbs:
        lemma = int(rng.integers(0, _VERBS))
        words[v], lemmas[v] = f"verb{lemma}ed", f"verb{lemma}"
        column = ["*"] * n
        a0 = min(v, int(rng.integers(1, 4)))
        a1 = min(n - v - 1, int(rng.integers(1, 5)))
        column[v - a0 : v] = _span("A0", a0) if a0 else []
        column[v : v + 1] = ["(V*)"]
        column[v + 1 : v + 1 + a1] = _span("A1", a1) if a1 else []
        if n - v - 1 - a1 >= 2 and rng.random() < 0.3:
            column[n - 2 :] = _span("AM-TMP", 2)
        columns.append(column)
    return words, [lemmas, *columns]


@functools.cache
def _synthetic_archive() -> bytes:
    rng = np.random.default_rng(2005)
    zipf_cdf = np.cumsum(1.0 / np.arange(1, _PLAIN + 1))
    words_text, props_text = [], []
    for _ in range(_SENTENCES):
        words, columns = _synthetic_sentence(rng, zipf_cdf)
        words_text += [*words, ""]
        props_text += [*("\t".join(row) for row in zip(*columns)), ""]
    return tar_bytes(
        {
            WORDS_NAME: gzip.compress("".join(w + "\n" for w in words_text).encode(), mtime=0),
            PROPS_NAME: gzip.compress("".join(p + "\n" for p in props_text).encode(), mtime=0),
        }
    )


@functools.cache
def _synthetic_file(name: str) -> bytes:
    if name == "wordDict.txt":
        lines = ["<unk>", "bos", "eos", *(f"w{i}" for i in range(_PLAIN)), *(f"verb{i}ed" for i in range(_VERBS))]
    elif name == "verbDict.txt":
        lines = [f"verb{i}" for i in range(_VERBS)]
    elif name == "targetDict.txt":
        lines = [f"{bi}-{tag}" for tag in _TAGS for bi in "BI"] + ["O"]
    else:  # emb: Paddle's parameter header (version, value size, count), then the rows
        vectors = np.random.default_rng(32).normal(0.0, 0.1, size=(_WORDS, _EMB_DIM)).astype(np.float32)
        return struct.pack("<iIQ", 0, 4, vectors.size) + vectors.tobytes()
    return "".join(line + "\n" for line in lines).encode()


def _dict_lines(name: str) -> list[str]:
    path = find_any("conll05st", _FILES[name])
    if path:
        with open(path, "rb") as f:
            return f.read().decode().splitlines()
    warn_synthetic("conll05st", _WHAT)
    return _synthetic_file(name).decode().splitlines()


def _lines_of(source) -> list[str]:
    """A dictionary's lines: source is a path, as Paddle's, or the lines themselves."""
    if isinstance(source, (str, os.PathLike)):
        with open(source, encoding="utf-8") as f:
            return f.read().splitlines()
    return list(source)


def load_label_dict(source) -> dict[str, int]:
    """B-TAG, I-TAG for each tag of the B-/I- lines (sorted), then O."""
    tags = sorted({line.strip()[2:] for line in _lines_of(source) if line.strip()[:2] in ("B-", "I-")})
    label_dict = {f"{bi}-{tag}": 2 * i + j for i, tag in enumerate(tags) for j, bi in enumerate("BI")}
    label_dict["O"] = len(label_dict)
    return label_dict


def load_dict(source) -> dict[str, int]:
    return {line.strip(): i for i, line in enumerate(_lines_of(source))}


def _labels(column: list[str]) -> list[str]:
    """A props column in bracket notation as B-/I-/O labels, by Paddle's rules."""
    cur_tag, in_bracket, labels = "O", False, []
    for mark in column:
        if mark == "*":
            labels.append("I-" + cur_tag if in_bracket else "O")
        elif mark == "*)":
            labels.append("I-" + cur_tag)
            in_bracket = False
        elif "(" in mark:
            cur_tag = mark[1 : mark.find("*")]
            labels.append("B-" + cur_tag)
            in_bracket = ")" not in mark
        else:
            raise RuntimeError(f"Unexpected label: {mark}")
    return labels


def corpus_reader(data_path, words_name: str, props_name: str):
    """(sentence words, predicate lemma, labels) for each predicate of each sentence of the archive
    (data_path: its path, or a function opening it)."""

    def reader():
        with open_source(data_path) as f, tarfile.open(fileobj=f, mode="r") as tf:
            with (
                gzip.GzipFile(fileobj=tf.extractfile(words_name)) as words,
                gzip.GzipFile(fileobj=tf.extractfile(props_name)) as props,
            ):
                sentence, rows = [], []
                for word, row in zip(words, props):
                    row = row.decode().split()
                    if row:
                        sentence.append(word.decode().strip())
                        rows.append(row)
                        continue
                    columns = [list(column) for column in zip(*rows)]
                    if columns:
                        lemmas = [lemma for lemma in columns[0] if lemma != "-"]
                        for lemma, column in zip(lemmas, columns[1:]):
                            yield sentence, lemma, _labels(column)
                    sentence, rows = [], []

    return reader


def reader_creator(corpus_reader, word_dict=None, predicate_dict=None, label_dict=None):
    """The nine slots of each (sentence, predicate, labels): word ids; the ids of the words two and
    one before the predicate ('bos' past the start), the predicate, one and two after ('eos' past the
    end), each repeated over the sentence; the predicate's id repeated; the 0/1 mark of those five
    positions; the label ids."""

    def reader():
        for sentence, predicate, labels in corpus_reader():
            n = len(sentence)
            v = labels.index("B-V")
            mark = [0] * n
            for i in range(max(v - 2, 0), min(v + 3, n)):
                mark[i] = 1
            context = [sentence[i] if 0 <= i < n else ("bos" if i < 0 else "eos") for i in range(v - 2, v + 3)]
            yield (
                [word_dict.get(w, UNK_IDX) for w in sentence],
                *([word_dict.get(w, UNK_IDX)] * n for w in context),
                [predicate_dict.get(predicate)] * n,
                mark,
                [label_dict.get(label) for label in labels],
            )

    return reader


def get_dict() -> tuple[dict[str, int], dict[str, int], dict[str, int]]:
    """The word, verb and label dictionaries."""
    return (
        load_dict(_dict_lines("wordDict.txt")),
        load_dict(_dict_lines("verbDict.txt")),
        load_label_dict(_dict_lines("targetDict.txt")),
    )


def _archive():
    return open_archive("conll05st", ("conll05st-tests.tar.gz",), _synthetic_archive, _WHAT)


@functools.cache
def _synthetic_embedding_path() -> str:
    path = os.path.join(tempfile.mkdtemp(prefix="fleetgraph-conll05-"), "emb")
    with open(path, "wb") as f:
        f.write(_synthetic_file("emb"))
    return path


def get_embedding() -> str:
    """The path of the word vectors' file (16-byte header, then 44,068 x 32 float32)."""
    path = find_any("conll05st", _FILES["emb"])
    if path:
        return path
    warn_synthetic("conll05st", _WHAT)
    return _synthetic_embedding_path()


def test():
    """The test set's samples (Paddle trains on it: CoNLL-05's training set is not free)."""
    word_dict, verb_dict, label_dict = get_dict()
    return reader_creator(corpus_reader(_archive, WORDS_NAME, PROPS_NAME), word_dict, verb_dict, label_dict)


def fetch() -> None:
    """Makes the data ready: nothing is downloaded; Paddle's files are found, or the synthetic ones
    are made (and said on stderr)."""
    get_dict()
    get_embedding()
    _archive().close()
