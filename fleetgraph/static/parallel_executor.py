"""`fluid.ParallelExecutor`: a program run as CPU_NUM data-parallel replicas (Fluid 1.x's API over
CompiledProgram.with_data_parallel)."""

from __future__ import annotations

from ..executor import Executor, global_scope
from ..executor.place import CPUPlace
from ..ir import default_main_program
from .compiler import CompiledProgram, check_not_cuda


class ParallelExecutor:
    def __init__(
        self,
        use_cuda,
        loss_name=None,
        main_program=None,
        share_vars_from=None,
        exec_strategy=None,
        build_strategy=None,
        num_trainers=1,
        trainer_id=0,
        scope=None,
    ) -> None:
        check_not_cuda(use_cuda, "ParallelExecutor")
        self._program = main_program or default_main_program()
        self._scope = scope or global_scope()
        self._compiled = CompiledProgram(self._program, build_strategy).with_data_parallel(
            loss_name=loss_name, build_strategy=build_strategy, exec_strategy=exec_strategy
        )
        self._executor = Executor(CPUPlace())

    @property
    def device_count(self) -> int:
        return self._compiled.replicas

    def run(self, fetch_list, feed=None, feed_dict=None, return_numpy=True):
        """Fetch the values of fetch_list after one step on `feed` (a dict split over the replicas, or
        a list of one dict per replica); per-replica values come concatenated."""
        return self._executor.run(
            self._compiled,
            feed=feed if feed is not None else feed_dict,
            fetch_list=fetch_list,
            scope=self._scope,
            return_numpy=return_numpy,
        )

    def drop_local_exe_scopes(self) -> None:
        """Paddle frees its per-replica scopes; ours live only during a step."""
