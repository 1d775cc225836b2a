"""Which role this process plays (worker or server, its index, its peers), read from the environment.

Both spellings the seeds use are read:

- Fleet's (what `paddle.distributed.launch` sets): `TRAINING_ROLE` (TRAINER / PSERVER),
  `PADDLE_PSERVERS_IP_PORT_LIST`, `PADDLE_TRAINER_ENDPOINTS`, `PADDLE_TRAINERS_NUM`,
  `PADDLE_TRAINER_ID`, and for a server `POD_IP` + `PADDLE_PORT`; collective ranks use
  `PADDLE_TRAINER_ENDPOINTS`, `PADDLE_TRAINER_ID` and `PADDLE_CURRENT_ENDPOINT`.
- Fluid's (seed 001's table): `PADDLE_TRAINING_ROLE`, `PADDLE_PSERVER_IPS` (a comma list, spaces
  allowed), `PADDLE_PSERVER_PORT` (6174 when unset, as in seed 001's script), `PADDLE_TRAINERS`,
  `PADDLE_TRAINER_ID`, and for a server `PADDLE_CURRENT_IP`.

The role variable picks the spelling: `TRAINING_ROLE` when it is set, else `PADDLE_TRAINING_ROLE`.
A missing or malformed value is one `RoleEnvError` naming the variable with an example value.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..ir import FleetgraphError
from ..ir.endpoints import endpoint_problem as single_endpoint_problem


class Role:
    """Paddle's role constants (`role_maker.Role.WORKER`)."""

    WORKER = 1
    SERVER = 2


class RoleEnvError(FleetgraphError, ValueError):
    """A role variable of the environment is missing or malformed."""


@dataclass(frozen=True)
class RoleInfo:
    """Everything fleet needs to know about this process and its peers."""

    role: int
    current_id: int  # worker index for a worker, server index for a server
    worker_num: int
    server_endpoints: tuple[str, ...]
    worker_endpoints: tuple[str, ...]
    current_endpoint: str  # this process's endpoint; '' for a worker whose endpoint nobody gave
    is_collective: bool


DEFAULT_COLLECTIVE_ENDPOINT = "127.0.0.1:6170"
FLUID_DEFAULT_PORT = "6174"

_EXAMPLES = {
    "TRAINING_ROLE": "TRAINING_ROLE=TRAINER",
    "PADDLE_TRAINING_ROLE": "PADDLE_TRAINING_ROLE=TRAINER",
    "PADDLE_PSERVERS_IP_PORT_LIST": "PADDLE_PSERVERS_IP_PORT_LIST=127.0.0.1:6174,127.0.0.1:6175",
    "PADDLE_TRAINER_ENDPOINTS": "PADDLE_TRAINER_ENDPOINTS=127.0.0.1:6170,127.0.0.1:6171",
    "PADDLE_TRAINERS_NUM": "PADDLE_TRAINERS_NUM=2",
    "PADDLE_TRAINER_ID": "PADDLE_TRAINER_ID=0",
    "PADDLE_PORT": "PADDLE_PORT=6174",
    "POD_IP": "POD_IP=127.0.0.1",
    "PADDLE_CURRENT_ENDPOINT": "PADDLE_CURRENT_ENDPOINT=127.0.0.1:6170",
    "PADDLE_PSERVER_IPS": "PADDLE_PSERVER_IPS=ps0.example.com,ps1.example.com",
    "PADDLE_PSERVER_PORT": "PADDLE_PSERVER_PORT=6174",
    "PADDLE_TRAINERS": "PADDLE_TRAINERS=2",
    "PADDLE_CURRENT_IP": "PADDLE_CURRENT_IP=ps0.example.com",
}


