"""Layer functions over the ops of ops/normalization.py."""

__all__: list[str] = []
