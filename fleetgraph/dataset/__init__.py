"""Datasets as readers: uci_housing, mnist and flowers (real files when present, synthetic otherwise)."""

from . import flowers, mnist, uci_housing

__all__ = ["flowers", "mnist", "uci_housing"]
