"""`DistributedStrategy`: Paddle 2.x's knobs of distributed training that fleetgraph implements.

Parameter-server mode: `a_sync=False` is sync, `a_sync=True` async, and `a_sync=True` with
`a_sync_configs={"k_steps": K}` (K > 0) GEO, pushing every K steps. Collective mode:
`fuse_all_reduce_ops` with `fuse_grad_size_in_MB` buckets the gradients' all-reduces. Paddle's other
features (amp, recompute, ...) are not implemented: setting one raises instead of being ignored, and so
does a misspelt attribute.
"""

from __future__ import annotations

import copy
import numbers

from ....ir import FleetgraphError
from ....ir.errors import close_matches

# Paddle's a_sync_configs and their defaults; only k_steps changes what fleetgraph builds, the others
# tune Paddle's communicator threads and are kept so scripts that set them run.
A_SYNC_DEFAULTS = {
    "k_steps": 0,
    "max_merge_var_num": 1,
    "send_queue_size": 16,
    "independent_recv_thread": False,
    "min_send_grad_num_before_recv": 1,
    "thread_pool_size": 1,
    "send_wait_times": 1,
    "runtime_split_send_recv": False,
    "launch_barrier": True,
    "heter_worker_device_guard": "cpu",
    "lr_decay_steps": 10,
    "use_ps_gpu": 0,
}

UNSUPPORTED = (
    "amp",
    "recompute",
    "sharding",
    "pipeline",
    "tensor_parallel",
    "gradient_merge",
    "localsgd",
    "adaptive_localsgd",
    "dgc",
    "lars",
    "lamb",
)


class DistributedStrategy:
    """`fleet.DistributedStrategy()`; see the module docstring for what each knob selects."""

    _FIELDS = ("a_sync", "a_sync_configs", "fuse_all_reduce_ops", "fuse_grad_size_in_MB", *UNSUPPORTED)

    def __init__(self) -> None:
        self.a_sync = False
        self.a_sync_configs = {}
        self.fuse_all_reduce_ops = True
        self.fuse_grad_size_in_MB = 32
        for name in UNSUPPORTED:
            self.__dict__[name] = False

    def __setattr__(self, name: str, value) -> None:
        if name not in self._FIELDS:
            raise FleetgraphError(
                f"DistributedStrategy: no attribute {name!r}{close_matches(name, self._FIELDS)}; "
                f"fleetgraph implements {', '.join(self._FIELDS[:4])}"
            )
        if name in UNSUPPORTED:
            if value:
                raise FleetgraphError(f"DistributedStrategy.{name}: not supported by fleetgraph; expected False")
            value = False
        elif name in ("a_sync", "fuse_all_reduce_ops"):
            value = _bool(name, value)
        elif name == "fuse_grad_size_in_MB":
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or value <= 0:
                raise FleetgraphError(
                    f"DistributedStrategy.fuse_grad_size_in_MB: expected a positive number, got {value!r}"
                )
        elif name == "a_sync_configs":
            value = _a_sync_configs(self.__dict__.get("a_sync_configs", A_SYNC_DEFAULTS), value)
        self.__dict__[name] = value

    @property
    def k_steps(self) -> int:
        return self.a_sync_configs["k_steps"]

    def mode_name(self) -> str:
        """'sync', 'async' or 'geo' (parameter-server mode)."""
        if not self.a_sync:
            if self.k_steps > 0:
                raise FleetgraphError(
                    f"DistributedStrategy: a_sync_configs k_steps={self.k_steps} (GEO) needs a_sync=True; "
                    "got a_sync=False"
                )
            return "sync"
        return "geo" if self.k_steps > 0 else "async"

    def __deepcopy__(self, memo) -> DistributedStrategy:
        out = DistributedStrategy()
        out.__dict__.update(copy.deepcopy(self.__dict__, memo))
        return out

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._FIELDS[:4] if n != "a_sync_configs")
        return f"DistributedStrategy({fields}, k_steps={self.k_steps})"


def _bool(name: str, value) -> bool:
    if not isinstance(value, bool):
        raise FleetgraphError(f"DistributedStrategy.{name}: expected True or False, got {value!r}")
    return value


def _a_sync_configs(current: dict, value) -> dict:
    if not isinstance(value, dict):
        raise FleetgraphError(
            f"DistributedStrategy.a_sync_configs: expected a dict, e.g. {{'k_steps': 100}}, got {value!r}"
        )
    for key in value:
        if key not in A_SYNC_DEFAULTS:
            raise FleetgraphError(
                f"DistributedStrategy.a_sync_configs: unknown key {key!r}{close_matches(str(key), A_SYNC_DEFAULTS)}"
            )
    k = value.get("k_steps", current["k_steps"])
    if isinstance(k, bool) or not isinstance(k, int):
        raise FleetgraphError(f"DistributedStrategy.a_sync_configs: k_steps expected an int, got {k!r}")
    return {**current, **value}
