"""`DistributeTranspiler`: Paddle's stateful API as a thin facade over the pure passes.

`transpile()` computes one plan and builds the trainer's programs; `get_pserver_program(s)` and
`get_startup_program` build a pserver's on demand. As in Paddle, a trainer runs the startup program
it was given (by default `default_startup_program()`), so `transpile()` writes the trainer's startup
ops into that program in place. That is the one mutation: the main program is left as it was and
every builder works on copies.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..ir import FleetgraphError, Program, Variable, default_main_program, default_startup_program
from ..ir.endpoints import endpoint_problem
from .collective import collective_startup, insert_allreduce
from .dump import dump_if_requested
from .fuse_allreduce import fuse_allreduce_with_plan
from .ps_plan import ASYNC, GEO, HALF_ASYNC, SYNC, DistPlan, HashName, RolePlan, RoundRobin, make_plan
from .ps_pserver import build_pserver_program, build_pserver_startup
from .ps_trainer import build_trainer_program, build_trainer_startup


class DistributeTranspilerConfig:
    """Knobs of the transpile. `sync_mode` left unset follows `transpile(sync_mode=...)`, and is sync
    unless half_async or geo_sgd_mode asks otherwise; set in both places it must agree. Not sync, the
    mode is half-async unless `runtime_split_send_recv` makes it async (Paddle 1.8's rule: its
    distributed_mode 2 for sync_mode=False alone, 1 with runtime_split_send_recv=True), or GEO."""

    def __init__(self) -> None:
        self.slice_var_up = True
        self.split_method = RoundRobin
        self.min_block_size = 8192
        self.mode = "pserver"
        self.half_async = False
        self.geo_sgd_mode = False
        self.geo_sgd_need_push_nums = 100
        self.fuse_all_reduce_ops = False
        self.fuse_grad_size_in_MB = 32
        self.print_log = False
        self._sync_mode: bool | None = None
        self._runtime_split_send_recv = False

    @property
    def sync_mode(self) -> bool:
        return self._sync_mode if self._sync_mode is not None else not (self.half_async or self.geo_sgd_mode)

    @sync_mode.setter
    def sync_mode(self, value: bool) -> None:
        if value is None:
            raise ValueError("sync_mode can't be None")
        if value and self._runtime_split_send_recv:
            raise ValueError(
                "sync_mode=True with runtime_split_send_recv=True: set runtime_split_send_recv to False first"
            )
        self._sync_mode = bool(value)

    @property
    def runtime_split_send_recv(self) -> bool:
        """Async mode (sync_mode=False first). The trainer program then has no split_byref or concat:
        send takes a whole gradient and recv a whole parameter, with their blocks' names, and the
        runtime cuts and joins them, as Paddle's (the same blocks on the wire)."""
        return self._runtime_split_send_recv

    @runtime_split_send_recv.setter
    def runtime_split_send_recv(self, value: bool) -> None:
        if value is None:
            raise ValueError("runtime_split_send_recv can't be None")
        if value and self._sync_mode is not False:
            raise ValueError("runtime_split_send_recv=True needs config.sync_mode = False first")
        self._runtime_split_send_recv = bool(value)


def resolve_mode(config: DistributeTranspilerConfig, sync_mode: bool | None) -> int:
    """The one distributed mode that the arguments and the config agree on, or a clear error."""
    if sync_mode is not None and config._sync_mode is not None and bool(sync_mode) != config._sync_mode:
        raise FleetgraphError(
            f"transpile: sync_mode={bool(sync_mode)} but config.sync_mode={config._sync_mode}; "
            "expected them to agree (set one of them)"
        )
    if config.half_async and config.geo_sgd_mode:
        raise FleetgraphError("transpile: config.half_async and config.geo_sgd_mode are both set; expected at most one")
    explicit = sync_mode if sync_mode is not None else config._sync_mode
    if explicit and (config.half_async or config.geo_sgd_mode):
        kind = "half_async" if config.half_async else "geo_sgd_mode"
        raise FleetgraphError(f"transpile: config.{kind} needs sync_mode=False, got sync_mode=True")
    sync = explicit if explicit is not None else not (config.half_async or config.geo_sgd_mode)
    if sync:
        if config.runtime_split_send_recv:
            raise FleetgraphError("transpile: sync_mode=True but config.runtime_split_send_recv=True (async)")
        return SYNC
    if config.geo_sgd_mode:
        return GEO
    return ASYNC if config.runtime_split_send_recv and not config.half_async else HALF_ASYNC


