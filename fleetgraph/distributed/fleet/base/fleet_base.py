"""`Fleet`: Paddle's Fleet API over the DistributeTranspiler, for parameter-server and collective modes.

`distributed_optimizer(optimizer, strategy).minimize(loss)`:
  1. runs the wrapped optimizer's minimize (backward and optimize ops) on the loss's program;
  2. keeps a copy of that program (the single-process program: inference models are pruned from it);
  3. transpiles the copy for this role with a config made from the strategy; the transpiler rewrites
     the startup program in place, as Paddle's does;
  4. on a worker, makes the transpiled trainer program the loss's program, in place, so scripts that
     run `default_main_program()` afterwards run the trainer program (as with Paddle's fleet);
  5. on a server, makes this server's programs the loss's and the startup program, in place
     (`default_main_program()` is then the listen_and_serv program, as Paddle's), for init_server
     and run_server.
"""

from __future__ import annotations

from ....data import set_file_shard, set_worker_allreduce, set_worker_exchange
from ....dygraph.tensor import Tensor
from ....executor import CPUPlace, Executor, global_scope
from ....ir import FleetgraphError, FleetgraphTypeError, Program, default_startup_program
from ....ir.program import Variable
from ....store.persistence import save_inference_model as _save_inference_model
from ....store.persistence import save_vars
from ....store.pserver_state import load_server_persistables, save_pserver_state
from ....transpiler import DistributeTranspiler
from ....transpiler.distribute_transpiler import _replace_program
from .distributed_strategy import DistributedStrategy
from .role_maker import (
    MPISymetricRoleMaker,
    PaddleCloudRoleMaker,
    RoleMakerBase,
    SlurmRoleMaker,
    in_mpi_job,
    in_slurm_job,
)
from .strategy_compiler import transpiler_config
from .util import UtilBase


class Mode:
    """Which kind of training a Fluid 1.x fleet runs (`fleet_base.Mode`)."""

    TRANSPILER = 1
    PSLIB = 2
    COLLECTIVE = 3


