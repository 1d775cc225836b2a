"""`paddle.text.datasets`: Paddle 2.0's text datasets (python/paddle/text/datasets/*.py) as
paddle.io map-style Datasets, read at construction by the Paddle 1.x readers of fleetgraph.dataset.

Where the files come from: `data_file` (and Conll05st's dictionary files) when given, for the
datasets whose 1.x parser reads a given archive; otherwise, with download=True, what the 1.x module
finds: Paddle's cache (~/.cache/paddle/dataset/<name>/) or $FLEETGRAPH_DATA_HOME, else a synthetic
stand-in of the same format, said once on stderr. fleetgraph never downloads.
"""

from __future__ import annotations

import re

import numpy as np

from ..dataset import conll05, imdb, imikolov, movielens, uci_housing, wmt14, wmt16
from ..io import Dataset
from ..ir import FleetgraphError, get_default_dtype

__all__ = ["Conll05st", "Imdb", "Imikolov", "Movielens", "UCIHousing", "WMT14", "WMT16"]


def _mode(where: str, mode: str, allowed: tuple[str, ...]) -> str:
    if mode.lower() not in allowed:
        raise FleetgraphError(f"{where}: mode {mode!r}; expected one of {', '.join(map(repr, allowed))}")
    return mode.lower()


def _given(where: str, path, download: bool, name: str = "data_file"):
    """The file the caller gave, or None for the 1.x module's own (cache or synthetic stand-in)."""
    if path is None and not download:
        raise FleetgraphError(
            f"{where}: {name} is not set and download=False; expected a {name} (fleetgraph never downloads: "
            "with download=True it reads Paddle's cache or a synthetic stand-in, said on stderr)"
        )
    return path


def _cache_only(where: str, module: str, data_file) -> None:
    """Refuses a data_file that the 1.x parser cannot be handed (it reads only the cache's file)."""
    if data_file is not None:
        raise NotImplementedError(
            f"{where}: data_file; fleetgraph.dataset.{module} reads its file only where Paddle caches it "
            f"(~/.cache/paddle/dataset/ or $FLEETGRAPH_DATA_HOME); put it there and leave data_file None"
        )


def _positive(where: str, **sizes: int) -> None:
    for name, size in sizes.items():
        if size <= 0:
            raise FleetgraphError(f"{where}: {name}={size}; expected a positive dictionary size")


class _Samples(Dataset):
    """Samples read once, each served as a tuple of NumPy arrays, one per field."""

    _samples: list

    def __getitem__(self, idx):
        return tuple(np.array(field) for field in self._samples[idx])

    def __len__(self) -> int:
        return len(self._samples)


class UCIHousing(_Samples):
    """Boston housing: (13 normalized features, [price]) in the default dtype; 'train' is the first
    80% of the rows, 'test' the rest."""

    def __init__(self, data_file=None, mode="train", download=True):
        self.mode = _mode("UCIHousing", mode, ("train", "test"))
        _cache_only("UCIHousing", "uci_housing", _given("UCIHousing", data_file, download))
        self.data_file, self.dtype = data_file, get_default_dtype()
        reader = uci_housing.train() if self.mode == "train" else uci_housing.test()
        self._samples = list(reader())

    def __getitem__(self, idx):
        features, price = self._samples[idx]
        return np.array(features).astype(self.dtype), np.array(price).astype(self.dtype)


class Imdb(_Samples):
    """IMDB reviews: (word ids, [label]), label 0 for the positive reviews (served first), 1 for the
    negative; `word_idx` holds the words of all 50,000 reviews seen more than cutoff times."""

    def __init__(self, data_file=None, mode="train", cutoff=150, download=True):
        self.mode = _mode("Imdb", mode, ("train", "test"))
        _cache_only("Imdb", "imdb", _given("Imdb", data_file, download))
        self.data_file = data_file
        self.word_idx = imdb.build_dict(re.compile(r"aclImdb/((train)|(test))/((pos)|(neg))/.*\.txt$"), cutoff)
        reader = imdb.train(self.word_idx) if self.mode == "train" else imdb.test(self.word_idx)
        self._samples = [(doc, [label]) for doc, label in reader()]