def parse_endpoints(text, what: str = "pservers") -> list[str]:
    """'ip:port,ip:port' (spaces allowed) -> ['ip:port', 'ip:port'], or an error showing the form."""
    example = "expected 'ip:port[,ip:port...]', e.g. '127.0.0.1:6174,127.0.0.1:6175'"
    if isinstance(text, (list, tuple)):
        text = ",".join(text)
    if not isinstance(text, str) or not text.strip():
        raise FleetgraphError(f"transpile: {what} {text!r} is empty; {example}")
    endpoints = [e.strip() for e in text.split(",")]
    for ep in endpoints:
        problem = endpoint_problem(ep)
        if problem:
            raise FleetgraphError(f"transpile: {what} {text!r} is malformed: {ep!r} {problem}; {example}")
    if len(set(endpoints)) != len(endpoints):
        raise FleetgraphError(f"transpile: {what} {text!r} lists an endpoint twice")
    return endpoints


@dataclass
class CollectivePlan:
    endpoints: list[str]
    rank: int
    buckets: list = field(default_factory=list)

    def __str__(self) -> str:
        lines = [f"CollectivePlan: {len(self.endpoints)} ranks, this is rank {self.rank} ({self.endpoints[self.rank]})"]
        for i, b in enumerate(self.buckets):
            lines.append(f"  bucket {i}: {len(b.grads)} gradients, {b.nbytes / 2**20:.1f} MiB {b.dtype}")
        return "\n".join(lines)


