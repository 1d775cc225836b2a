"""`python -m fleetgraph.distributed.launch`: start every local role of a job with its environment, as Paddle's
launcher does, and stop them all when one fails, when the workers are done, or when the launcher is stopped.

Parameter-server mode (`--server_num/--worker_num` or `--servers/--workers`) starts servers and workers with
Fleet's and Fluid's role variables; collective mode (`--nproc_per_node` or `--gpus`, with `--ips` for several
hosts) starts one trainer per rank. Logs go to `log/serverlog.N`, `log/workerlog.N` and `log/endpoints.log`.
"""

from __future__ import annotations

import argparse
import functools
import os
import secrets
import signal
import socket
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from ..executor.comm.security import SECRET_ENV
from ..executor.native import THREAD_POOL_VARS
from ..ir.endpoints import endpoint_problem, host_problem, is_loopback
from ..utils.profiler import clear_traces, merge_traces
from .launch_utils import STOP_SIGNALS, LaunchError, ProcSpec, Supervisor, env_table, grace_seconds, log

PS_ARGS = ("server_num", "worker_num", "servers", "workers")
DEFAULT_PS_PORT = 6170  # first port when endpoints on other hosts must be agreed without talking
DEFAULT_COLLECTIVE_PORT = 6070


@dataclass(frozen=True)
class Plan:
    """The whole job (every endpoint) and the processes this host starts."""

    mode: str  # "ps" or "collective"
    servers: list[str]
    workers: list[str]
    local: list[ProcSpec]


def launch(argv: Sequence[str] | None = None, *, ps_launcher: bool = False) -> int:
    """Run a job from command-line arguments; the exit status (0 when every worker succeeded)."""
    try:
        args = parse_args(argv, ps_launcher=ps_launcher)
    except SystemExit as exc:  # --help, or an argparse error already printed
        return exc.code if isinstance(exc.code, int) else 2
    try:
        plan = make_plan(args, ps_launcher=ps_launcher)
        grace = grace_seconds()
    except LaunchError as exc:
        print(f"launch: {exc}", file=sys.stderr)
        return 2
    try:
        os.makedirs(args.log_dir, exist_ok=True)
        _write_endpoints(args.log_dir, plan)
    except OSError as exc:
        print(f"launch: --log_dir {args.log_dir!r}: {exc}", file=sys.stderr)
        return 2
    _print_config(args, plan)
    stream = next((s.name for s in plan.local if s.role == "worker"), None)
    command = [sys.executable, "-u", args.training_script, *args.training_script_args]
    supervisor = Supervisor(command, args.log_dir, stream_name=stream, grace_s=grace, secret_env=_job_secret(plan))
    previous = _install_handlers(supervisor.on_signal)
    clear_traces(args.log_dir)
    try:
        supervisor.start(plan.local)
        return supervisor.watch()
    finally:
        supervisor.stop_all()  # also on any exception in the launcher
        _restore_handlers(previous)
        merged = merge_traces(args.log_dir)  # the processes that profiled: one trace for the job
        if merged:
            print(f"launch: the processes' profiles are merged into {merged}", file=sys.stderr)


def main() -> None:
    sys.exit(launch())


def _job_secret(plan: Plan) -> dict[str, str]:
    """FLEETGRAPH_JOB_SECRET for the children (executor/comm/security.py): the user's, passed on as it
    is; else a fresh one when every role of the job is on this host; else none, and the roles on
    other hosts' addresses refuse to start without it, saying so."""
    if os.environ.get(SECRET_ENV) or not all(_is_local(_host(e), None) for e in plan.servers + plan.workers):
        return {}
    return {SECRET_ENV: secrets.token_hex(32)}


def parse_args(argv: Sequence[str] | None = None, *, ps_launcher: bool = False) -> argparse.Namespace:
    """The launcher's arguments (argparse exits on a bad one)."""
    return _parser(ps_launcher).parse_args(argv)


def _parser(ps_launcher: bool) -> argparse.ArgumentParser:
    module = "launch_ps" if ps_launcher else "launch"
    p = argparse.ArgumentParser(
        prog=f"python -m fleetgraph.distributed.{module}",
        description="Start the local processes of a distributed training job with their role environment.",
        allow_abbrev=False,
    )
    ps = "2" if ps_launcher else "1 when the other is given"
    p.add_argument("--server_num", type=_positive, help=f"parameter servers on this host (default {ps})")
    p.add_argument("--worker_num", type=_positive, help=f"workers on this host (default {ps})")
    p.add_argument("--servers", default="", help="every server, ip[:port],... (several hosts)")
    p.add_argument("--workers", default="", help="every worker, ip[:port],... (several hosts)")
    p.add_argument("--nproc_per_node", type=_positive, help="collective: processes per host")
    p.add_argument("--gpus", "--selected_gpus", dest="gpus", help="GPU ids, one process each: 0,1")
    p.add_argument("--ips", "--cluster_node_ips", dest="ips", default="127.0.0.1", help="collective hosts")
    p.add_argument("--node_ip", help="this host's address in --ips/--servers/--workers (default: detected)")
    p.add_argument("--log_dir", default="logs" if ps_launcher else "log")
    p.add_argument("--started_port", "--start_port", dest="started_port", type=_positive, help="first port")
    p.add_argument("training_script")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text}")
    return value


