"""Role makers: who this process is in the job, from the environment or from the user's arguments."""

from __future__ import annotations

import os
import secrets
import socket

from ....ir import FleetgraphError
from ...role import Role, RoleInfo, endpoint_problem, parse_role_env

__all__ = [
    "MPISymetricRoleMaker",
    "PaddleCloudRoleMaker",
    "Role",
    "RoleMakerBase",
    "SlurmRoleMaker",
    "UserDefinedRoleMaker",
]

# what mpirun (Open MPI, MPICH/Hydra, PMIx launchers such as srun --mpi=pmix) sets in every rank
MPI_ENV_VARS = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK")
ROLE_ENV_VARS = ("TRAINING_ROLE", "PADDLE_TRAINING_ROLE")


class RoleMakerBase:
    """The queries fleet asks a role maker, in Fluid's spelling and Paddle 2.x's (`_is_worker`)."""

    _is_collective = False
    _info: RoleInfo | None = None

    def generate_role(self) -> None:
        """Work out the role (once); fleet.init calls it."""

    def _role(self) -> RoleInfo:
        self.generate_role()
        if self._info is None:
            raise FleetgraphError(f"{type(self).__name__}: generate_role() set no role; expected it to set self._info")
        return self._info

    def is_worker(self) -> bool:
        return self._role().role == Role.WORKER

    def is_server(self) -> bool:
        return self._role().role == Role.SERVER

    def is_first_worker(self) -> bool:
        return self.is_worker() and self._role().current_id == 0

    def worker_index(self) -> int:
        return self._role().current_id if self.is_worker() else 0

    def server_index(self) -> int:
        return self._role().current_id if self.is_server() else 0

    def role_id(self) -> int:
        return self._role().current_id

    def worker_num(self) -> int:
        return self._role().worker_num

    def server_num(self) -> int:
        return len(self._role().server_endpoints)

    def get_trainer_endpoints(self) -> list[str]:
        return list(self._role().worker_endpoints)

    def get_pserver_endpoints(self) -> list[str]:
        return list(self._role().server_endpoints)

    def current_endpoint(self) -> str:
        return self._role().current_endpoint

    def __repr__(self) -> str:
        info = self._info
        if info is None:
            return f"{type(self).__name__}(role not generated yet)"
        kind = "worker" if info.role == Role.WORKER else "server"
        mode = "collective" if info.is_collective else "parameter-server"
        return (
            f"{type(self).__name__}({mode} {kind} {info.current_id}, {info.worker_num} workers, "
            f"servers {list(info.server_endpoints)})"
        )

    def _generate_role(self) -> None:  # Paddle 2.x's spelling; subclasses override generate_role
        self.generate_role()

    # Paddle 2.x spells the queries with a leading underscore
    _is_worker, _is_server, _is_first_worker = is_worker, is_server, is_first_worker
    _worker_index, _server_index, _role_id = worker_index, server_index, role_id
    _worker_num, _server_num = worker_num, server_num
    _get_trainer_endpoints, _get_pserver_endpoints = get_trainer_endpoints, get_pserver_endpoints


class PaddleCloudRoleMaker(RoleMakerBase):
    """The role from the environment variables a launcher or scheduler sets (either spelling; see
    `fleetgraph.distributed.role`). Collective mode with no variables set is a single rank."""

    def __init__(self, is_collective: bool = False, **kwargs) -> None:
        self._is_collective = bool(is_collective)
        self._info = None

    def generate_role(self) -> None:
        if self._info is None:
            self._info = parse_role_env(os.environ, self._is_collective)


