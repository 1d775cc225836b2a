"""Fluid 1.7's parameter-server strategies: each one is a DistributeTranspilerConfig fixed to one mode.

`StrategyFactory.create_sync_strategy()`, `create_half_async_strategy()`, `create_async_strategy()`
and `create_geo_strategy(update_frequency)` build them; `get_program_config()` returns the config to
tune (`config.min_block_size = 81920`), and `set_program_config` takes a config or a dict. The mode
fields belong to the strategy: setting a config keeps the strategy's mode.

A strategy also carries Paddle's other four configs, each with a getter and a setter (an object of
its class or a dict of its fields): TrainerRuntimeConfig (the communicator's FLAGS), ServerRuntimeConfig
(the pserver's RPC thread counts), fluid.ExecutionStrategy and fluid.BuildStrategy (for
`CompiledProgram(...).with_data_parallel`). Our runtime has no communicator queues or RPC thread
pools to size, so the first two are kept and shown, not acted on.
"""

from __future__ import annotations

import copy
import os

from fleetgraph.ir import FleetgraphError
from fleetgraph.ir.errors import close_matches
from fleetgraph.transpiler import DistributeTranspilerConfig


class TrainerRuntimeConfig:
    """The trainer communicator's settings, from FLAGS_communicator_* as Paddle reads them."""

    def __init__(self) -> None:
        self.mode = None
        threads = os.getenv("CPU_NUM", "1")
        flag = lambda name, default: os.getenv(f"FLAGS_{name}", default)  # noqa: E731
        self.runtime_configs = {
            "communicator_max_merge_var_num": flag("communicator_max_merge_var_num", threads),
            "communicator_send_queue_size": flag("communicator_send_queue_size", threads),
            "communicator_independent_recv_thread": flag("communicator_independent_recv_thread", "1"),
            "communicator_min_send_grad_num_before_recv": flag("communicator_min_send_grad_num_before_recv", threads),
            "communicator_thread_pool_size": flag("communicator_thread_pool_size", "5"),
            "communicator_send_wait_times": flag("communicator_send_wait_times", "5"),
            "communicator_is_sgd_optimizer": flag("communicator_is_sgd_optimizer", "1"),
            "rpc_deadline": flag("rpc_deadline", "180000"),
            "rpc_retry_times": flag("rpc_retry_times", "3"),
        }

    def get_communicator_flags(self) -> dict:
        return dict(self.runtime_configs)

    def display(self, configs) -> str:
        width = max(len(k) for k in configs)
        lines = [f"{k:<{width}}  {v}" for k, v in configs.items()]
        return "\n".join(["TrainerRuntimeConfig:", *lines])

    def __repr__(self) -> str:
        return self.display(self.get_communicator_flags())


class ServerRuntimeConfig:
    """The pserver's RPC thread counts, from FLAGS_rpc_*_thread_num as Paddle reads them."""

    def __init__(self) -> None:
        self._rpc_send_thread_num = int(os.getenv("FLAGS_rpc_send_thread_num", "12"))
        self._rpc_get_thread_num = int(os.getenv("FLAGS_rpc_get_thread_num", "12"))
        self._rpc_prefetch_thread_num = int(os.getenv("FLAGS_rpc_prefetch_thread_num", "12"))


def _set_fields(target, config, cls, what: str):
    """A copy of `config` if it is a `cls`, else `target` with a dict's fields set (each must exist)."""
    if isinstance(config, cls):
        return copy.copy(config)
    if not isinstance(config, dict):
        raise TypeError(f"{what}: expected a {cls.__name__} or a dict, got {type(config).__name__}")
    known = [k for k in vars(target) if not k.startswith("__")]
    for key, value in config.items():
        if key not in known:
            raise FleetgraphError(f"{what}: {cls.__name__} has no {key!r}{close_matches(str(key), known)}")
        setattr(target, key, value)
    return target


