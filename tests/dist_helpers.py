"""Helpers for tests that start real processes on 127.0.0.1: free ports, and a group of processes
that is always reaped (killed on failure or timeout), so no test leaves a process behind."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dist_scripts")


def free_ports(n: int) -> list[int]:
    """n distinct ports free on 127.0.0.1 right now (bound and released by the OS)."""
    sockets = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def endpoints(n: int) -> list[str]:
    return [f"127.0.0.1:{p}" for p in free_ports(n)]


@dataclass
class Proc:
    name: str
    popen: subprocess.Popen
    output: str = ""


@dataclass
class ProcessGroup:
    """Start processes with `start`, then `wait` for all of them; any left running are killed."""

    timeout: float = 120.0
    procs: list[Proc] = field(default_factory=list)

    def start(self, name: str, args: list[str], env: dict | None = None, cwd: str | None = None, host=None) -> Proc:
        """Start `python args...`; `host` (a netns.Host) runs it in that host's network namespace."""
        full_env = dict(
            os.environ,
            PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""),
            PYTHONUNBUFFERED="1",
            **(env or {}),
        )
        popen = subprocess.Popen(
            [*(host.prefix if host is not None else []), sys.executable, *args],
            env=full_env,
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        proc = Proc(name, popen)
        self.procs.append(proc)
        return proc

    def wait(self) -> dict[str, tuple[int, str]]:
        """{name: (exit status, output)} once every process ended; raises on timeout (after killing)."""
        deadline = time.monotonic() + self.timeout
        try:
            for proc in self.procs:
                remaining = max(0.1, deadline - time.monotonic())
                proc.output, _ = proc.popen.communicate(timeout=remaining)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"processes still running after {self.timeout} s:\n{self.report()}") from None
        return {p.name: (p.popen.returncode, p.output) for p in self.procs}

    def kill(self) -> None:
        for proc in self.procs:
            if proc.popen.poll() is None:
                try:
                    os.killpg(proc.popen.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            try:
                out, _ = proc.popen.communicate(timeout=10)
                proc.output = proc.output or out or ""
            except subprocess.TimeoutExpired:
                pass

    def report(self) -> str:
        return "\n".join(f"--- {p.name} (exit {p.popen.returncode}):\n{p.output[-3000:]}" for p in self.procs)

    def __enter__(self) -> ProcessGroup:
        return self

    def __exit__(self, *exc) -> None:
        self.kill()


def assert_all_exit_zero(results: dict[str, tuple[int, str]]) -> None:
    bad = {name: r for name, r in results.items() if r[0] != 0}
    assert not bad, "\n".join(f"--- {n} exited {code}:\n{out[-3000:]}" for n, (code, out) in bad.items())


def run_collective_job(argv: list[str], nranks: int = 2, timeout: float = 120) -> dict[str, tuple[int, str]]:
    """Run `python argv...` as the ranks of a collective job (roles from the environment, Paddle's
    variables); asserts every rank exits 0 and returns {name: (exit status, output)}."""
    ranks = endpoints(nranks)
    with ProcessGroup(timeout=timeout) as group:
        for rank, ep in enumerate(ranks):
            env = {
                "PADDLE_TRAINER_ENDPOINTS": ",".join(ranks),
                "PADDLE_TRAINER_ID": str(rank),
                "PADDLE_TRAINERS_NUM": str(nranks),
                "PADDLE_CURRENT_ENDPOINT": ep,
                "FLEETGRAPH_RPC_TIMEOUT": "30",
            }
            group.start(f"rank {rank}", argv, env=env)
        results = group.wait()
    assert_all_exit_zero(results)
    return results


def wait_for_cpu(pid: int, seconds: float, limit_s: float = 60) -> None:
    """Until process `pid` has used `seconds` of CPU (however loaded the machine is): a process past
    its imports and start-up, without a fixed sleep that is too short on a busy machine and too long
    on a quiet one."""
    tick = os.sysconf("SC_CLK_TCK")
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        if (int(fields[11]) + int(fields[12])) / tick >= seconds:  # utime + stime
            return
        time.sleep(0.05)
    raise AssertionError(f"process {pid} used less than {seconds} s of CPU in {limit_s} s")


def processes_with(mark: str) -> list[tuple[int, str]]:
    """(pid, command line) of every live (non-zombie) process with `mark` among its arguments."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                args = f.read().decode(errors="replace").split("\0")
            with open(f"/proc/{name}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if mark in args and state != b"Z":
            found.append((int(name), " ".join(args)))
    return found


def assert_nothing_left(mark: str) -> None:
    left = processes_with(mark)
    assert not left, "processes left behind:\n" + "\n".join(f"{pid} {cmd}" for pid, cmd in left)