def make_plan(args: argparse.Namespace, *, ps_launcher: bool = False) -> Plan:
    """Every endpoint of the job and the environment of each local process."""
    if not os.path.isfile(args.training_script):
        raise LaunchError(f"training_script {args.training_script!r}: no such file")
    if ps_launcher or any(getattr(args, a) for a in PS_ARGS):
        plan = _ps_plan(args, default_count=2 if ps_launcher else 1)
    else:
        plan = _collective_plan(args)
    if args.gpus and not _gpu_devices():  # fall back to the CPU: the same processes, which CPUPlace runs
        print(
            f"launch: warning: --gpus {args.gpus} but this host shows no NVIDIA GPU (no /dev/nvidiaN); starting "
            f"the {len(plan.local)} local process(es) to run on the CPU. Each still gets FLAGS_selected_gpus, as "
            "Paddle's launcher sets it, but a script must use paddle.CPUPlace() here: CUDAPlace raises, saying why",
            file=sys.stderr,
        )
    _share_cores(plan.local)
    return plan


def _share_cores(local: list[ProcSpec]) -> None:
    """Several processes on one host: each one's math library gets its share of the cores (the user's
    own setting wins), as torchrun does; a pool per process as wide as the host makes them thrash."""
    if len(local) < 2:
        return
    share = str(max(1, (os.cpu_count() or 1) // len(local)))
    for spec in local:
        for name in THREAD_POOL_VARS:
            if name not in os.environ:
                spec.env[name] = share


# -- parameter-server mode ------------------------------------------------------------------------------------------


def _ps_plan(args: argparse.Namespace, default_count: int) -> Plan:
    if args.nproc_per_node:
        raise LaunchError("--nproc_per_node applies to collective mode; give --worker_num in parameter-server mode")
    if len(_split(args.ips)) > 1:
        raise LaunchError("--ips applies to collective mode; on several hosts give --servers and --workers")
    servers = _ps_entries(args.servers, args.server_num, "server", default_count)
    workers = _ps_entries(args.workers, args.worker_num, "worker", default_count)
    if not args.servers and args.started_port is None and len(servers) > 1:
        servers = _loopback_servers(len(servers))
    everyone = _fill_ports(servers + workers, args.started_port, DEFAULT_PS_PORT, args.node_ip)
    servers, workers = everyone[: len(servers)], everyone[len(servers) :]
    gpus = _split(args.gpus)
    local: list[ProcSpec] = []
    for i, ep in enumerate(servers):
        if _is_local(_host(ep), args.node_ip):
            env = _ps_env("PSERVER", ep, servers, workers)
            local.append(ProcSpec(f"server.{i}", "server", f"serverlog.{i}", env))
    for i, ep in enumerate(workers):
        if _is_local(_host(ep), args.node_ip):
            env = _ps_env("TRAINER", ep, servers, workers, trainer_id=i)
            if gpus:
                env["FLAGS_selected_gpus"] = gpus[sum(s.role == "worker" for s in local) % len(gpus)]
            local.append(ProcSpec(f"worker.{i}", "worker", f"workerlog.{i}", env))
    if not local:
        raise LaunchError(f"no server or worker is on this host; {_local_hint()}")
    return Plan("ps", servers, workers, local)


def _loopback_servers(count: int) -> list[str]:
    """Servers on one host: 127.0.0.1, 127.0.0.2, ... on one port (free on every local address), so
    that Fluid scripts, which build every endpoint from PADDLE_PSERVER_IPS and one
    PADDLE_PSERVER_PORT, reach each of them. Linux routes all of 127/8 to the loopback device."""
    port = _free_ports(1)[0]
    return [f"127.0.0.{i + 1}:{port}" for i in range(count)]


def _ps_entries(listed: str, count: int | None, role: str, default: int) -> list[str]:
    entries = _split(listed)
    if entries and count is not None and count != len(entries):
        raise LaunchError(f"--{role}_num: expected {len(entries)} (the length of --{role}s), got {count}")
    if not entries:
        entries = ["127.0.0.1"] * (count or default)
    return entries


def _ps_env(role: str, endpoint: str, servers: list[str], workers: list[str], trainer_id: int = 0) -> dict:
    """Fleet's spelling, then Fluid's (seed 001), of one parameter-server role."""
    ip, port = endpoint.rsplit(":", 1)
    server_ports = {e.rsplit(":", 1)[1] for e in servers}
    env = {"TRAINING_ROLE": role, "PADDLE_TRAINING_ROLE": role}
    if role == "TRAINER":
        env["PADDLE_TRAINER_ID"] = str(trainer_id)
    env |= {
        "PADDLE_PSERVERS_IP_PORT_LIST": ",".join(servers),
        "PADDLE_TRAINER_ENDPOINTS": ",".join(workers),
        "PADDLE_TRAINERS_NUM": str(len(workers)),
        "PADDLE_PORT": port,
        "POD_IP": ip,
    }
    env["PADDLE_CURRENT_ENDPOINT"] = endpoint
    env |= {"PADDLE_PSERVER_IPS": ",".join(_host(e) for e in servers)}
    if len(server_ports) == 1:  # Fluid scripts build every endpoint from one shared port
        env["PADDLE_PSERVER_PORT"] = server_ports.pop()
    env |= {"PADDLE_TRAINERS": str(len(workers)), "PADDLE_CURRENT_IP": ip}
    return env


# -- collective mode ------------------------------------------------------------------------------------------------


def _collective_plan(args: argparse.Namespace) -> Plan:
    ips = _split(args.ips)
    if not ips:
        raise LaunchError("--ips: expected one or more hosts, got ''")
    if len(set(ips)) != len(ips):
        raise LaunchError(f"--ips: expected distinct hosts, got {args.ips}")
    groups = _gpu_groups(args.nproc_per_node, _split(args.gpus))
    per_host = [ip for ip in ips for _ in groups]
    workers = _fill_ports(per_host, args.started_port, DEFAULT_COLLECTIVE_PORT, args.node_ip)
    local: list[ProcSpec] = []
    for rank, ep in enumerate(workers):
        if not _is_local(_host(ep), args.node_ip):
            continue
        ip, port = ep.rsplit(":", 1)
        env = {
            "PADDLE_TRAINER_ID": str(rank),
            "PADDLE_CURRENT_ENDPOINT": ep,
            "PADDLE_TRAINER_ENDPOINTS": ",".join(workers),
            "PADDLE_TRAINERS_NUM": str(len(workers)),
        }
        if groups[rank % len(groups)]:
            env["FLAGS_selected_gpus"] = groups[rank % len(groups)]
        env["TRAINING_ROLE"] = "TRAINER"
        # Fluid's spellings, as for parameter-server roles
        env |= {"PADDLE_TRAINING_ROLE": "TRAINER", "PADDLE_TRAINERS": str(len(workers))}
        env |= {"PADDLE_CURRENT_IP": ip, "POD_IP": ip, "PADDLE_PORT": port}
        local.append(ProcSpec(f"worker.{rank}", "worker", f"workerlog.{rank}", env))
    if not local:
        raise LaunchError(f"none of --ips {args.ips} is this host; {_local_hint()}")
    return Plan("collective", [], workers, local)


def _gpu_groups(nproc: int | None, gpus: list[str]) -> list[str]:
    """FLAGS_selected_gpus of each local process ('' where none): one GPU each, a share, or several sharing one."""
    gpus = gpus or [str(i) for i in range(_visible_gpu_count())]
    n = nproc or len(gpus) or 1
    if not gpus:
        return [""] * n
    if len(gpus) % n == 0:
        size = len(gpus) // n
        return [",".join(gpus[i * size : (i + 1) * size]) for i in range(n)]
    if n % len(gpus) == 0:
        return [gpus[i % len(gpus)] for i in range(n)]
    raise LaunchError(f"--nproc_per_node {n}: expected a divisor or multiple of the {len(gpus)} GPUs {gpus}")


def _visible_gpu_count() -> int:
    """GPUs this host shows, without importing CuPy: CUDA_VISIBLE_DEVICES, else the /dev/nvidiaN devices."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return len([d for d in _split(visible) if d != "-1"])
    return _gpu_devices()


def _gpu_devices() -> int:
    """The /dev/nvidiaN devices of this host."""
    try:
        return sum(1 for d in os.listdir("/dev") if d.startswith("nvidia") and d[6:].isdigit())
    except OSError:
        return 0


# -- endpoints and hosts --------------------------------------------------------------------------------------------


def _fill_ports(entries: list[str], started: int | None, default: int, node_ip: str | None) -> list[str]:
    """`ip:port` for every entry: free ports when every host is this one, else the k-th entry without a port on
    a host gets --started_port + k, which every host computes alike without talking to the others."""
    hosts = [_check_entry(e) for e in entries]
    missing = [i for i, e in enumerate(entries) if ":" not in e]
    if started is None and all(_is_local(h, node_ip) for h in hosts):
        ports = _free_ports(len(missing), avoid={int(e.rpartition(":")[2]) for e in entries if ":" in e})
    else:
        taken: dict[str, int] = {}
        ports = []
        for i in missing:
            taken[hosts[i]] = taken.get(hosts[i], -1) + 1
            ports.append((started or default) + taken[hosts[i]])
    filled = list(entries)
    for i, port in zip(missing, ports):
        filled[i] = f"{hosts[i]}:{port}"
    duplicates = sorted({e for e in filled if filled.count(e) > 1})
    if duplicates:
        raise LaunchError(f"endpoints: expected each ip:port once, got {','.join(duplicates)} more than once")
    return filled


def _check_entry(entry: str) -> str:
    """The host of an `ip` or `ip:port` entry (an IPv6 one in brackets), or a LaunchError."""
    bare = entry.startswith("[") and entry.endswith("]") or ":" not in entry
    problem = host_problem(entry) if bare else endpoint_problem(entry)
    if problem:
        raise LaunchError(f"endpoint {entry!r} {problem}; expected ip or ip:port with a port in 1..65535")
    return entry if bare else entry.rpartition(":")[0]


def _free_ports(n: int, avoid: frozenset[int] | set[int] = frozenset()) -> list[int]:
    """n distinct ports that are free on every local address right now (and not in `avoid`)."""
    sockets, ports = [], []
    try:
        while len(ports) < n:
            s = socket.socket()
            s.bind(("", 0))
            sockets.append(s)
            if s.getsockname()[1] not in avoid:
                ports.append(s.getsockname()[1])
        return ports
    finally:
        for s in sockets:
            s.close()


def _host(endpoint: str) -> str:
    return endpoint.rsplit(":", 1)[0]


def _split(text: str | None) -> list[str]:
    return [part.strip() for part in (text or "").split(",") if part.strip()]


def _is_local(host: str, node_ip: str | None) -> bool:
    if node_ip:
        return host == node_ip
    return is_loopback(host) or host in _host_addresses()


@functools.cache
def _host_addresses() -> frozenset[str]:
    """This host's name and the addresses it resolves to (looked up once, only for a non-loopback host)."""
    name = socket.gethostname()
    found = {name}
    try:
        found |= {info[4][0] for info in socket.getaddrinfo(name, None)}
    except OSError:
        pass
    return frozenset(found)


def _local_hint() -> str:
    return f"this host is {', '.join(sorted(_host_addresses()))}; pass --node_ip to say which address is this host"


# -- output ---------------------------------------------------------------------------------------------------------


def _print_config(args: argparse.Namespace, plan: Plan) -> None:
    print("-----------  Configuration Arguments -----------")
    for key, value in sorted(vars(args).items()):
        print(f"{key}: {value if value is not None else 'None'}")
    print("------------------------------------------------", flush=True)
    servers = [s for s in plan.local if s.role == "server"]
    workers = [s for s in plan.local if s.role == "worker"]
    if plan.mode == "ps":
        log("INFO", f"Run parameter-server mode: {len(plan.servers)} servers, {len(plan.workers)} workers in all")
        for role, specs in (("server", servers), ("worker", workers)):
            if specs:
                log("INFO", f"Local {role} start {len(specs)} processes. First process distributed environment info:")
                print(env_table(specs[0].env) + "\n", flush=True)
        logs = f"{args.log_dir}/serverlog.*, {args.log_dir}/workerlog.*"
        log("INFO", f"Please check servers' and workers' logs in {logs}")
    else:
        log("INFO", f"Run collective mode: {len(plan.workers)} processes in all")
        log("INFO", f"Local start {len(workers)} processes. First process distributed environment info:")
        print(env_table(workers[0].env) + "\n", flush=True)
        log(
            "INFO",
            f"details about PADDLE_TRAINER_ENDPOINTS can be found in {args.log_dir}/endpoints.log, "
            f"and detail running logs in {args.log_dir}/{workers[0].log_name}",
        )


def _write_endpoints(log_dir: str, plan: Plan) -> None:
    lines = ["PADDLE_TRAINER_ENDPOINTS:", *plan.workers]
    if plan.mode == "ps":
        lines += ["PADDLE_PSERVERS_IP_PORT_LIST:", *plan.servers]
    with open(os.path.join(log_dir, "endpoints.log"), "w") as f:
        f.write("\n".join(lines) + "\n")


def _install_handlers(handler) -> dict:
    """Route SIGINT/SIGTERM/SIGHUP to the supervisor (possible only in the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {s: signal.signal(s, handler) for s in STOP_SIGNALS}


def _restore_handlers(previous: dict) -> None:
    for signum, old in previous.items():
        signal.signal(signum, old)


if __name__ == "__main__":
    main()
