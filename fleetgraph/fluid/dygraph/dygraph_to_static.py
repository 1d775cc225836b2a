"""`fluid.dygraph.dygraph_to_static`: the dygraph-to-static translator, `paddle.jit`'s (one
ProgramTranslator for the process, as Paddle's)."""

from ...jit.dy2static import ProgramTranslator

__all__ = ["ProgramTranslator"]
