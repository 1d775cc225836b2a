"""`fluid.dygraph`: the 1.x imperative mode on the eager engine."""

__all__: list[str] = []
