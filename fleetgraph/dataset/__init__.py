"""Small datasets as readers: uci_housing and mnist (real files when present, synthetic otherwise)."""

from . import mnist, uci_housing

__all__ = ["mnist", "uci_housing"]
