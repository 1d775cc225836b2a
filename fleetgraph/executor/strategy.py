"""BuildStrategy and ExecutionStrategy (Paddle's `fluid.compiler` names): how CompiledProgram builds and
runs a data-parallel program (executor/parallel.py). They live down here, below static and jit, so
that paddle.jit's TracedLayer can check what its set_strategy is given."""

from __future__ import annotations

import enum


class BuildStrategy:
    """How a data-parallel program is built. reduce_strategy: AllReduce (every replica updates every
    parameter) or Reduce (one owner per parameter, then a broadcast): in one process both give the
    same parameters. sync_batch_norm: the replicas' batch norms normalize by the statistics of the
    whole batch (sync_batch_norm ops all-reduced across the replicas), as Paddle's. The fusion and
    memory options are accepted; our replicas share one address space, so there is nothing for them
    to fuse or free."""

    class ReduceStrategy(enum.IntEnum):
        AllReduce = 0
        Reduce = 1

    class GradientScaleStrategy(enum.IntEnum):
        CoeffNumDevice = 0
        One = 1
        Customized = 2

    def __init__(self) -> None:
        self.reduce_strategy = BuildStrategy.ReduceStrategy.AllReduce
        self.gradient_scale_strategy = BuildStrategy.GradientScaleStrategy.CoeffNumDevice
        self.fuse_all_reduce_ops = False
        self.fuse_all_optimizer_ops = False
        self.fuse_elewise_add_act_ops = False
        self.fuse_broadcast_ops = False
        self.fuse_relu_depthwise_conv = False
        self.enable_inplace = False
        self.memory_optimize = False
        self.enable_sequential_execution = False
        self.sync_batch_norm = False
        self.num_trainers = 1
        self.trainer_id = 0
        self.debug_graphviz_path = ""
        self.async_mode = False

    def __repr__(self) -> str:
        return f"BuildStrategy(reduce_strategy={self.reduce_strategy.name})"


class ExecutionStrategy:
    """How a data-parallel program runs: num_threads (the replicas run on one thread each; 0 lets
    the replica count decide), num_iteration_per_drop_scope and use_thread_barrier are accepted."""

    def __init__(self) -> None:
        self.num_threads = 0
        self.num_iteration_per_drop_scope = 100
        self.num_iteration_per_run = 1
        self.use_thread_barrier = False
        self.allow_op_delay = False

    def __repr__(self) -> str:
        return f"ExecutionStrategy(num_threads={self.num_threads})"
