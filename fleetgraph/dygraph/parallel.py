"""This process's place among the trainers and its collective ring, for data-parallel training in
dynamic mode (`paddle.distributed.init_parallel_env`); DataParallel, which wraps a Layer, is
distributed/parallel.py."""

from __future__ import annotations

import os

from ..ir import FleetgraphError
from .engine import run_op

RING_ID = 0


class ParallelEnv:
    """This process's place among the trainers, from the launcher's environment variables."""

    def __init__(self) -> None:
        self.rank = int(os.environ.get("PADDLE_TRAINER_ID", "0"))
        self.world_size = int(os.environ.get("PADDLE_TRAINERS_NUM", "1"))
        eps = os.environ.get("PADDLE_TRAINER_ENDPOINTS", "")
        self.trainer_endpoints = [e for e in eps.split(",") if e]
        self.current_endpoint = os.environ.get("PADDLE_CURRENT_ENDPOINT", "")
        self.local_rank = self.rank
        self.device_id = 0

    nranks = property(lambda self: self.world_size)
    local_rank_ = property(lambda self: self.local_rank)


def init_ring(rank: int, nranks: int, endpoints: list[str]) -> None:
    """Start this rank's collective ring (once; c_comm_init run eagerly)."""
    if nranks <= 1:
        return
    from ..executor.comm import process_comm

    if process_comm().has_ring(RING_ID):
        return
    if len(endpoints) != nranks:
        raise FleetgraphError(
            f"init_parallel_env: {len(endpoints)} trainer endpoints {endpoints}; expected one per trainer ({nranks}); "
            "start the script with python -m fleetgraph.distributed.launch"
        )
    attrs = {"nranks": nranks, "rank": rank, "ring_id": RING_ID, "endpoints": list(endpoints)}
    run_op("c_comm_init", {}, {}, attrs)


def ring_started() -> bool:
    """Whether this process has joined the trainers' ring (init_parallel_env)."""
    from ..executor.comm import process_comm

    return process_comm().has_ring(RING_ID)


def init_parallel_env() -> ParallelEnv:
    """`paddle.distributed.init_parallel_env()`: join the ring of the trainers the launcher started."""
    env = ParallelEnv()
    init_ring(env.rank, env.world_size, env.trainer_endpoints)
    return env


def get_rank() -> int:
    return ParallelEnv().rank


def get_world_size() -> int:
    return ParallelEnv().world_size
