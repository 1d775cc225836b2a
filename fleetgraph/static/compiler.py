"""`fluid.compiler`: CompiledProgram (data parallelism over CPU_NUM replicas), BuildStrategy and
ExecutionStrategy (executor/strategy.py). See executor/parallel.py for how the replicas run."""

from __future__ import annotations

from .. import compat as cpt  # noqa: F401  (Paddle's compiler module re-exports these)
from ..executor.parallel import DataParallel, cpu_num
from ..executor.place import CPUPlace, CUDAPlace, cuda_places  # noqa: F401
from ..executor.strategy import BuildStrategy, ExecutionStrategy
from ..ir import FleetgraphError, FleetgraphTypeError, Program


def cpu_places(device_count=None) -> list:
    """device_count CPU places (default: CPU_NUM's count, as Paddle's)."""
    return [CPUPlace()] * (device_count or cpu_num())


def xpu_places(device_ids=None) -> list:
    """Paddle's XPU (Baidu Kunlun) places; as in a Paddle build without XPU support, an error."""
    raise AssertionError("Not compiled with XPU (fleetgraph has no XPU places; use cpu_places())")


class CompiledProgram:
    """A program to run as is, or (`with_data_parallel`) as CPU_NUM replicas, each on a shard of the
    batch, gradients averaged: the same parameters as one replica on the whole batch."""

    def __init__(self, program_or_graph, build_strategy=None) -> None:
        program = getattr(program_or_graph, "_program", program_or_graph)
        if not isinstance(program, Program):
            raise FleetgraphTypeError(f"CompiledProgram: expected a Program, got {type(program_or_graph).__name__}")
        self._program = program
        self._build_strategy = build_strategy or BuildStrategy()
        self._exec_strategy = None
        self._loss_name = None
        self._places = None
        self._data_parallel: DataParallel | None = None
        self._is_data_parallel = False

    def with_data_parallel(
        self, loss_name=None, build_strategy=None, exec_strategy=None, share_vars_from=None, places=None
    ) -> CompiledProgram:
        if places is not None and any(isinstance(p, CUDAPlace) for p in places):
            CUDAPlace(0)  # its one clear error: no GPU execution here
        self._loss_name = getattr(loss_name, "name", loss_name)
        self._build_strategy = build_strategy or self._build_strategy
        self._exec_strategy = exec_strategy or ExecutionStrategy()
        self._places = list(places) if places is not None else None
        self._is_data_parallel = True
        return self

    @property
    def replicas(self) -> int:
        return len(self._places) if self._places else cpu_num()

    def _runner(self) -> DataParallel:
        runner, sync = self._data_parallel, bool(self._build_strategy.sync_batch_norm)
        if (
            runner is None
            or runner.version != self._program._version
            or runner.replicas != self.replicas
            or runner.sync_batch_norm != sync
        ):
            runner = self._data_parallel = DataParallel(self._program, self.replicas, sync)
        return runner

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._program, name)  # global_block(), num_blocks, ... as the program's


def check_not_cuda(use_cuda: bool, what: str) -> None:
    if use_cuda:
        raise FleetgraphError(f"{what}: use_cuda=True asks for GPUs; this build runs on the CPU (use_cuda=False)")
