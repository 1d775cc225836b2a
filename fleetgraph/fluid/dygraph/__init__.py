"""`fluid.dygraph`: the 1.x imperative mode on the eager engine."""

from . import backward_strategy, base, checkpoint, container, layers, learning_rate_scheduler, nn
from .backward_strategy import *  # noqa: F403
from .base import *  # noqa: F403
from .checkpoint import *  # noqa: F403
from .container import *  # noqa: F403
from .layers import *  # noqa: F403
from .learning_rate_scheduler import *  # noqa: F403
from .nn import *  # noqa: F403

__all__: list[str] = [
    *layers.__all__,
    *base.__all__,
    *container.__all__,
    *nn.__all__,
    *checkpoint.__all__,
    *learning_rate_scheduler.__all__,
    *backward_strategy.__all__,
]
