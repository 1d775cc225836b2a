"""Layer functions over the ops of ops/losses.py."""

__all__: list[str] = []