class DistributedStrategy:
    """A parameter-server mode and the transpiler config that goes with it, plus the trainer and
    server runtime configs and the execution and build strategies."""

    def __init__(self) -> None:
        from fleetgraph.static.compiler import BuildStrategy, ExecutionStrategy

        self._program_config = DistributeTranspilerConfig()
        self._trainer_runtime_config = TrainerRuntimeConfig()
        self._server_runtime_config = ServerRuntimeConfig()
        self._execute_strategy = ExecutionStrategy()
        self._execute_strategy.num_threads = int(os.getenv("CPU_NUM", "1"))
        self._build_strategy = BuildStrategy()
        self._set_mode(self._program_config)
        self._trainer_runtime_config.mode = type(self).__name__.replace("Strategy", "").upper()

    def get_trainer_runtime_config(self) -> TrainerRuntimeConfig:
        return self._trainer_runtime_config

    def set_trainer_runtime_config(self, config) -> None:
        if isinstance(config, dict):  # Paddle's dict form names the runtime_configs keys
            unknown = [k for k in config if k not in self._trainer_runtime_config.runtime_configs]
            if unknown:
                raise FleetgraphError(f"set_trainer_runtime_config: unknown {unknown}")
            self._trainer_runtime_config.runtime_configs.update(config)
            return
        self._trainer_runtime_config = _set_fields(None, config, TrainerRuntimeConfig, "set_trainer_runtime_config")

    def get_server_runtime_config(self) -> ServerRuntimeConfig:
        return self._server_runtime_config

    def set_server_runtime_config(self, config) -> None:
        self._server_runtime_config = _set_fields(
            self._server_runtime_config, config, ServerRuntimeConfig, "set_server_runtime_config"
        )

    def get_execute_strategy(self):
        return self._execute_strategy

    def set_execute_strategy(self, config) -> None:
        from fleetgraph.static.compiler import ExecutionStrategy

        self._execute_strategy = _set_fields(self._execute_strategy, config, ExecutionStrategy, "set_execute_strategy")

    def get_build_strategy(self):
        return self._build_strategy

    def set_build_strategy(self, config) -> None:
        from fleetgraph.static.compiler import BuildStrategy

        self._build_strategy = _set_fields(self._build_strategy, config, BuildStrategy, "set_build_strategy")

    def _set_mode(self, config: DistributeTranspilerConfig) -> None:
        raise NotImplementedError

    def get_program_config(self) -> DistributeTranspilerConfig:
        return self._program_config

    def set_program_config(self, config) -> None:
        if isinstance(config, DistributeTranspilerConfig):
            self._program_config = copy.copy(config)
        elif isinstance(config, dict):
            self._program_config._runtime_split_send_recv = False  # the mode fields: _set_mode sets them again
            known = [k for k in vars(self._program_config) if not k.startswith("_")]
            known += ["sync_mode", "runtime_split_send_recv"]
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
        config.runtime_split_send_recv = False
        config.sync_mode, config.half_async, config.geo_sgd_mode = True, False, False


class AsyncStrategy(DistributedStrategy):
    def _set_mode(self, config: DistributeTranspilerConfig) -> None:
        config.sync_mode, config.half_async, config.geo_sgd_mode = False, False, False
        config.runtime_split_send_recv = True  # as Paddle 1.8's AsyncStrategy: async, not half-async


class HalfAsyncStrategy(DistributedStrategy):
    def _set_mode(self, config: DistributeTranspilerConfig) -> None:
        config.runtime_split_send_recv = False
        config.sync_mode, config.half_async, config.geo_sgd_mode = False, True, False


class GeoStrategy(DistributedStrategy):
    """GEO-SGD: each trainer trains locally and pushes its parameter deltas every `update_frequency` steps."""

    def __init__(self, update_frequency: int = 100) -> None:
        if isinstance(update_frequency, bool) or not isinstance(update_frequency, int) or update_frequency < 1:
            raise FleetgraphError(f"GeoStrategy: update_frequency expected a positive int, got {update_frequency!r}")
        self._update_frequency = update_frequency
        super().__init__()

    def _set_mode(self, config: DistributeTranspilerConfig) -> None:
        config.runtime_split_send_recv = False
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
    "ServerRuntimeConfig",
    "TrainerRuntimeConfig",
    "DistributedStrategy",
    "DistributedStrategyFactory",
    "GeoStrategy",
    "HalfAsyncStrategy",
    "StrategyFactory",
    "SyncStrategy",
]
