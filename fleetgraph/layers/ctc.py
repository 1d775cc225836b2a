"""Layer functions over the ops of ops/ctc.py."""

__all__: list[str] = []
