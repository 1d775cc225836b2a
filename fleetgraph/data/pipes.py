"""Opening one data file: read directly (pipe_command "cat"; gzip for a ".gz" file, as Paddle's local
file system does), or as the stdout of `pipe_command` run by a shell with the file on its stdin.

A pipe_command runs in its own process group, so that killing the group also ends whatever the shell
started; every live group is registered and killed on close, on error and at interpreter exit, and
every wait has a timeout. Its stderr goes to a temporary file: the last lines of it explain a
failure, and a success passes it on to our stderr.
"""

from __future__ import annotations

import atexit
import gzip
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time

from .errors import DatasetError, PipeCommandError

EXIT_TIMEOUT = 30.0  # seconds a command may take to exit after closing its stdout
_live: dict[int, PipeInput] = {}
_live_lock = threading.Lock()


def _command_env() -> dict:
    """The environment of a pipe_command: ours, with the directory of the Python running training first
    on PATH, so that `python reader.py` in the command is this Python (a virtual environment's, which
    can import what the reader imports) and not whichever `python` the shell would find first."""
    here = os.path.dirname(sys.executable)
    path = os.environ.get("PATH", "")
    if os.path.exists(os.path.join(here, "python")) and path.split(os.pathsep)[:1] != [here]:
        path = here + os.pathsep + path
    return {**os.environ, "PATH": path}


class FileInput:
    """One file read as raw bytes: `read(size)` returns up to size bytes, b"" at the end."""

    def __init__(self, path: str) -> None:
        try:
            self._file = gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb", buffering=0)
        except OSError as e:
            raise DatasetError(f"dataset: cannot open {path!r}: {e.strerror or e}") from None
        self.path = path

    def read(self, size: int) -> bytes:
        return self._file.read(size)

    def finish(self) -> None:
        self._file.close()

    def kill(self) -> None:
        pass  # a read of a local file ends by itself

    def close(self) -> None:
        self._file.close()


class PipeInput:
    """`pipe_command` with the file on its stdin; `read` gathers its stdout up to `size` bytes, but
    hands over what it has once the command pauses, so a slow generator still feeds batches.

    The reading thread owns the input (read, finish, close); any thread may `kill` it. The command
    is reaped only under the lock `kill` takes, so a kill never reaches a reused process id.
    """

    def __init__(self, path: str, command: str) -> None:
        self.path, self.command = path, command
        try:
            stdin = open(path, "rb")
        except OSError as e:
            raise DatasetError(f"dataset: cannot open {path!r}: {e.strerror or e}") from None
        self._stderr = tempfile.TemporaryFile()
        self._lock = threading.Lock()
        self._reaped = False
        # Paddle's local file system reads a ".gz" file as `zcat file | pipe_command`
        shell_command = f"gzip -dc | (\n{command}\n)" if path.endswith(".gz") else command
        try:
            with stdin:
                self._proc = subprocess.Popen(
                    shell_command,
                    shell=True,
                    stdin=stdin,
                    stdout=subprocess.PIPE,
                    stderr=self._stderr,
                    start_new_session=True,
                    env=_command_env(),
                )
        except OSError as e:
            self._stderr.close()
            raise PipeCommandError(f"dataset: cannot start pipe_command {command!r} on {path!r}: {e}") from None
        with _live_lock:
            _live[self._proc.pid] = self
        self._fd = self._proc.stdout.fileno()

    @property
    def pid(self) -> int:
        return self._proc.pid

    def read(self, size: int) -> bytes:
        parts, got = [], 0
        while got < size:
            if not select.select([self._fd], [], [], 0.05 if parts else 0.5)[0]:
                if parts:
                    break
                # a failed command whose children still hold its stdout open: stop now, finish() says why
                if self._exit_status(0.0) not in (None, 0):
                    break
                continue
            data = os.read(self._fd, min(size - got, 1 << 20))
            if not data:
                break
            parts.append(data)
            got += len(data)
        return b"".join(parts)

    def finish(self) -> None:
        """After the end of its stdout: wait for the command, raise if it failed."""
        status = self._exit_status(EXIT_TIMEOUT)
        if status is None:
            self.close()
            raise PipeCommandError(
                f"dataset: pipe_command {self.command!r} on {self.path!r} closed its output but had not "
                f"exited after {EXIT_TIMEOUT:.0f} s; it was killed"
            )
        tail = self._stderr_text()
        self.close()
        if status != 0:
            how = f"was killed by signal {-status}" if status < 0 else f"exited with status {status}"
            raise PipeCommandError(
                f"dataset: pipe_command {self.command!r} on {self.path!r} {how}; expected status 0. "
                f"Last lines of its stderr:\n{tail or '(nothing)'}"
            )
        if tail:
            sys.stderr.write(tail + "\n")

    def kill(self) -> None:
        """Kill the command's whole process group (from any thread); its stdout then ends."""
        with self._lock:
            if not self._reaped:
                try:
                    os.killpg(self._proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass

    def close(self) -> None:
        """Kill the group (stragglers the shell left included), reap the command, close; idempotent."""
        self.kill()
        if self._exit_status(EXIT_TIMEOUT) is not None:
            with self._lock:
                if not self._reaped:
                    self._proc.wait()
                    self._reaped = True
            with _live_lock:
                _live.pop(self._proc.pid, None)
        self._proc.stdout.close()
        self._stderr.close()

    def _exit_status(self, timeout: float) -> int | None:
        """The command's exit status once it has exited (negative: killed by that signal), leaving it
        unreaped so its process group id stays reserved; None if it is still running after `timeout`."""
        if self._reaped:
            return self._proc.returncode
        deadline, delay = time.monotonic() + timeout, 0.001
        while True:
            try:
                info = os.waitid(os.P_PID, self._proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:  # reaped meanwhile by the exit handler
                return self._proc.returncode if self._proc.returncode is not None else -signal.SIGKILL
            if info is not None and info.si_pid:
                return info.si_status if info.si_code == os.CLD_EXITED else -info.si_status
            if time.monotonic() > deadline:
                return None
            time.sleep(delay)
            delay = min(2 * delay, 0.05)

    def _stderr_text(self, lines: int = 20) -> str:
        self._stderr.seek(0, os.SEEK_END)
        size = self._stderr.tell()
        self._stderr.seek(max(0, size - 65536))
        text = self._stderr.read().decode("utf-8", "replace")
        return "\n".join(text.rstrip("\n").split("\n")[-lines:]) if text.strip() else ""


def open_input(path: str, pipe_command: str) -> FileInput | PipeInput:
    if path.startswith(("hdfs:", "afs:")):
        raise DatasetError(f"dataset: cannot read {path!r}: HDFS/AFS is not available; expected a local file")
    if pipe_command.strip() == "cat":  # the same bytes without a process
        return FileInput(path)
    return PipeInput(path, pipe_command)


def live_pids() -> list[int]:
    """The process groups of pipe_commands not yet reaped (for tests and diagnostics)."""
    with _live_lock:
        return list(_live)


@atexit.register
def _kill_all() -> None:
    with _live_lock:
        inputs = list(_live.values())
    for pipe in inputs:
        pipe.kill()
    for pipe in inputs:
        with pipe._lock:
            if not pipe._reaped and pipe._exit_status(1.0) is not None:
                pipe._proc.wait()
                pipe._reaped = True
