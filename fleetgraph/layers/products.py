"""Layer functions over the ops of ops/products.py."""

__all__: list[str] = []
