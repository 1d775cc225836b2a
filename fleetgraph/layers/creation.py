"""Layer functions over the ops of ops/creation.py."""

__all__: list[str] = []