class Fleet:
    """One per process (`fleet.fleet`); `fleet.init(...)` starts it afresh."""

    def __init__(self) -> None:
        self._role_maker: RoleMakerBase | None = None
        self.util = UtilBase(self)
        self._reset()

    def _reset(self) -> None:
        self._is_collective = False
        self._strategy = None
        self._transpiler: DistributeTranspiler | None = None
        self._origin_program: Program | None = None
        self._main_program: Program | None = None
        self._startup_program: Program | None = None

    # -- set-up ----------------------------------------------------------------------------------
    def init(self, role_maker: RoleMakerBase | None = None, is_collective: bool = False, strategy=None) -> None:
        """Read this process's role: from the role maker given, else from MPI when mpirun started the
        process, or from Slurm's variables when srun did (and no role variables are set), else from
        the environment."""
        if role_maker is None and not is_collective and in_mpi_job():
            role_maker = MPISymetricRoleMaker()
        elif role_maker is None and not is_collective and in_slurm_job():
            role_maker = SlurmRoleMaker()
        elif role_maker is None:
            role_maker = PaddleCloudRoleMaker(is_collective=is_collective)
        elif not isinstance(role_maker, RoleMakerBase):
            raise FleetgraphTypeError(
                "fleet.init: role_maker expected a PaddleCloudRoleMaker or UserDefinedRoleMaker, got "
                f"{type(role_maker).__name__}"
            )
        elif is_collective and not role_maker._is_collective:
            raise FleetgraphError(
                "fleet.init: is_collective=True but the role maker is for parameter-server mode; expected "
                "a role maker made with is_collective=True"
            )
        role_maker.generate_role()
        self._reset()
        self._role_maker = role_maker
        self._is_collective = role_maker._is_collective
        self._strategy = strategy
        self._connect_datasets()

    def _connect_datasets(self) -> None:
        """A worker of several reads its share of each dataset's files (unless the script shards them
        itself with fleet.util.get_file_shard); a dataset's global shuffle and sizes go through
        `fleet.util`."""
        role = self._role_maker
        several = role.is_worker() and role.worker_num() > 1
        set_file_shard(*(role.worker_index(), role.worker_num()) if several else (0, 1))
        set_worker_exchange(self.util.exchange if several else None)
        set_worker_allreduce((lambda a: self.util.all_reduce(a, "sum")) if several else None)

    def distributed_optimizer(self, optimizer, strategy=None) -> DistributedOptimizer:
        """Wrap `optimizer` so `minimize` also transpiles for this role; `strategy` is a
        DistributedStrategy, a DistributeTranspilerConfig or a StrategyFactory strategy."""
        self._role()
        return DistributedOptimizer(self, optimizer, strategy if strategy is not None else self._strategy)

    def distributed_model(self, model):
        """The dynamic-mode model of this trainer: a DataParallel over the collective ring (gradients
        all-reduced in buckets of the strategy's fuse_grad_size_in_MB after each backward)."""
        from ....dygraph.parallel import init_ring
        from ...parallel import DataParallel

        role = self._role()
        if not self._is_collective:
            raise FleetgraphError(
                "fleet.distributed_model: expected collective mode; call fleet.init(is_collective=True) first"
            )
        init_ring(role.worker_index(), role.worker_num(), list(role.get_trainer_endpoints()))
        size = getattr(self._strategy, "fuse_grad_size_in_MB", 25) if self._strategy is not None else 25
        return DataParallel(model, comm_buffer_size=size)

    # -- who is who ------------------------------------------------------------------------------
    def _role(self) -> RoleMakerBase:
        if self._role_maker is None:
            raise FleetgraphError("fleet: call fleet.init() first")
        return self._role_maker

    def is_worker(self) -> bool:
        return self._role().is_worker()

    def is_server(self) -> bool:
        return self._role().is_server()

    def is_first_worker(self) -> bool:
        return self._role().is_first_worker()

    def worker_index(self) -> int:
        return self._role().worker_index()

    def server_index(self) -> int:
        return self._role().server_index()

    def worker_num(self) -> int:
        return self._role().worker_num()

    def server_num(self) -> int:
        return self._role().server_num()

    def worker_endpoints(self, to_string: bool = False):
        endpoints = self._role().get_trainer_endpoints()
        return ",".join(endpoints) if to_string else endpoints

    def server_endpoints(self, to_string: bool = False):
        endpoints = self._role().get_pserver_endpoints()
        return ",".join(endpoints) if to_string else endpoints

    # -- the programs ----------------------------------------------------------------------------
    @property
    def main_program(self) -> Program:
        """The trainer program on a worker, the pserver program on a server."""
        return self._transpiled("main_program", self._main_program)

    @property
    def startup_program(self) -> Program:
        return self._transpiled("startup_program", self._startup_program)

    def _transpiled(self, what: str, program: Program | None) -> Program:
        if program is None:
            raise FleetgraphError(f"fleet.{what}: call fleet.distributed_optimizer(optimizer).minimize(loss) first")
        return program

    def _minimize(self, optimizer, strategy, loss: Variable, startup_program, parameter_list, no_grad_set):
        role = self._role()
        result = optimizer.minimize(loss, startup_program, parameter_list=parameter_list, no_grad_set=no_grad_set)  # 1
        program = loss.block.program
        startup = startup_program or default_startup_program()
        origin = program.clone()  # step 2
        t = DistributeTranspiler(transpiler_config(strategy, self._is_collective))  # step 3
        if self._is_collective:
            t.transpile(
                role.worker_index(),
                program=origin,
                trainers=",".join(role.get_trainer_endpoints()),
                startup_program=startup,
                current_endpoint=role.current_endpoint(),
            )
        else:
            t.transpile(
                role.worker_index(),
                program=origin,
                pservers=",".join(role.get_pserver_endpoints()),
                trainers=role.worker_num(),
                startup_program=startup,
            )
        self._transpiler, self._origin_program = t, origin
        self._main_program, self._startup_program = program, startup
        if role.is_server():  # step 5: the loss's programs become this server's, as Paddle's
            server_main, server_startup = t.get_pserver_programs(role.current_endpoint())
            _replace_program(program, server_main)
            _replace_program(startup, server_startup)
        else:  # step 4
            _replace_program(program, t.get_trainer_program())  # its distribution plan with it
        return result

    # -- servers ---------------------------------------------------------------------------------
    def init_server(self, model_dir: str | None = None) -> None:
        """Run this server's startup program; with `model_dir`, then load the blocks it holds of the
        persistables saved there (by `fleet.save_persistables`)."""
        self._check_server("init_server")
        Executor(CPUPlace()).run(self._startup_program)
        if model_dir is not None:
            load_server_persistables(
                global_scope(),
                self._main_program,
                self._main_program.dist_plan.plan,
                self._role().current_endpoint(),
                model_dir,
            )

    def run_server(self) -> None:
        """Serve the trainers; returns once every trainer has said it is done (`stop_worker`)."""
        self._check_server("run_server")
        Executor(CPUPlace()).run(self._main_program)

    def _check_server(self, what: str) -> None:
        if not self.is_server():
            raise FleetgraphError(f"fleet.{what}: this process is a worker; expected a server (TRAINING_ROLE=PSERVER)")
        self._transpiled("main_program", self._main_program)

    # -- workers ---------------------------------------------------------------------------------
    def init_worker(self) -> None:
        """Nothing to start: the trainer's startup program receives the parameters from the servers."""
        self._check_worker("init_worker")

    def stop_worker(self) -> None:
        """Tell every server this worker is done (as `exe.close()` does)."""
        from ....executor.comm import stop_worker

        stop_worker()

    def barrier_worker(self) -> None:
        """Wait until every worker reaches this call. A single worker has nobody to wait for;
        collective ranks use ring 0's barrier; parameter-server workers meet at the first server,
        where a worker that called stop_worker no longer counts."""
        self._check_worker("barrier_worker")
        role = self._role()
        if role.worker_num() == 1:
            return
        from ....executor.comm import process_comm

        if self._is_collective:
            process_comm().ring(0).barrier()
        else:
            process_comm().ps_client().worker_barrier(role.get_pserver_endpoints()[0], role.worker_index())

    def _check_worker(self, what: str) -> None:
        if not self.is_worker():
            raise FleetgraphError(f"fleet.{what}: this process is a server; expected a worker (TRAINING_ROLE=TRAINER)")

    def save_persistables(self, executor, dirname: str, main_program: Program | None = None) -> str | None:
        """Save the single-process program's persistables as a checkpoint (atomic, with a manifest:
        fleetgraph.store.checkpoint). Parameter-server mode: worker 0 asks every server for the blocks and
        table rows it holds, optimizer state and step count included, and writes them as the original
        program's variables (loadable by one process, a collective job, or `fleet.init_server(dirname)`
        with any number of servers). Collective mode: rank 0 saves its copy. Other workers save
        nothing and return None."""
        self._check_worker("save_persistables")
        program = self._origin_or(main_program)
        if self._role().worker_index() != 0:
            return None
        scope = global_scope()
        if self._is_collective or self._transpiler is None or program is not self._origin_program:
            chosen = [v for v in program.list_vars() if v.persistable and v.name in scope]
            return save_vars(executor, dirname, program, vars=chosen)
        from ....executor.comm import process_comm

        return save_pserver_state(dirname, process_comm().ps_client(), self._main_program.dist_plan, scope)

    def save_inference_model(
        self,
        executor,
        dirname: str,
        feeded_var_names,
        target_vars,
        main_program: Program | None = None,
        export_for_deployment: bool = True,
    ) -> list[str]:
        """Prune the single-process program (no send/recv or all-reduce ops) to the feeds and targets
        and save it with the parameters this worker holds."""
        self._check_worker("save_inference_model")
        program = self._origin_or(main_program)
        return _save_inference_model(
            dirname, feeded_var_names, target_vars, executor, program, export_for_deployment=export_for_deployment
        )

    def _origin_or(self, main_program: Program | None) -> Program:
        if main_program is None or main_program is self._main_program:
            return self._transpiled("main_program", self._origin_program)
        return main_program


