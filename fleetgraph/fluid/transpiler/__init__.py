"""`fluid.transpiler`, with the modules scripts import from: `distribute_transpiler`, `ps_dispatcher`."""

import logging

from ...transpiler import DistributeTranspiler, DistributeTranspilerConfig, HashName, RoundRobin
from . import distribute_transpiler, ps_dispatcher


def memory_optimize(input_program, skip_opt_set=None, print_log=False, level=0, skip_grads=True) -> None:
    """Deprecated since Paddle 1.6, where it changes nothing and says so; the same here: a value that
    is not persistable lives only until the run that made it ends, with no pass needed."""
    logging.warning(
        "Caution! fluid.memory_optimize() is deprecated (since Paddle 1.6) and does not change the program: "
        "values that are not persistable live only for the run that makes them"
    )


def release_memory(input_program, skip_opt_set=None) -> None:
    """Deprecated since Paddle 1.6, where it changes nothing and says so; the same here."""
    logging.warning("fluid.release_memory() is deprecated (since Paddle 1.6) and does not change the program")


__all__ = [
    "DistributeTranspiler",
    "DistributeTranspilerConfig",
    "HashName",
    "RoundRobin",
    "distribute_transpiler",
    "memory_optimize",
    "ps_dispatcher",
    "release_memory",
]
