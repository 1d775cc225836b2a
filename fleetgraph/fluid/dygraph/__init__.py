"""`fluid.dygraph`: the 1.x imperative mode on the eager engine."""

from . import (
    backward_strategy,
    base,
    checkpoint,
    container,
    dygraph_to_static,  # noqa: F401  (Paddle's module path)
    jit,
    layers,
    learning_rate_scheduler,
    nn,
    parallel,
    static_runner,  # noqa: F401  (Paddle's module path)
    tracer,  # noqa: F401  (Paddle's module path)
)
from .backward_strategy import *  # noqa: F403
from .base import *  # noqa: F403
from .checkpoint import *  # noqa: F403
from .container import *  # noqa: F403
from .dygraph_to_static import ProgramTranslator
from .jit import *  # noqa: F403
from .layers import *  # noqa: F403
from .learning_rate_scheduler import *  # noqa: F403
from .nn import *  # noqa: F403
from .parallel import *  # noqa: F403
from .static_runner import StaticModelRunner

__all__: list[str] = [
    *layers.__all__,
    *base.__all__,
    *container.__all__,
    *nn.__all__,
    *parallel.__all__,
    *checkpoint.__all__,
    *learning_rate_scheduler.__all__,
    *backward_strategy.__all__,
    *jit.__all__,
    "ProgramTranslator",
    "StaticModelRunner",
]
