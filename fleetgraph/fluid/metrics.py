"""`fluid.metrics`: Python-side metrics that accumulate over mini-batches."""

__all__: list[str] = []
