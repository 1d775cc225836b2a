"""Parameter-server roles forked from one process that imported ps_train.py once (dist_scripts/
ps_forks.py), grouped like dist_helpers.ProcessGroup: for tests that run many short jobs."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass

from dist_helpers import REPO, SCRIPTS

FORKS = os.path.join(SCRIPTS, "ps_forks.py")


class Forks:
    """The forking process; `close` ends it and every role it started that still runs."""

    def __init__(self) -> None:
        env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
        self.popen = subprocess.Popen(
            [sys.executable, FORKS], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
        )
        self.running: set[int] = set()

    def start(self, args: list[str], env: dict, out: str) -> int:
        pid = int(self._ask({"start": args, "env": env, "out": out}, timeout=60))
        self.running.add(pid)
        return pid

    def wait(self, pid: int, timeout: float) -> int:
        """Its exit status; killed (and reported so) if it still runs after `timeout` seconds."""
        try:
            return int(self._ask({"wait": pid}, timeout))
        except TimeoutError:
            kill(pid)
            return int(self._ask(None, timeout=30))
        finally:
            self.running.discard(pid)

    def _ask(self, request: dict | None, timeout: float) -> str:
        if request is not None:
            self.popen.stdin.write(json.dumps(request) + "\n")
            self.popen.stdin.flush()
        if not select.select([self.popen.stdout], [], [], timeout)[0]:
            raise TimeoutError(f"ps_forks.py: no answer to {request} after {timeout} s")
        line = self.popen.stdout.readline()
        if not line:
            raise AssertionError(f"ps_forks.py ended (exit {self.popen.wait()}) before answering {request}")
        return line

    def close(self) -> None:
        for pid in self.running:
            kill(pid)
        self.popen.stdin.close()
        self.popen.wait(timeout=30)


def kill(pid: int) -> None:
    """SIGKILL a forked role and whatever it started (its session's process group)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


@dataclass
class Role:
    name: str
    pid: int
    out: str


class ForkedGroup:
    """Roles of one job: `start` each, then `wait` for all; {name: (exit status, output)}."""

    def __init__(self, forks: Forks, directory: str, timeout: float = 60.0) -> None:
        self.forks, self.directory, self.timeout = forks, directory, timeout
        self.roles: list[Role] = []

    def start(self, name: str, args: list[str], env: dict | None = None) -> Role:
        out = os.path.join(self.directory, name.replace(" ", "_").replace(":", "_") + ".out")
        role = Role(name, self.forks.start(args, env or {}, out), out)
        self.roles.append(role)
        return role

    def wait(self) -> dict[str, tuple[int, str]]:
        """Once every role ended; raises (after killing them) on roles that ran past the timeout."""
        deadline = time.monotonic() + self.timeout
        results, late = {}, []
        for role in self.roles:
            code = self.forks.wait(role.pid, max(0.1, deadline - time.monotonic()))
            if time.monotonic() > deadline:
                late.append(role.name)
            with open(role.out) as f:
                results[role.name] = (code, f.read())
        if late:
            report = "\n".join(f"--- {name} (exit {code}):\n{out[-3000:]}" for name, (code, out) in results.items())
            raise AssertionError(f"{late} still running after {self.timeout} s:\n{report}")
        return results
