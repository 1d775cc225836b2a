"""`fluid.dataset`: the Dataset classes under their 1.8 module path."""

__all__: list[str] = []
