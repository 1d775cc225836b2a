"""Layer functions over the ops of ops/indexing.py."""

__all__: list[str] = []
