"""`fluid.dygraph.jit`: Paddle 1.8's ways from dygraph code to a static program, over paddle.jit's
tracer and translator.

- `declarative`: paddle.jit.to_static (a function or a Layer's forward run as its traced program).
- `dygraph_to_static_func`: a function whose control flow is converted when it is called while
  building a program, run as it is in imperative mode.
- `TracedLayer`: paddle.jit's (jit/traced_layer.py), the same class.
"""

from __future__ import annotations

import functools

from ...dygraph import mode
from ...jit.api import declarative
from ...jit.dy2static import ProgramTranslator
from ...jit.traced_layer import TracedLayer

__all__ = ["TracedLayer", "declarative", "dygraph_to_static_func"]


def dygraph_to_static_func(dygraph_func):
    """`dygraph_func` that builds a program (control flow converted) when called outside imperative
    mode, and runs as written in it or while ProgramTranslator is disabled."""

    @functools.wraps(dygraph_func)
    def call(*args, **kwargs):
        if mode.in_dygraph_mode():
            return dygraph_func(*args, **kwargs)
        return ProgramTranslator().get_func(dygraph_func)(*args, **kwargs)

    return call
