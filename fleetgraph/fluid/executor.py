"""`fluid.executor`: the Executor module path of Fluid 1.8."""

__all__: list[str] = []
