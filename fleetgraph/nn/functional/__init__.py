"""`paddle.nn.functional`: activations, losses, dropout and embedding over static-graph variables."""

from __future__ import annotations

from ...dygraph.dispatch import bind
from ...layers import math as _math

__all__: list[str] = []


def linear(x, weight, bias=None, name=None):
    """x @ weight + bias (weight is [in_features, out_features]), as Paddle's."""
    out = _math.matmul(x, weight)
    if bias is None:
        return out
    return bind("elementwise_add", {"X": [out], "Y": [bias]}, {"axis": -1})


def flatten(x, start_axis=1, stop_axis=-1, name=None):
    from ...tensor_api import flatten as _flatten

    return _flatten(x, start_axis, stop_axis, name)


__all__ += ["flatten", "linear"]

# Paddle's submodules, each listing its own names
from . import activation, common, conv, extension, input, loss, norm, pooling, vision  # noqa: E402
from .activation import *  # noqa: E402,F401,F403
from .common import *  # noqa: E402,F401,F403
from .conv import *  # noqa: E402,F401,F403
from .extension import *  # noqa: E402,F401,F403
from .input import *  # noqa: E402,F401,F403
from .loss import *  # noqa: E402,F401,F403
from .norm import *  # noqa: E402,F401,F403
from .pooling import *  # noqa: E402,F401,F403
from .vision import *  # noqa: E402,F401,F403

__all__ += [
    name
    for family in (activation, common, conv, extension, input, loss, norm, pooling, vision)
    for name in family.__all__
]
