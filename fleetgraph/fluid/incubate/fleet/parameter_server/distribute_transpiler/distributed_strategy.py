"""Fluid 1.7's parameter-server strategies: each one is a DistributeTranspilerConfig fixed to one mode.

`StrategyFactory.create_sync_strategy()`, `create_half_async_strategy()`, `create_async_strategy()`
and `create_geo_strategy(update_frequency)` build them; `get_program_config()` returns the config to
tune (`config.min_block_size = 81920`), and `set_program_config` takes a config or a dict. The mode
fields belong to the strategy: setting a config keeps the strategy's mode.
"""

from __future__ import annotations

import copy

from fleetgraph.ir import FleetgraphError
from fleetgraph.ir.errors import close_matches
from fleetgraph.transpiler import DistributeTranspilerConfig


class DistributedStrategy:
    """A parameter-server mode and the transpiler config that goes with it."""

    def __init__(self) -> None:
        self._program_config = DistributeTranspilerConfig()
        self._set_mode(self._program_config)

    def _set_mode(self, config: DistributeTranspilerConfig) -> None:
        raise NotImplementedError

    def get_program_config(self) -> DistributeTranspilerConfig:
        return self._program_config

    def set_program_config(self, config) -> None:
        if isinstance(config, DistributeTranspilerConfig):
            self._program_config = copy.copy(config)
        elif isinstance(config, dict):
            known = [k for k in vars(self._program_config) if not k.startswith("_")] + ["sync_mode"]
            for key, value in config.items():
                if key not in known:
                    raise FleetgraphError(
                        f"{type(self).__name__}.set_program_config: DistributeTranspilerConfig has no {key!r}"
                        f"{close_matches(str(key), known)}"
                    )
                setattr(self._program_config, key, value)
        else:
            raise TypeError(
                f"{type(self).__name__}.set_program_config: expected a DistributeTranspilerConfig or a dict, "
                f"got {type(config).__name__}"
            )
        self._set_mode(self._program_config)

    def __repr__(self) -> str:
        c = self._program_config
        modes = f"sync_mode={c.sync_mode}, half_async={c.half_async}, geo_sgd_mode={c.geo_sgd_mode}"
        return f"{type(self).__name__}({modes})"


class SyncStrategy(DistributedStrategy):
    def _set_mode(self, config: DistributeTranspilerConfig) -> None:
        config.sync_mode, config.half_async, config.geo_sgd_mode = True, False, False


class AsyncStrategy(DistributedStrategy):
    def _set_mode(self, config: DistributeTranspilerConfig) -> None:
        config.sync_mode, config.half_async, config.geo_sgd_mode = False, False, False


class HalfAsyncStrategy(DistributedStrategy):
    def _set_mode(self, config: DistributeTranspilerConfig) -> None:
        config.sync_mode, config.half_async, config.geo_sgd_mode = False, True, False


class GeoStrategy(DistributedStrategy):
    """GEO-SGD: each trainer trains locally and pushes its parameter deltas every `update_frequency` steps."""

    def __init__(self, update_frequency: int = 100) -> None:
        if isinstance(update_frequency, bool) or not isinstance(update_frequency, int) or update_frequency < 1:
            raise FleetgraphError(f"GeoStrategy: update_frequency expected a positive int, got {update_frequency!r}")
        self._update_frequency = update_frequency
        super().__init__()

    def _set_mode(self, config: DistributeTranspilerConfig) -> None:
        config.sync_mode, config.half_async, config.geo_sgd_mode = False, False, True
        config.geo_sgd_need_push_nums = self._update_frequency


class StrategyFactory:
    @staticmethod
    def create_sync_strategy() -> SyncStrategy:
        return SyncStrategy()

    @staticmethod
    def create_half_async_strategy() -> HalfAsyncStrategy:
        return HalfAsyncStrategy()

    @staticmethod
    def create_async_strategy() -> AsyncStrategy:
        return AsyncStrategy()

    @staticmethod
    def create_geo_strategy(update_frequency: int = 100) -> GeoStrategy:
        return GeoStrategy(update_frequency)


DistributedStrategyFactory = StrategyFactory  # the name seed 004 imports

__all__ = [
    "AsyncStrategy",
    "DistributedStrategy",
    "DistributedStrategyFactory",
    "GeoStrategy",
    "HalfAsyncStrategy",
    "StrategyFactory",
    "SyncStrategy",
]
