"""`fluid.dygraph.layers`: Paddle 1.8's Layer, paddle.nn.Layer (parameters, sublayers, hooks, state
dicts) under Fluid 1.x's mode rule: its parameters are eager Tensors and its forward runs eagerly in
imperative mode (inside `fluid.dygraph.guard()`, after `enable_dygraph()` or
`paddle.disable_static()`, or when made or called inside an eager Layer's forward); otherwise its
parameters are static Parameters of the default programs, as a Paddle 1.8 script that builds a
program from layers expects. (paddle.nn.Layer is eager by default instead.)"""

from __future__ import annotations

import contextlib

from ...dygraph import mode
from ...nn.layer.layers import Layer as _Layer

__all__ = ["Layer"]


class Layer(_Layer):
    def _mode_guard(self):
        return mode.eager_guard() if mode.eager_by_default() else contextlib.nullcontext()
