"""The WMT16 Multi30K English-German corpus (`paddle.dataset.wmt16`): samples (<s> source ids <e>,
<s> target ids, target ids <e>) read from Paddle's `wmt16.tar.gz` (members wmt16/train, wmt16/test,
wmt16/val: tab-separated English and German). A dictionary is <s>, <e>, <unk> (ids 0, 1, 2), then
the training text's words of that language by falling count (ties in order of first appearance), at
most dict_size entries in all (sizes past 11,250 English or 19,220 German words are cut to those).

Paddle's dictionary files (<lang>_<size>.dict under wmt16/ in its cache) are read when present;
otherwise the dictionary is built from the archive in memory and, unlike Paddle's, not written into
the cache. Without the real archive, a synthetic one of the same layout (29,000 training, 1,014
validation and 1,000 test pairs; 11,247 English and 19,217 German words, so the full dictionaries
have Paddle's sizes) is generated, said once on stderr, and parsed by the same code: each German
word translates its English word by one of two fixed maps, the choice set by the word before."""

from __future__ import annotations

import collections
import functools
import tarfile

from .common import find, find_any, open_archive, open_source, tar_bytes, translation_pairs

__all__ = ["fetch", "get_dict", "test", "train", "validation"]

_ARCHIVES = ("wmt16.tar.gz",)
TOTAL_EN_WORDS = 11250
TOTAL_DE_WORDS = 19220
START_MARK, END_MARK, UNK_MARK = "<s>", "<e>", "<unk>"
_TOTAL = {"en": TOTAL_EN_WORDS, "de": TOTAL_DE_WORDS}


@functools.cache
def _synthetic() -> bytes:
    en, de = TOTAL_EN_WORDS - 3, TOTAL_DE_WORDS - 3
    members = {}
    for seed, (part, count) in enumerate((("train", 29000), ("val", 1014), ("test", 1000))):
        lines = (
            " ".join(f"en{i}" for i in src) + "\t" + " ".join(f"de{i}" for i in trg)
            for src, trg in translation_pairs(seed, count, en, de)
        )
        members[f"wmt16/{part}"] = "".join(line + "\n" for line in lines).encode()
    return tar_bytes(members)


def _open():
    return open_archive("wmt16", _ARCHIVES, _synthetic, "11,247 English and 19,217 German words, 31,014 pairs")


def _archive():
    """The real archive's path, or the function that opens the synthetic one (and says so)."""
    return find_any("wmt16", _ARCHIVES) or _open


def _lines(tar_file, file_name: str):
    """The archive member's lines that hold exactly two tab-separated fields, as (en, de)."""
    with open_source(tar_file) as f, tarfile.open(fileobj=f, mode="r") as tf:
        for line in tf.extractfile(file_name):
            fields = line.decode().strip().split("\t")
            if len(fields) == 2:
                yield fields


@functools.cache
def _built_dict(tar_file, lang: str, dict_size: int) -> tuple[str, ...]:
    """The words of the dictionary built from the archive's training text (tar_file, a path or the
    synthetic archive's opener, keys the cache)."""
    counts = collections.Counter()
    for fields in _lines(tar_file, "wmt16/train"):
        counts.update(fields[0 if lang == "en" else 1].split())
    ranked = sorted(counts.items(), key=lambda x: x[1], reverse=True)
    return (START_MARK, END_MARK, UNK_MARK, *(w for w, _ in ranked[: dict_size - 3]))


def _load_dict(tar_file, dict_size: int, lang: str, reverse: bool = False) -> dict:
    path = find("wmt16", f"{lang}_{dict_size}.dict")
    words = None
    if path:
        with open(path, "rb") as f:
            words = [line.decode().strip() for line in f]
    if words is None or len(words) != dict_size:  # Paddle rebuilds a file of another size
        words = _built_dict(tar_file, lang, dict_size)
    return {i: w for i, w in enumerate(words)} if reverse else {w: i for i, w in enumerate(words)}


def _check_lang(src_lang: str) -> None:
    if src_lang not in ("en", "de"):
        raise ValueError(f"wmt16: src_lang; expected 'en' (English) or 'de' (German), got {src_lang!r}")


def reader_creator(tar_file, file_name: str, src_dict_size: int, trg_dict_size: int, src_lang: str):
    """Samples of the archive's member file_name (tar_file: its path, or a function opening it)."""
    _check_lang(src_lang)
    trg_lang = "de" if src_lang == "en" else "en"
    src_dict_size, trg_dict_size = min(src_dict_size, _TOTAL[src_lang]), min(trg_dict_size, _TOTAL[trg_lang])

    def reader():
        src_dict = _load_dict(tar_file, src_dict_size, src_lang)
        trg_dict = _load_dict(tar_file, trg_dict_size, trg_lang)
        # the marks' ids are the same in both dictionaries; Paddle takes them from the source one
        start, end, unk = src_dict[START_MARK], src_dict[END_MARK], src_dict[UNK_MARK]
        src_col = 0 if src_lang == "en" else 1
        for fields in _lines(tar_file, file_name):
            src_ids = [start, *(src_dict.get(w, unk) for w in fields[src_col].split()), end]
            trg_ids = [trg_dict.get(w, unk) for w in fields[1 - src_col].split()]
            yield src_ids, [start, *trg_ids], [*trg_ids, end]

    return reader


def train(src_dict_size: int, trg_dict_size: int, src_lang: str = "en"):
    """The 29,000 training pairs; src_lang 'en' translates English to German, 'de' the reverse."""
    return reader_creator(_archive(), "wmt16/train", src_dict_size, trg_dict_size, src_lang)


def test(src_dict_size: int, trg_dict_size: int, src_lang: str = "en"):
    return reader_creator(_archive(), "wmt16/test", src_dict_size, trg_dict_size, src_lang)


def validation(src_dict_size: int, trg_dict_size: int, src_lang: str = "en"):
    return reader_creator(_archive(), "wmt16/val", src_dict_size, trg_dict_size, src_lang)


def get_dict(lang: str, dict_size: int, reverse: bool = False) -> dict:
    """The dictionary of lang ('en' or 'de'): word -> id, or id -> word when reverse."""
    _check_lang(lang)
    return _load_dict(_archive(), min(dict_size, _TOTAL[lang]), lang, reverse)


def fetch() -> None:
    """Makes the data ready: nothing is downloaded, the archive is found where Paddle keeps it, or
    the synthetic one is made (and said on stderr)."""
    _open().close()
