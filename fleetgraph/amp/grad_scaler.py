"""`paddle.amp.GradScaler` as Paddle 2.0 behaves on a CPU build: loss scaling exists for float16
gradients, which only a CUDAPlace computes, so on any other place the scaler warns and disables
itself. Disabled, `scale` returns the loss as it is and `minimize` is the optimizer's minimize (a
gradient of inf or nan is applied as it is, as Paddle's CPU build does). A bfloat16 run
(auto_cast(dtype='bfloat16')) needs no scaling either: bfloat16 has float32's exponent range, and
later Paddle (2.5) disables its scaler for bfloat16 too, so the loss goes unscaled there as well."""

from __future__ import annotations

import warnings

from ..dygraph import mode
from ..dygraph.tensor import Tensor


class GradScaler:
    """Paddle 2.0's constructor; on fleetgraph's CPU places `enable=True` warns and the scaler is
    disabled, as Paddle's is there, so the scaling arguments make no effect (Paddle's warning says so)."""

    def __init__(
        self,
        enable=True,
        init_loss_scaling=2.0**15,
        incr_ratio=2.0,
        decr_ratio=0.5,
        incr_every_n_steps=1000,
        decr_every_n_nan_or_inf=2,
        use_dynamic_loss_scaling=True,
    ) -> None:
        if not mode.in_dynamic_mode():
            raise ValueError("current_tracer is None, maybe it is not in imperative mode.")
        if enable:
            warnings.warn(
                "AmpScaler can only be enabled on CUDAPlace, current place is CPUPlace, so it makes no effect.",
                stacklevel=2,
            )
        self._enable = False

    def scale(self, var):
        """The loss times the scale factor; the loss itself while disabled (always, on a CPU place)."""
        if not isinstance(var, Tensor):
            raise TypeError(
                f"The type of 'var' in AmpScaler.scale() must be <class 'paddle.Tensor'>, but received {type(var)}."
            )
        return var

    def minimize(self, optimizer, *args, **kwargs):
        """optimizer.minimize(*args, **kwargs): with the scaler disabled there is nothing to unscale
        and no step to skip."""
        return optimizer.minimize(*args, **kwargs)