class MPISymetricRoleMaker(RoleMakerBase):
    """The role under `mpirun`, as Paddle 1.x's: ranks pair up, each pair a server (the even rank)
    and a worker (the odd rank), with index rank // 2. The endpoints are gathered over MPI: each
    rank takes a free port on its host's address and the ranks all-gather them, so several pairs
    may share a host. Without a FLEETGRAPH_JOB_SECRET, rank 0 makes one and broadcasts it (MPI
    reaches only the job's own processes), so the job authenticates. Needs mpi4py
    (`pip install fleetgraph[mpi]`) and an MPI (`apt-get install openmpi-bin`)."""

    def __init__(self) -> None:
        self._info = None

    def generate_role(self) -> None:
        if self._info is not None:
            return
        try:
            from mpi4py import MPI
        except ImportError:
            raise FleetgraphError(
                "MPISymetricRoleMaker needs mpi4py: pip install 'fleetgraph[mpi]' (and an MPI, e.g. apt-get "
                "install openmpi-bin); or give fleet.init a PaddleCloudRoleMaker or UserDefinedRoleMaker"
            ) from None
        comm = MPI.COMM_WORLD
        rank, size = comm.Get_rank(), comm.Get_size()
        if size < 2 or size % 2:
            raise FleetgraphError(
                f"MPISymetricRoleMaker: {size} MPI ranks; expected an even number (a server and a worker per "
                "pair), e.g. mpirun -np 4"
            )
        from ....executor.comm.security import SECRET_ENV

        secret = comm.bcast(os.environ.get(SECRET_ENV) or secrets.token_hex(32) if rank == 0 else None, root=0)
        os.environ.setdefault(SECRET_ENV, secret)
        ip = _host_address()
        endpoints = comm.allgather(f"{ip}:{_free_port(ip)}")
        servers, workers = tuple(endpoints[::2]), tuple(endpoints[1::2])
        role = Role.SERVER if rank % 2 == 0 else Role.WORKER
        self._info = RoleInfo(role, rank // 2, len(workers), servers, workers, endpoints[rank], False)


class SlurmRoleMaker(RoleMakerBase):
    """The role of a task started by Slurm's `srun`, from SLURM_PROCID, SLURM_NTASKS,
    SLURM_JOB_NODELIST and SLURM_TASKS_PER_NODE: tasks pair up as under MPI (even tasks serve, odd
    ones train, a pair per procid // 2). Slurm places tasks in blocks, node by node, so every task
    works out every endpoint alone: the host of task i from the node list, its port
    FLEETGRAPH_SLURM_PORT (default 6170) plus its index among its node's tasks. Jobs on several
    nodes need FLEETGRAPH_JOB_SECRET in the environment srun passes on."""

    def __init__(self, environ=None) -> None:
        self._environ = os.environ if environ is None else environ
        self._info = None

    def generate_role(self) -> None:
        if self._info is not None:
            return
        env = self._environ
        try:
            rank, size = int(env["SLURM_PROCID"]), int(env["SLURM_NTASKS"])
            hosts = expand_hostlist(env["SLURM_JOB_NODELIST"])
            counts = tasks_per_node(env.get("SLURM_TASKS_PER_NODE", ""), size, len(hosts))
            base = int(env.get("FLEETGRAPH_SLURM_PORT", "6170"))
        except (KeyError, ValueError) as e:
            raise FleetgraphError(
                f"SlurmRoleMaker: {e}; expected srun's SLURM_PROCID, SLURM_NTASKS, SLURM_JOB_NODELIST and "
                "SLURM_TASKS_PER_NODE (e.g. 1, 4, node[1-2], 2(x2)) and an integer FLEETGRAPH_SLURM_PORT"
            ) from None
        if size < 2 or size % 2 or not 0 <= rank < size:
            raise FleetgraphError(
                f"SlurmRoleMaker: task {rank} of {size}; expected an even number of tasks (a server and a worker "
                "per pair), e.g. srun -n 4"
            )
        endpoints = [f"{host}:{base + local}" for host, count in zip(hosts, counts) for local in range(count)]
        servers, workers = tuple(endpoints[::2]), tuple(endpoints[1::2])
        role = Role.SERVER if rank % 2 == 0 else Role.WORKER
        self._info = RoleInfo(role, rank // 2, len(workers), servers, workers, endpoints[rank], False)


def expand_hostlist(text: str) -> list[str]:
    """Slurm's compressed host list: 'node[01-03,07],gpu1' -> node01, node02, node03, node07, gpu1
    (bracket groups in one name multiply out, zero padding kept)."""
    names, depth, start = [], 0, 0
    for i, ch in enumerate(text + ","):
        depth += {"[": 1, "]": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            if text[start:i].strip():
                names.extend(_expand_name(text[start:i].strip()))
            start = i + 1
    if depth != 0 or not names:
        raise ValueError(f"SLURM_JOB_NODELIST={text!r} is not a Slurm host list")
    return names


def _expand_name(name: str) -> list[str]:
    open_at = name.find("[")
    if open_at < 0:
        return [name]
    close_at = name.index("]", open_at)
    head, tail = name[:open_at], _expand_name(name[close_at + 1 :])
    out = []
    for part in name[open_at + 1 : close_at].split(","):
        lo, _, hi = part.partition("-")
        width = len(lo)
        for n in range(int(lo), int(hi or lo) + 1):
            out.extend(f"{head}{n:0{width}d}{rest}" for rest in tail)
    return out


def tasks_per_node(text: str, ntasks: int, nodes: int) -> list[int]:
    """SLURM_TASKS_PER_NODE ('2(x3),1') as a count per node; unset, the tasks spread evenly."""
    if not text:
        return [ntasks // nodes + (i < ntasks % nodes) for i in range(nodes)]
    counts = []
    for part in text.split(","):
        count, _, times = part.partition("(x")
        counts += [int(count)] * (int(times.rstrip(")")) if times else 1)
    if len(counts) != nodes or sum(counts) != ntasks:
        raise ValueError(f"SLURM_TASKS_PER_NODE={text!r} does not place {ntasks} tasks on {nodes} nodes")
    return counts


def in_slurm_job(environ=os.environ) -> bool:
    """Started by srun as one of several tasks, with no role variables of Paddle's set."""
    several = environ.get("SLURM_NTASKS", "1") not in ("", "1")
    return bool(environ.get("SLURM_PROCID")) and several and not any(environ.get(v) for v in ROLE_ENV_VARS)


def _host_address() -> str:
    """This host's address as the other hosts see it (as Paddle's role maker finds it); loopback
    when the host name does not resolve."""
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return "127.0.0.1"


def _free_port(ip: str) -> int:
    with socket.socket() as s:
        s.bind((ip, 0))
        return s.getsockname()[1]


def in_mpi_job(environ=os.environ) -> bool:
    """Started by an MPI launcher, with no role variables of Paddle's set: `fleet.init()` then takes
    its role from MPI, as Paddle 1.x's fleet does."""
    return any(environ.get(v) for v in MPI_ENV_VARS) and not any(environ.get(v) for v in ROLE_ENV_VARS)


class UserDefinedRoleMaker(RoleMakerBase):
    """The role given as arguments: `UserDefinedRoleMaker(current_id=0, role=Role.WORKER,
    worker_num=2, server_endpoints=["127.0.0.1:6001", "127.0.0.1:6002"])`; collective mode takes
    `worker_endpoints` instead of servers."""

    def __init__(
        self,
        current_id: int = 0,
        role: int = Role.WORKER,
        worker_num: int = 0,
        server_endpoints=None,
        worker_endpoints=None,
        is_collective: bool = False,
        init_gloo: bool = False,
    ) -> None:
        self._is_collective = bool(is_collective)
        servers = _endpoint_list(server_endpoints, "server_endpoints")
        workers = _endpoint_list(worker_endpoints, "worker_endpoints")
        if role not in (Role.WORKER, Role.SERVER):
            raise FleetgraphError(f"UserDefinedRoleMaker: role expected Role.WORKER or Role.SERVER, got {role!r}")
        if is_collective:
            if role != Role.WORKER:
                raise FleetgraphError("UserDefinedRoleMaker: collective mode has workers only; got role=Role.SERVER")
            worker_num = worker_num or len(workers) or 1
            if workers and len(workers) != worker_num:
                raise FleetgraphError(
                    f"UserDefinedRoleMaker: worker_num={worker_num} but {len(workers)} worker_endpoints; expected one "
                    "endpoint per worker"
                )
        elif not servers:
            raise FleetgraphError(
                "UserDefinedRoleMaker: server_endpoints is empty; expected the servers' ip:port list, "
                "e.g. server_endpoints=['127.0.0.1:6001', '127.0.0.1:6002']"
            )
        if isinstance(worker_num, bool) or not isinstance(worker_num, int) or worker_num < 1:
            raise FleetgraphError(f"UserDefinedRoleMaker: worker_num expected a positive int, got {worker_num!r}")
        count, what = (worker_num, "worker_num") if role == Role.WORKER else (len(servers), "len(server_endpoints)")
        if isinstance(current_id, bool) or not isinstance(current_id, int) or not 0 <= current_id < count:
            raise FleetgraphError(
                f"UserDefinedRoleMaker: current_id expected an int in [0, {count}) ({what}={count}), got {current_id!r}"
            )
        if role == Role.SERVER:
            current = servers[current_id]
        elif workers:
            current = workers[current_id]
        else:
            current = "127.0.0.1:6170" if is_collective and worker_num == 1 else ""
        if is_collective and not workers:
            if worker_num > 1:
                raise FleetgraphError(
                    f"UserDefinedRoleMaker: collective mode with worker_num={worker_num} needs worker_endpoints, "
                    "e.g. worker_endpoints=['127.0.0.1:6170', '127.0.0.1:6171']"
                )
            workers = (current,)
        self._info = RoleInfo(role, current_id, worker_num, servers, workers, current, self._is_collective)


def _endpoint_list(value, what: str) -> tuple[str, ...]:
    if value is None:
        return ()
    items = [e.strip() for e in value.split(",")] if isinstance(value, str) else list(value)
    problem = endpoint_problem(items)
    if problem:
        raise FleetgraphError(
            f"UserDefinedRoleMaker: {what} {value!r}: {problem}; expected a list of 'ip:port', "
            "e.g. ['127.0.0.1:6001', '127.0.0.1:6002']"
        )
    return tuple(items)