class _Env:
    """Typed reads of role variables, each failing with one error that names the variable."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self.environ = environ

    def has(self, name: str) -> bool:
        return bool(self.environ.get(name, "").strip())

    def error(self, name: str, expected: str, why: str = "") -> RoleEnvError:
        raw = self.environ.get(name)
        shown = f"{name}={raw!r}" if raw is not None and raw.strip() else f"{name} is not set"
        return RoleEnvError(f"{shown}: expected {expected}, e.g. {_EXAMPLES[name]}{why}")

    def text(self, name: str, expected: str, default: str | None = None) -> str:
        value = self.environ.get(name, "").strip()
        if value:
            return value
        if default is not None:
            return default
        raise self.error(name, expected)

    def positive_int(self, name: str, default: int | None = None) -> int:
        value = self.text(name, "a positive integer", None if default is None else str(default))
        if not value.isdigit() or int(value) < 1:
            raise self.error(name, "a positive integer")
        return int(value)

    def index(self, name: str, count: int, count_name: str) -> int:
        """An index in [0, count); it may be left unset only when count is 1."""
        expected = f"an integer in [0, {count}) ({count_name}={count})"
        value = self.text(name, expected, "0" if count == 1 else None)
        if not value.isdigit() or int(value) >= count:
            raise self.error(name, expected)
        return int(value)

    def port(self, name: str, default: str | None = None) -> str:
        value = self.text(name, "a port number in 1..65535", default)
        if not value.isdigit() or not 0 < int(value) < 65536:
            raise self.error(name, "a port number in 1..65535")
        return value

    def role(self, name: str) -> int:
        value = self.text(name, "TRAINER or PSERVER").upper()
        if value not in ("TRAINER", "PSERVER"):
            raise self.error(name, "TRAINER or PSERVER")
        return Role.WORKER if value == "TRAINER" else Role.SERVER

    def endpoints(self, name: str) -> tuple[str, ...]:
        expected = "a comma list of ip:port"
        items = [e.strip() for e in self.text(name, expected).split(",")]
        bad = endpoint_problem(items)
        if bad:
            raise self.error(name, expected, f" ({bad})")
        return tuple(items)

    def hosts(self, name: str) -> list[str]:
        expected = "a comma list of IP addresses or host names"
        items = [h.strip() for h in self.text(name, expected).split(",")]
        if any(not h or ":" in h for h in items):
            raise self.error(name, expected, " (no empty items, no ports: the port is PADDLE_PSERVER_PORT)")
        return items


def endpoint_problem(endpoints: Sequence[str]) -> str:
    """What is wrong with a list of 'ip:port' endpoints, or '' when nothing is."""
    for ep in endpoints:
        problem = single_endpoint_problem(ep)
        if problem:
            return f"{ep!r} {problem}"
    if len(set(endpoints)) != len(endpoints):
        return "an endpoint is listed twice"
    return ""


def parse_role_env(environ: Mapping[str, str], is_collective: bool = False) -> RoleInfo:
    """This process's role from the environment, in either spelling; see the module docstring."""
    env = _Env(environ)
    if is_collective:
        return _collective(env)
    if env.has("TRAINING_ROLE"):
        if env.has("PADDLE_TRAINING_ROLE") and env.role("PADDLE_TRAINING_ROLE") != env.role("TRAINING_ROLE"):
            raise RoleEnvError(
                f"TRAINING_ROLE={environ['TRAINING_ROLE']!r} and PADDLE_TRAINING_ROLE="
                f"{environ['PADDLE_TRAINING_ROLE']!r} disagree: expected one role, e.g. {_EXAMPLES['TRAINING_ROLE']}"
            )
        return _fleet_ps(env)
    if env.has("PADDLE_TRAINING_ROLE"):
        return _fluid_ps(env)
    raise RoleEnvError(
        "TRAINING_ROLE is not set: expected TRAINER or PSERVER, e.g. TRAINING_ROLE=TRAINER "
        "(Fluid scripts: PADDLE_TRAINING_ROLE=TRAINER); for collective training use fleet.init(is_collective=True)"
    )


