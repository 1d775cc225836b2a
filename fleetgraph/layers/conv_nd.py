"""Layer functions over the ops of ops/conv_nd.py."""

__all__: list[str] = []
