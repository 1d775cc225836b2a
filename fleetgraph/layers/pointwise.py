"""Layer functions over the ops of ops/pointwise.py."""

__all__: list[str] = []
