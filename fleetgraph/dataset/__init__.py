"""Datasets as readers: uci_housing, mnist, flowers, imikolov and movielens (real files when present,
synthetic otherwise)."""

from . import flowers, imikolov, mnist, movielens, uci_housing

__all__ = ["flowers", "imikolov", "mnist", "movielens", "uci_housing"]
