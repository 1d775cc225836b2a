"""The executor: prepares a block once into a flat plan, then runs the plan's kernels over a scope."""

from __future__ import annotations

from collections.abc import Sequence

from ..ir import FleetgraphError, default_main_program
from ..ir.program import Program
from .dataset_runner import run_dataset
from .feed_fetch import feed_into, fetch_name, fetched
from .place import CPUPlace, Place
from .plan import Plan, Plans, RunContext, set_scheduled_lr
from .scope import Scope, global_scope


class Executor:
    """`Executor(place).run(program, feed, fetch_list)` as in Paddle's static graph."""

    def __init__(self, place: Place | None = None) -> None:
        self.place = place or CPUPlace()
        self.xp = self.place.array_module()
        self.plans = Plans()

    def context(self, program: Program, scope: Scope, env: dict, plan: Plan, comm=None) -> RunContext | None:
        """The run context of `plan`'s run on `env`, when one of its kernels needs one (`comm`: a
        replica's communicator, else the process's)."""
        return RunContext(self.plans, program, scope, env, self.xp, comm) if plan.context_steps else None

    def run(
        self,
        program: Program | None = None,
        feed: dict | None = None,
        fetch_list: Sequence | None = None,
        feed_var_name: str = "feed",
        fetch_var_name: str = "fetch",
        scope: Scope | None = None,
        return_numpy: bool = True,
        use_program_cache: bool = True,
    ) -> list:
        compiled = program if getattr(program, "_is_data_parallel", False) else None
        program = default_main_program() if program is None else getattr(program, "_program", program)
        if not isinstance(program, Program):
            raise TypeError(f"Executor.run: expected a Program, got {type(program).__name__}")
        scope = global_scope() if scope is None else scope
        if compiled is not None:  # CPU_NUM replicas: executor/parallel.py
            fetch_names = [fetch_name(f) for f in (fetch_list or [])]
            return compiled._runner().run(self, feed, fetch_names, scope, return_numpy)
        plan = self.plans.get(program)
        env = dict(scope.vars)
        if isinstance(feed, (list, tuple)):  # one dict per place, as a DataLoader yields them
            if len(feed) != 1:
                raise FleetgraphError(
                    f"Executor.run: feed is a list of {len(feed)} dicts (one per place); a program runs on one "
                    "place, so expected one"
                )
            feed = feed[0]
        if feed:
            feed_into(env, feed, plan, self.xp)
        fetch_names = [fetch_name(f) for f in (fetch_list or [])]
        set_scheduled_lr(program, env)
        plan.run(env, self.xp, self.context(program, scope, env, plan))
        for name in plan.persist_outputs:
            scope.vars[name] = env[name]
        return [fetched(env, name, program, return_numpy) for name in fetch_names]

    def train_from_dataset(
        self,
        program: Program | None = None,
        dataset=None,
        scope: Scope | None = None,
        thread: int = 0,
        debug: bool = False,
        fetch_list: Sequence | None = None,
        fetch_info: Sequence[str] | None = None,
        print_period: int = 100,
        fetch_handler=None,
    ) -> None:
        """Train on every batch of `dataset` with `thread` threads (default: the dataset's thread_num)
        sharing `scope`, printing `fetch_info` and the fetched values every `print_period` batches."""
        run_dataset(
            self,
            program,
            dataset,
            scope,
            thread,
            fetch_list,
            fetch_info,
            print_period,
            fetch_handler,
            infer=False,
            what="train_from_dataset",
        )

    def infer_from_dataset(
        self,
        program: Program | None = None,
        dataset=None,
        scope: Scope | None = None,
        thread: int = 0,
        debug: bool = False,
        fetch_list: Sequence | None = None,
        fetch_info: Sequence[str] | None = None,
        print_period: int = 100,
        fetch_handler=None,
    ) -> None:
        """As train_from_dataset, running only the program's forward ops: no parameter changes and
        nothing is pushed to the pservers (metrics such as auc still accumulate)."""
        run_dataset(
            self,
            program,
            dataset,
            scope,
            thread,
            fetch_list,
            fetch_info,
            print_period,
            fetch_handler,
            infer=True,
            what="infer_from_dataset",
        )

    def close(self) -> None:
        """A trainer tells every pserver it is done (as Paddle's `exe.close()`); a no-op otherwise."""
        from .comm import stop_worker

        stop_worker()