class Imikolov(_Samples):
    """PTB language-model samples: data_type 'NGRAM', the window_size-grams of each sentence
    (with <s> and <e>), one 0-d array per id; 'SEQ', ([<s>] + ids, ids + [<e>]) of sentences of at
    most window_size ids (window_size <= 0: any). 'test' reads ptb.test.txt, as Paddle 2.0."""

    _FILES = {"train": imikolov.TRAIN_FILE, "test": "./simple-examples/data/ptb.test.txt"}

    def __init__(
        self, data_file=None, data_type="NGRAM", window_size=-1, mode="train", min_word_freq=50, download=True
    ):
        if data_type.upper() not in ("NGRAM", "SEQ"):
            raise FleetgraphError(f"Imikolov: data_type {data_type!r}; expected 'NGRAM' or 'SEQ'")
        self.data_type, self.window_size = data_type.upper(), window_size
        self.mode = _mode("Imikolov", mode, ("train", "test"))
        _cache_only("Imikolov", "imikolov", _given("Imikolov", data_file, download))
        self.data_file, self.min_word_freq = data_file, min_word_freq
        self.word_idx = imikolov.build_dict(min_word_freq)
        kind = imikolov.DataType.NGRAM if self.data_type == "NGRAM" else imikolov.DataType.SEQ
        try:
            self._samples = list(imikolov.reader_creator(self._FILES[self.mode], self.word_idx, window_size, kind)())
        except KeyError as e:  # the synthetic stand-in has PTB's train and valid texts only
            raise FleetgraphError(
                f"Imikolov(mode={mode!r}): the archive has no {self._FILES[self.mode]}; expected PTB's "
                "simple-examples.tgz (the synthetic stand-in holds ptb.train.txt and ptb.valid.txt only)"
            ) from e


class Movielens(_Samples):
    """MovieLens 1M ratings: ([user id], [gender], [age group], [job], [movie id], [genre ids],
    [title word ids], [rating * 2 - 5]); a rating is in 'test' when its uniform draw (seeded by
    rand_seed, one per line) is below test_ratio."""

    def __init__(self, data_file=None, mode="train", test_ratio=0.1, rand_seed=0, download=True):
        self.mode = _mode("Movielens", mode, ("train", "test"))
        _cache_only("Movielens", "movielens", _given("Movielens", data_file, download))
        self.data_file, self.test_ratio, self.rand_seed = data_file, test_ratio, rand_seed
        part = movielens.train if self.mode == "train" else movielens.test
        self._samples = list(part(rand_seed, test_ratio)())

    def __getitem__(self, idx):
        return tuple(np.atleast_1d(np.array(field)) for field in self._samples[idx])


class Conll05st(_Samples):
    """CoNLL-05's test set for semantic role labelling: per predicate of each sentence, the nine id
    sequences of Paddle's reader (words, the five context words, the predicate, the mark, labels)."""

    def __init__(
        self,
        data_file=None,
        word_dict_file=None,
        verb_dict_file=None,
        target_dict_file=None,
        emb_file=None,
        download=True,
    ):
        files = {
            "data_file": data_file,
            "word_dict_file": word_dict_file,
            "verb_dict_file": verb_dict_file,
            "target_dict_file": target_dict_file,
            "emb_file": emb_file,
        }
        for name, path in files.items():
            _given("Conll05st", path, download, name)
        self.data_file, self.word_dict_file, self.verb_dict_file = data_file, word_dict_file, verb_dict_file
        self.target_dict_file = target_dict_file
        found = conll05.get_dict() if None in (word_dict_file, verb_dict_file, target_dict_file) else (None,) * 3
        self.word_dict = conll05.load_dict(word_dict_file) if word_dict_file else found[0]
        self.predicate_dict = conll05.load_dict(verb_dict_file) if verb_dict_file else found[1]
        self.label_dict = conll05.load_label_dict(target_dict_file) if target_dict_file else found[2]
        self.emb_file = emb_file or conll05.get_embedding()
        corpus = conll05.corpus_reader(data_file or conll05._archive, conll05.WORDS_NAME, conll05.PROPS_NAME)
        reader = conll05.reader_creator(corpus, self.word_dict, self.predicate_dict, self.label_dict)
        self._samples = list(reader())

    def get_dict(self):
        return self.word_dict, self.predicate_dict, self.label_dict

    def get_embedding(self):
        return self.emb_file


