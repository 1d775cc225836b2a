"""The shrunk WMT14 French-English corpus (`paddle.dataset.wmt14`): samples (source ids with <s> and
<e>, <s> then target ids, target ids then <e>) read from Paddle's `wmt14.tgz` with its src.dict and
trg.dict (their first dict_size lines are the dictionaries; <s>, <e>, <unk> are ids 0, 1, 2). Without
the real archive, a synthetic one of the same layout (30,000-word dictionaries; 20,000 training,
1,000 test and 1,000 gen pairs) is generated, said once on stderr, and parsed by the same code: each
target word translates its source word by one of two fixed maps, the choice set by the word before."""

from __future__ import annotations

import functools
import tarfile

from .common import open_archive, open_source, tar_bytes, translation_pairs

__all__ = ["get_dict", "test", "train"]

_ARCHIVES = ("wmt14.tgz",)
START, END, UNK = "<s>", "<e>", "<unk>"
UNK_IDX = 2
_WORDS = 30000


@functools.cache
def _synthetic() -> bytes:
    src_words = [START, END, UNK] + [f"fr{i}" for i in range(_WORDS - 3)]
    trg_words = [START, END, UNK] + [f"en{i}" for i in range(_WORDS - 3)]
    members = {"wmt14/src.dict": src_words, "wmt14/trg.dict": trg_words}
    members = {name: "".join(w + "\n" for w in words).encode() for name, words in members.items()}
    for seed, (part, count) in enumerate((("train", 20000), ("test", 1000), ("gen", 1000))):
        pairs = translation_pairs(seed, count, _WORDS - 3, _WORDS - 3)
        lines = (
            " ".join(src_words[3 + i] for i in src) + "\t" + " ".join(trg_words[3 + i] for i in trg)
            for src, trg in pairs
        )
        members[f"wmt14/{part}/{part}"] = "".join(line + "\n" for line in lines).encode()
    return tar_bytes(members)


def _open():
    return open_archive("wmt14", _ARCHIVES, _synthetic, "30,000-word dictionaries and 22,000 word-for-word pairs")


def _read_dicts(tar_file, dict_size: int) -> tuple[dict[str, int], dict[str, int]]:
    """The first dict_size lines of the archive's one *src.dict and one *trg.dict."""

    def read(tf, suffix):
        names = [m.name for m in tf if m.name.endswith(suffix)]
        if len(names) != 1:
            raise ValueError(f"wmt14: archive; expected one member ending in {suffix!r}, got {names}")
        words = {}
        for i, line in enumerate(tf.extractfile(names[0])):
            if i >= dict_size:
                break
            words[line.decode().strip()] = i
        return words

    with open_source(tar_file) as f, tarfile.open(fileobj=f, mode="r") as tf:
        return read(tf, "src.dict"), read(tf, "trg.dict")


def reader_creator(tar_file, file_name: str, dict_size: int):
    """Pairs of the archive's members ending in file_name (tar_file: its path, or a function opening
    it); pairs of over 80 ids (with the marks) are skipped."""

    def reader():
        src_dict, trg_dict = _read_dicts(tar_file, dict_size)
        with open_source(tar_file) as f, tarfile.open(fileobj=f, mode="r") as tf:
            for name in [m.name for m in tf if m.name.endswith(file_name)]:
                for line in tf.extractfile(name):
                    fields = line.decode().strip().split("\t")
                    if len(fields) != 2:
                        continue
                    src_ids = [src_dict.get(w, UNK_IDX) for w in [START, *fields[0].split(), END]]
                    trg_ids = [trg_dict.get(w, UNK_IDX) for w in fields[1].split()]
                    if len(src_ids) > 80 or len(trg_ids) > 80:
                        continue
                    yield src_ids, [trg_dict[START], *trg_ids], [*trg_ids, trg_dict[END]]

    return reader


def train(dict_size: int):
    return reader_creator(_open, "train/train", dict_size)


def test(dict_size: int):
    return reader_creator(_open, "test/test", dict_size)


def gen(dict_size: int):
    return reader_creator(_open, "gen/gen", dict_size)


def get_dict(dict_size: int, reverse: bool = True) -> tuple[dict, dict]:
    """(source, target) dictionaries, id -> word when reverse (the default), else word -> id."""
    src_dict, trg_dict = _read_dicts(_open, dict_size)
    if reverse:
        return {v: k for k, v in src_dict.items()}, {v: k for k, v in trg_dict.items()}
    return src_dict, trg_dict


def fetch() -> None:
    """Makes the data ready: nothing is downloaded; Paddle's archive is found, or the synthetic one is
    made (and said on stderr)."""
    _open().close()
