"""Roles of ps_train.py forked from one process that imported it once, for tests that run many short
jobs: a role starts in milliseconds, not the half second of CPU its imports take.

    ps_forks.py     one JSON request a line on stdin, one answer a line on stdout:
      {"start": [ps_train.py arguments], "env": {...}, "out": PATH}  -> the role's pid; it runs in a
          session of its own (kill its process group), its output going to PATH
      {"wait": PID}  -> its exit status once it ended (minus the signal that ended it)

Nothing here opens a socket before a fork: each role makes its own ZeroMQ context.
"""

import atexit
import json
import os
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ps_train  # noqa: E402


def _run_role(args: list[str], env: dict, out: str) -> None:
    """In the forked child: run ps_train.main() with `args`, then exit as its process would."""
    os.setsid()
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    os.close(null)
    os.environ.update(env)
    sys.argv = [ps_train.__file__, *args]
    code = 0
    try:
        ps_train.main()
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        try:
            atexit._run_exitfuncs()  # the comm's sockets close and deliver their last answers
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)


def main() -> None:
    for line in sys.stdin:
        request = json.loads(line)
        if "start" in request:
            sys.stdout.flush()
            pid = os.fork()
            if pid == 0:
                _run_role(request["start"], request.get("env", {}), request["out"])
            answer = pid
        else:
            _, status = os.waitpid(int(request["wait"]), 0)
            answer = os.waitstatus_to_exitcode(status)
        print(answer, flush=True)


if __name__ == "__main__":
    main()
