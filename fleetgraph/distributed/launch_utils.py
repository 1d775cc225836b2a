"""The launcher's machinery: start one child per `ProcSpec` in its own session with its own log file, watch them
until the job ends, and kill every child's process group (SIGTERM, then SIGKILL) on the way out."""

from __future__ import annotations

import ctypes
import datetime
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TextIO

# Every variable the launcher may set; inherited copies are dropped so a stale value never leaks into a child.
ROLE_ENV_VARS = (
    "TRAINING_ROLE",
    "PADDLE_TRAINING_ROLE",
    "PADDLE_PSERVERS_IP_PORT_LIST",
    "PADDLE_TRAINER_ENDPOINTS",
    "PADDLE_TRAINERS_NUM",
    "PADDLE_TRAINERS",
    "PADDLE_TRAINER_ID",
    "PADDLE_PORT",
    "POD_IP",
    "PADDLE_CURRENT_ENDPOINT",
    "PADDLE_CURRENT_IP",
    "PADDLE_PSERVER_IPS",
    "PADDLE_PSERVER_PORT",
    "FLAGS_selected_gpus",
    "FLEETGRAPH_PROFILE_DIR",  # where a child's profiler writes its trace for the job's merge
    "FLEETGRAPH_PROCESS_NAME",
)

DEFAULT_GRACE_S = 5.0  # SIGTERM to SIGKILL; FLEETGRAPH_LAUNCH_GRACE overrides
SERVER_LINGER_S = 1.0  # after the last worker, how long servers may take to exit by themselves
KILL_WAIT_S = 5.0  # how long SIGKILLed processes may take to be gone
POLL_S = 0.05
TAIL_LINES = 20
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class LaunchError(Exception):
    """A problem with the launcher's arguments: printed as one line, exit status 2."""


@dataclass(frozen=True)
class ProcSpec:
    """One local child: its name (`server.0`, `worker.1`), role, log file name and role environment."""

    name: str
    role: str  # "server" or "worker"
    log_name: str
    env: dict[str, str]


@dataclass
class Child:
    spec: ProcSpec
    popen: subprocess.Popen
    log_path: str


def log(level: str, message: str, stream: TextIO | None = None) -> None:
    """One launcher line in Paddle's style: `INFO 2021-05-06 12:14:26,890 launch] message`."""
    now = datetime.datetime.now()
    stamp = now.strftime("%Y-%m-%d %H:%M:%S") + f",{now.microsecond // 1000:03d}"
    stream = stream or (sys.stderr if level == "ERROR" else sys.stdout)
    print(f"{level} {stamp} launch] {message}", file=stream, flush=True)


def env_table(env: dict[str, str], header: tuple[str, str] = ("Distributed Envs", "Value")) -> str:
    """The environment as seed 002 prints it; the value column widens instead of cutting a long value."""
    key_w = max([40] + [len(k) for k in env])
    value_w = max([45] + [len(v) + 2 for v in env.values()])
    width = key_w + 2 + value_w
    rows = [f"    |{k:>{key_w}s}  {v:^{value_w}s}|" for k, v in env.items()]
    return "\n".join(
        [
            "    +" + "=" * width + "+",
            f"    |{header[0]:>{key_w}s}  {header[1]:^{value_w}s}|",
            "    +" + "-" * width + "+",
            *rows,
            "    +" + "=" * width + "+",
        ]
    )


def log_tail(path: str, lines: int = TAIL_LINES) -> list[str]:
    """The last `lines` lines of a log file (empty when it is missing)."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 64 * 1024))
            data = f.read()
    except OSError:
        return []
    return data.decode("utf-8", errors="replace").splitlines()[-lines:]


def grace_seconds() -> float:
    raw = os.environ.get("FLEETGRAPH_LAUNCH_GRACE", "")
    if not raw:
        return DEFAULT_GRACE_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if value < 0:
        raise LaunchError(f"FLEETGRAPH_LAUNCH_GRACE={raw!r}: expected seconds >= 0, e.g. 5")
    return value


def exit_status(returncode: int) -> int:
    """A shell-style status: a child killed by signal N counts as 128 + N."""
    return returncode if returncode >= 0 else 128 - returncode


def _group_alive(pgid: int) -> bool:
    """Whether any process of group `pgid` still runs; zombies do not count (PID 1 may never reap them)."""
    if os.path.isdir("/proc/self"):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[2]) == pgid and fields[0] != b"Z":
                return True
        return False
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _signal_group(pgid: int, signum: int) -> None:
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def _die_with_parent_hook():
    """A preexec_fn (Linux) that SIGKILLs the child if the launcher itself is SIGKILLed; None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def hook() -> None:
        prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # the launcher died before prctl took effect
            os._exit(1)

    return hook