class DistributedOptimizer:
    """What `fleet.distributed_optimizer` returns: `minimize` optimizes, then transpiles for the role."""

    def __init__(self, fleet: Fleet, optimizer, strategy) -> None:
        if isinstance(optimizer, DistributedOptimizer):
            raise FleetgraphError("fleet.distributed_optimizer: the optimizer is already distributed")
        if not callable(getattr(optimizer, "minimize", None)):
            raise FleetgraphTypeError(
                f"fleet.distributed_optimizer: expected an optimizer, got {type(optimizer).__name__}"
            )
        self._fleet, self.inner_opt, self.user_defined_strategy = fleet, optimizer, strategy

    def minimize(self, loss, startup_program=None, parameter_list=None, no_grad_set=None):
        """(optimize_ops, params_grads) of the wrapped optimizer; the loss's program is the role's program after.
        On an eager Tensor the wrapped optimizer steps: distributed_model already averaged the gradients."""
        if isinstance(loss, Tensor):
            return self.inner_opt.minimize(loss)
        if not isinstance(loss, Variable):
            raise FleetgraphTypeError(f"minimize: loss expected a Variable, got {type(loss).__name__}")
        return self._fleet._minimize(
            self.inner_opt, self.user_defined_strategy, loss, startup_program, parameter_list, no_grad_set
        )

    def __getattr__(self, name: str):
        if name == "inner_opt":  # not set yet (copying): no recursion
            raise AttributeError(name)
        return getattr(self.inner_opt, name)


__all__ = ["DistributedOptimizer", "DistributedStrategy", "Fleet", "Mode"]
