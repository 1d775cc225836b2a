"""The import path seed 004 spells (`...distribute_transpiler.distributed_strategy_factory`)."""

from .distributed_strategy import DistributedStrategyFactory, StrategyFactory

__all__ = ["DistributedStrategyFactory", "StrategyFactory"]
