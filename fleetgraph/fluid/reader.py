"""`fluid.reader`: PyReader and the DataLoader under their 1.8 module path."""

__all__: list[str] = []