class WMT14(_Samples):
    """WMT'14 French-English pairs: (source ids with <s> and <e>, [<s>] + target ids, target ids +
    [<e>]), from dictionaries of their first dict_size words; pairs of over 80 ids left out."""

    def __init__(self, data_file=None, mode="train", dict_size=-1, download=True):
        self.mode = _mode("WMT14", mode, ("train", "test", "gen"))
        _positive("WMT14", dict_size=dict_size)
        self.data_file, self.dict_size = _given("WMT14", data_file, download), dict_size
        if data_file is None:
            reader = {"train": wmt14.train, "test": wmt14.test, "gen": wmt14.gen}[self.mode](dict_size)
            self.src_dict, self.trg_dict = wmt14.get_dict(dict_size, reverse=False)
        else:
            reader = wmt14.reader_creator(data_file, f"{self.mode}/{self.mode}", dict_size)
            self.src_dict, self.trg_dict = wmt14._read_dicts(data_file, dict_size)
        self._samples = list(reader())

    def get_dict(self, reverse=False):
        """(source, target) dictionaries: word -> id, or id -> word when reverse."""
        if reverse:
            return {v: k for k, v in self.src_dict.items()}, {v: k for k, v in self.trg_dict.items()}
        return self.src_dict, self.trg_dict


class WMT16(_Samples):
    """WMT'16 Multi30k English-German pairs (lang: the source language, 'en' or 'de'): (source ids
    with <s> and <e>, [<s>] + target ids, target ids + [<e>]), dictionaries built from the training
    text (at most 11,250 English and 19,220 German words)."""

    def __init__(self, data_file=None, mode="train", src_dict_size=-1, trg_dict_size=-1, lang="en", download=True):
        self.mode = _mode("WMT16", mode, ("train", "test", "val"))
        _positive("WMT16", src_dict_size=src_dict_size, trg_dict_size=trg_dict_size)
        self.data_file, self.lang = _given("WMT16", data_file, download), lang
        trg_lang = "de" if lang == "en" else "en"
        self.src_dict_size = min(src_dict_size, wmt16._TOTAL.get(lang, src_dict_size))
        self.trg_dict_size = min(trg_dict_size, wmt16._TOTAL.get(trg_lang, trg_dict_size))
        if data_file is None:
            part = {"train": wmt16.train, "test": wmt16.test, "val": wmt16.validation}[self.mode]
            reader = part(src_dict_size, trg_dict_size, lang)
        else:
            reader = wmt16.reader_creator(data_file, f"wmt16/{self.mode}", src_dict_size, trg_dict_size, lang)
        self.src_dict, self.trg_dict = self.get_dict(lang), self.get_dict(trg_lang)
        self._samples = list(reader())

    def get_dict(self, lang, reverse=False):
        """The dictionary of lang ('en' or 'de'): word -> id, or id -> word when reverse."""
        size = self.src_dict_size if lang == self.lang else self.trg_dict_size
        if self.data_file is None:
            return wmt16.get_dict(lang, size, reverse)
        return wmt16._load_dict(self.data_file, size, lang, reverse)
