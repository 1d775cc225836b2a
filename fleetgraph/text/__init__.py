"""`paddle.text`: the text datasets as paddle.io Datasets (Paddle 2.0's python/paddle/text)."""

from . import datasets
from .datasets import WMT14, WMT16, Conll05st, Imdb, Imikolov, Movielens, UCIHousing

__all__ = ["Conll05st", "Imdb", "Imikolov", "Movielens", "UCIHousing", "WMT14", "WMT16", "datasets"]