def _fleet_ps(env: _Env) -> RoleInfo:
    role = env.role("TRAINING_ROLE")
    servers = env.endpoints("PADDLE_PSERVERS_IP_PORT_LIST")
    workers_num = env.positive_int("PADDLE_TRAINERS_NUM")
    workers = env.endpoints("PADDLE_TRAINER_ENDPOINTS") if env.has("PADDLE_TRAINER_ENDPOINTS") else ()
    if workers and len(workers) != workers_num:  # Paddle's parameter-server role maker reads only the count
        warnings.warn(
            f"PADDLE_TRAINER_ENDPOINTS lists {len(workers)} endpoints but PADDLE_TRAINERS_NUM={workers_num}: "
            f"{workers_num} trainers, as Paddle's PaddleCloudRoleMaker counts them",
            stacklevel=2,
        )
    if role == Role.WORKER:
        index = env.index("PADDLE_TRAINER_ID", workers_num, "PADDLE_TRAINERS_NUM")
        return RoleInfo(
            role, index, workers_num, servers, workers, workers[index] if index < len(workers) else "", False
        )
    endpoint = f"{env.text('POD_IP', 'this server IP address')}:{env.port('PADDLE_PORT')}"
    return _server(role, endpoint, workers_num, servers, workers, "POD_IP:PADDLE_PORT", "PADDLE_PSERVERS_IP_PORT_LIST")


def _fluid_ps(env: _Env) -> RoleInfo:
    role = env.role("PADDLE_TRAINING_ROLE")
    port = env.port("PADDLE_PSERVER_PORT", FLUID_DEFAULT_PORT)
    hosts = env.hosts("PADDLE_PSERVER_IPS")
    servers = tuple(f"{h}:{port}" for h in hosts)
    if len(set(servers)) != len(servers):
        raise env.error("PADDLE_PSERVER_IPS", "distinct hosts", " (a host is listed twice)")
    workers_num = env.positive_int("PADDLE_TRAINERS")
    if role == Role.WORKER:
        index = env.index("PADDLE_TRAINER_ID", workers_num, "PADDLE_TRAINERS")
        return RoleInfo(role, index, workers_num, servers, (), "", False)
    endpoint = f"{env.text('PADDLE_CURRENT_IP', 'this server IP address or host name')}:{port}"
    return _server(
        role, endpoint, workers_num, servers, (), "PADDLE_CURRENT_IP:PADDLE_PSERVER_PORT", "PADDLE_PSERVER_IPS"
    )


def _server(role, endpoint, workers_num, servers, workers, own_names: str, list_name: str) -> RoleInfo:
    if endpoint not in servers:
        raise RoleEnvError(
            f"{own_names} = {endpoint!r} is not one of {list_name} {list(servers)}: expected this server's "
            f"own endpoint, e.g. {_EXAMPLES[list_name]}"
        )
    return RoleInfo(role, servers.index(endpoint), workers_num, servers, workers, endpoint, False)


def _collective(env: _Env) -> RoleInfo:
    """Ranks from PADDLE_TRAINER_ENDPOINTS; with none given, a single rank (rank 0 of 1)."""
    count = env.positive_int("PADDLE_TRAINERS_NUM") if env.has("PADDLE_TRAINERS_NUM") else None
    if env.has("PADDLE_TRAINER_ENDPOINTS"):
        endpoints = env.endpoints("PADDLE_TRAINER_ENDPOINTS")
    elif count in (None, 1):
        own = env.endpoints("PADDLE_CURRENT_ENDPOINT") if env.has("PADDLE_CURRENT_ENDPOINT") else ()
        endpoints = own[:1] or (DEFAULT_COLLECTIVE_ENDPOINT,)
    else:
        raise env.error("PADDLE_TRAINER_ENDPOINTS", f"one endpoint per rank (PADDLE_TRAINERS_NUM={count})")
    if count is not None and count != len(endpoints):  # Paddle's collective role maker counts the endpoints
        warnings.warn(
            f"PADDLE_TRAINERS_NUM={count} but PADDLE_TRAINER_ENDPOINTS lists {len(endpoints)} endpoints: "
            f"{len(endpoints)} ranks, as Paddle's PaddleCloudRoleMaker counts them",
            stacklevel=2,
        )
    rank = env.index("PADDLE_TRAINER_ID", len(endpoints), "the number of PADDLE_TRAINER_ENDPOINTS")
    if env.has("PADDLE_CURRENT_ENDPOINT") and env.text("PADDLE_CURRENT_ENDPOINT", "") != endpoints[rank]:
        raise env.error(
            "PADDLE_CURRENT_ENDPOINT", f"rank {rank}'s entry of PADDLE_TRAINER_ENDPOINTS, {endpoints[rank]}"
        )
    return RoleInfo(Role.WORKER, rank, len(endpoints), (), endpoints, endpoints[rank], True)