@dataclass
class Supervisor:
    """The local children of one job. `start` them, `watch` until the job ends, and always `stop_all`."""

    command: Sequence[str]
    log_dir: str
    stream_name: str | None = None  # the child whose output is echoed to stdout as it comes
    grace_s: float = DEFAULT_GRACE_S
    secret_env: dict[str, str] = field(default_factory=dict, repr=False)  # for every child; never printed
    children: list[Child] = field(default_factory=list)
    interrupted: int | None = None  # the signal that asked the launcher to stop
    signals: int = 0
    _echo: _Echo | None = field(default=None, repr=False)

    def start(self, specs: Sequence[ProcSpec]) -> None:
        base = {k: v for k, v in os.environ.items() if k not in ROLE_ENV_VARS}
        hook = _die_with_parent_hook()
        for spec in specs:
            if self.interrupted is not None:
                return
            path = os.path.join(self.log_dir, spec.log_name)
            with open(path, "wb") as out:
                profile = {
                    "FLEETGRAPH_PROFILE_DIR": os.path.abspath(self.log_dir),
                    "FLEETGRAPH_PROCESS_NAME": spec.name,
                }
                popen = subprocess.Popen(
                    list(self.command),
                    env={**base, **self.secret_env, **profile, **spec.env},
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                    preexec_fn=hook,
                )
            self.children.append(Child(spec, popen, path))

    def on_signal(self, signum: int, frame: object) -> None:
        """Signal handler: only records the request; the loops act on it between polls. A second signal
        cuts the SIGTERM grace period short."""
        self.signals += 1
        if self.interrupted is None:
            self.interrupted = signum

    def watch(self) -> int:
        """Wait for the job to end; the launcher's exit status."""
        self._echo = _Echo(self._log_path(self.stream_name))
        try:
            return self._watch()
        finally:
            self._echo.pump(final=True)

    def _watch(self) -> int:
        workers = [c for c in self.children if c.spec.role == "worker"]
        while not all(c.popen.returncode is not None for c in (workers or self.children)):
            time.sleep(POLL_S)
            self._echo.pump()
            if self.interrupted is not None:
                return self._interrupt()
            failed = [c for c in self.children if c.popen.poll() not in (None, 0)]
            if failed:
                return self._fail(failed)
        if any(c.popen.poll() is None for c in self.children):
            log("INFO", "all workers exited with status 0; stopping the servers")
            self._linger()
            if self.interrupted is not None:
                return self._interrupt()
        failed = [c for c in self.children if c.popen.poll() not in (None, 0)]
        if failed:
            return self._fail(failed)
        self.stop_all()
        log("INFO", "every process has ended; the job succeeded")
        return 0

    def _linger(self) -> None:
        """Give servers that exit by themselves once the trainers are done a moment to do so."""
        deadline = time.monotonic() + SERVER_LINGER_S
        while time.monotonic() < deadline and self.interrupted is None:
            if all(c.popen.poll() is not None for c in self.children):
                return
            time.sleep(POLL_S)

    def _interrupt(self) -> int:
        log("ERROR", f"launcher got {signal.Signals(self.interrupted).name}; stopping every process")
        self.stop_all()
        return 128 + self.interrupted

    def _fail(self, failed: list[Child]) -> int:
        self._echo.pump()
        for c in failed:
            log("ERROR", f"{c.spec.name} exited with status {exit_status(c.popen.returncode)}")
        self.stop_all()
        first = failed[0]
        log("ERROR", f"last {TAIL_LINES} lines of {first.spec.name}'s log {first.log_path}:")
        for line in log_tail(first.log_path):
            print(f"    {line}", file=sys.stderr)
        sys.stderr.flush()
        return exit_status(first.popen.returncode) or 1

    def stop_all(self) -> None:
        """SIGTERM every child's process group, SIGKILL what is left after the grace period, reap."""
        live = [c for c in self.children if _group_alive(c.popen.pid)]
        for c in live:
            _signal_group(c.popen.pid, signal.SIGTERM)
        sent, signals = time.monotonic(), self.signals
        deadline = sent + self.grace_s
        while live and time.monotonic() < deadline and self.signals <= max(signals, 1):
            time.sleep(POLL_S)
            for c in live:
                c.popen.poll()
            live = [c for c in live if _group_alive(c.popen.pid)]
        for c in live:
            waited = time.monotonic() - sent
            log("ERROR", f"{c.spec.name} still running {waited:.1f} s after SIGTERM; sending SIGKILL")
            _signal_group(c.popen.pid, signal.SIGKILL)
        deadline = time.monotonic() + KILL_WAIT_S
        while live and time.monotonic() < deadline:  # so nothing is seen running once the launcher has exited
            time.sleep(POLL_S / 5)
            live = [c for c in live if c.popen.poll() is None or _group_alive(c.popen.pid)]
        for c in self.children:
            try:
                c.popen.wait(timeout=10)
            except subprocess.TimeoutExpired:
                log("ERROR", f"{c.spec.name} (pid {c.popen.pid}) survived SIGKILL")

    def _log_path(self, name: str | None) -> str | None:
        return next((c.log_path for c in self.children if c.spec.name == name), None)


class _Echo:
    """Copies the complete lines that appear in one log file to stdout."""

    def __init__(self, path: str | None) -> None:
        self.file = open(path, "rb") if path else None  # closed by the final pump
        self.partial = b""

    def pump(self, final: bool = False) -> None:
        if self.file is None:
            return
        data = self.partial + self.file.read()
        lines, _, self.partial = data.rpartition(b"\n")
        if final and self.partial:
            lines, self.partial = data, b""
        if lines:
            sys.stdout.write(lines.decode("utf-8", errors="replace") + "\n")
            sys.stdout.flush()
        if final:
            self.file.close()
            self.file = None
