"""Layer functions over the ops of ops/projection.py."""

__all__: list[str] = []
