"""Layer functions over the ops of ops/rearrange.py."""

__all__: list[str] = []
