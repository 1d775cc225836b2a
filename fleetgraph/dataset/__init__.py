"""Datasets as readers, Paddle 1.8's `paddle.dataset` (real files when present, synthetic otherwise)."""

from . import cifar, conll05, flowers, image, imdb, imikolov, mnist, movielens, sentiment, uci_housing, wmt14, wmt16

__all__ = [
    "cifar",
    "conll05",
    "flowers",
    "image",
    "imdb",
    "imikolov",
    "mnist",
    "movielens",
    "sentiment",
    "uci_housing",
    "wmt14",
    "wmt16",
]
