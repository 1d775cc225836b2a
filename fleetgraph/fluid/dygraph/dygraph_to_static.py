"""`fluid.dygraph.dygraph_to_static`: Paddle 1.8's dygraph-to-static translator (one
ProgramTranslator for the process, as Paddle's), which builds, runs and saves programs over
`paddle.jit`'s switch and conversion."""

from ...jit.program_translator import ProgramTranslator

__all__ = ["ProgramTranslator"]