class DistributeTranspiler:
    def __init__(self, config: DistributeTranspilerConfig | None = None) -> None:
        self.config = config or DistributeTranspilerConfig()
        self.plan: DistPlan | CollectivePlan | None = None
        self._pserver_programs: dict[str, Program] = {}

    def transpile(
        self,
        trainer_id: int,
        program: Program | None = None,
        pservers: str = "127.0.0.1:6174",
        trainers=1,
        sync_mode: bool | None = None,
        startup_program: Program | None = None,
        current_endpoint: str = "127.0.0.1:6174",
    ) -> None:
        self.origin_program = program or default_main_program()
        self.startup_program = startup_program or default_startup_program()
        self._origin_startup = self.startup_program.clone()
        self.trainer_id = trainer_id
        if self.config.mode == "collective":
            self._transpile_collective(trainer_id, trainers, current_endpoint)
        elif self.config.mode == "pserver":
            self._transpile_pserver(trainer_id, pservers, trainers, sync_mode)
        else:
            raise FleetgraphError(
                f"transpile: config.mode expected 'pserver' or 'collective', got {self.config.mode!r}"
            )
        dump_if_requested(self, sync_mode)  # FLEETGRAPH_DUMP_DIR: every role's programs, the plan, a report

    def _transpile_pserver(self, trainer_id, pservers, trainers, sync_mode) -> None:
        endpoints = parse_endpoints(pservers)
        if not isinstance(trainers, int) or trainers < 1:
            raise FleetgraphError(f"transpile: trainers expected a positive int, got {trainers!r}")
        _check_rank(trainer_id, trainers, "trainer_id")
        split = self.config.split_method
        if split not in (RoundRobin, HashName):
            raise FleetgraphError(f"transpile: config.split_method expected RoundRobin or HashName, got {split!r}")
        self.mode = resolve_mode(self.config, sync_mode)
        self.plan = make_plan(
            self.origin_program,
            endpoints,
            trainers,
            mode=self.mode,
            slice_var_up=self.config.slice_var_up,
            min_block_size=self.config.min_block_size,
            split_method=split,
            k_steps=self.config.geo_sgd_need_push_nums,
        )
        self._trainer_program = build_trainer_program(
            self.origin_program, self.plan, trainer_id, runtime_split=self.config.runtime_split_send_recv
        )
        # fluid.io.save_persistables of this program asks its pservers
        self._trainer_program.dist_plan = RolePlan(self.plan, self.origin_program, trainer_id=trainer_id)
        startup = build_trainer_startup(self._origin_startup, self._trainer_program, self.plan, trainer_id)
        _replace_program(self.startup_program, startup)
        self.pserver_endpoints = endpoints

    def _transpile_collective(self, rank, trainers, current_endpoint) -> None:
        endpoints = parse_endpoints(trainers, "trainers")
        _check_rank(rank, len(endpoints), "trainer_id")
        if current_endpoint and current_endpoint != "127.0.0.1:6174" and current_endpoint != endpoints[rank]:
            raise FleetgraphError(
                f"transpile: current_endpoint {current_endpoint!r} is not rank {rank}'s endpoint {endpoints[rank]!r}"
            )
        main = insert_allreduce(self.origin_program, nranks=len(endpoints))
        buckets = []
        if self.config.fuse_all_reduce_ops:
            main, buckets = fuse_allreduce_with_plan(main, fuse_grad_size_in_MB=self.config.fuse_grad_size_in_MB)
        startup = collective_startup(self._origin_startup, nranks=len(endpoints), rank=rank, endpoints=endpoints)
        _replace_program(self.startup_program, startup)
        self._trainer_program = main
        self.plan = CollectivePlan(endpoints, rank, buckets)

    # -- Paddle's getters ------------------------------------------------------------------------
    def get_trainer_program(self, wait_port: bool = True) -> Program:
        self._check_transpiled()
        return self._trainer_program

    def get_trainer_startup_program(self) -> Program:
        self._check_transpiled()
        return self.startup_program

    def get_pserver_program(self, endpoint: str) -> Program:
        self._check_pserver_mode()
        if endpoint not in self._pserver_programs:
            main = build_pserver_program(self.origin_program, self.plan, endpoint)
            main.dist_plan = RolePlan(self.plan, self.origin_program, endpoint=endpoint)
            self._pserver_programs[endpoint] = main
        return self._pserver_programs[endpoint]

    def get_pserver_programs(self, endpoint: str) -> tuple[Program, Program]:
        main = self.get_pserver_program(endpoint)
        return main, self.get_startup_program(endpoint, main)

    def get_startup_program(
        self, endpoint: str, pserver_program: Program | None = None, startup_program: Program | None = None
    ) -> Program:
        self._check_pserver_mode()
        main = pserver_program or self.get_pserver_program(endpoint)
        return build_pserver_startup(
            startup_program or self._origin_startup, main, self.plan, endpoint, self.origin_program
        )

    # -- Paddle's var mappings (pserver mode): which blocks a parameter and its gradient became ----------
    @property
    def param_var_mapping(self) -> dict[str, list[Variable]]:
        """Each parameter -> its block variables ('w.block0', ...; the parameter itself when whole)."""
        self._check_pserver_mode()
        return {p.param: [self._block_var(b.name, b.shape, p.dtype) for b in p.blocks] for p in self._mapped()}

    @property
    def grad_var_mapping(self) -> dict[str, list[Variable]]:
        """Each gradient -> the block variables this trainer sends ('w@GRAD.block0.trainer_0', ...)."""
        self._check_pserver_mode()
        suffix = self.plan.grad_suffix_trainer(self.trainer_id)
        return {
            p.grad: [self._block_var(b.grad_name(p.grad, suffix), b.shape, p.dtype) for b in p.blocks]
            for p in self._mapped()
        }

    @property
    def param_grad_ep_mapping(self) -> dict[str, dict[str, list[Variable]]]:
        """Each pserver -> the parameter blocks it holds and the gradient blocks it receives from here,
        in the order they were dealt out."""
        self._check_pserver_mode()
        suffix = self.plan.grad_suffix_trainer(self.trainer_id)
        out = {ep: {"params": [], "grads": []} for ep in self.plan.endpoints}
        for p in self.plan.params:
            for b in p.blocks:
                out[b.endpoint]["params"].append(self._block_var(b.name, b.shape, p.dtype))
                out[b.endpoint]["grads"].append(self._block_var(b.grad_name(p.grad, suffix), b.shape, p.dtype))
        return out

    def _mapped(self):
        return sorted(self.plan.params, key=lambda p: p.param)

    def _block_var(self, name: str, shape, dtype) -> Variable:
        block = self._trainer_program.global_block()
        return block.var(name) if block.has_var(name) else Variable(block, name, shape, dtype)

    def _check_transpiled(self) -> None:
        if self.plan is None:
            raise FleetgraphError("DistributeTranspiler: call transpile() first")

    def _check_pserver_mode(self) -> None:
        self._check_transpiled()
        if not isinstance(self.plan, DistPlan):
            raise FleetgraphError("DistributeTranspiler: pserver programs exist only in mode 'pserver'")


def _check_rank(rank, count: int, what: str) -> None:
    if not isinstance(rank, int) or not 0 <= rank < count:
        raise FleetgraphError(f"transpile: {what} {rank!r} is out of range; expected 0 <= {what} < {count}")


def _replace_program(dst: Program, src: Program) -> None:
    """Make `dst` hold `src`'s blocks (the documented in-place update of the trainer's startup)."""
    dst.blocks = src.blocks
    dst.dist_plan = src.dist_plan
    for block in dst.blocks:
        block.program = dst
    dst.current_block_idx = 0
    dst._bump()
