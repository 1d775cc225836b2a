"""Layer functions over the ops of ops/resize.py."""

__all__: list[str] = []
