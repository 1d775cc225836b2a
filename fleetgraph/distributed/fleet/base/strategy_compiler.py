"""Turn whatever strategy a script hands `distributed_optimizer` into the transpiler's config.

Accepted: a 2.x `DistributedStrategy`, a `DistributeTranspilerConfig` (Fluid-era seeds), a Fluid
strategy from `StrategyFactory` (anything with `get_program_config()`), or None (the defaults).
"""

from __future__ import annotations

import copy

from ....ir import FleetgraphError
from ....transpiler import DistributeTranspilerConfig
from .distributed_strategy import DistributedStrategy


def transpiler_config(strategy, is_collective: bool) -> DistributeTranspilerConfig:
    """A fresh config for this role's transpile; the caller's strategy or config is not changed."""
    if strategy is None:
        strategy = DistributedStrategy()
    if isinstance(strategy, DistributedStrategy):
        config = _from_strategy(strategy, is_collective)
    elif isinstance(strategy, DistributeTranspilerConfig):
        config = copy.copy(strategy)
    elif callable(getattr(strategy, "get_program_config", None)):
        config = copy.copy(strategy.get_program_config())
    else:
        raise FleetgraphError(
            "distributed_optimizer: strategy expected a fleet.DistributedStrategy, a DistributeTranspilerConfig "
            f"or a StrategyFactory strategy, got {type(strategy).__name__}"
        )
    config.mode = "collective" if is_collective else "pserver"
    return config


def _from_strategy(strategy: DistributedStrategy, is_collective: bool) -> DistributeTranspilerConfig:
    config = DistributeTranspilerConfig()
    if is_collective:
        config.fuse_all_reduce_ops = strategy.fuse_all_reduce_ops
        config.fuse_grad_size_in_MB = strategy.fuse_grad_size_in_MB
        return config
    mode = strategy.mode_name()
    config.sync_mode = mode == "sync"
    config.runtime_split_send_recv = mode == "async"  # async, not Fluid's default half-async
    if mode == "geo":
        config.geo_sgd_mode = True
        config.geo_sgd_need_push_nums = strategy.k_steps
    return config
