"""The profiler's recorder: while one is active, each op, message and wait of this process becomes an
event (name, category, start, duration, thread, arguments) in Chrome's trace-event form.

Nothing here costs anything when no profiler runs: the executor checks `ACTIVE` once per block run,
the communication code once per message.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from dataclasses import dataclass, field


@dataclass
class Event:
    name: str
    cat: str  # 'op', 'send', 'recv', 'wait', 'allreduce', 'broadcast', 'barrier'
    start_ns: int  # time.time_ns(): processes of one host share the clock, so their traces line up
    dur_ns: int
    tid: int
    args: dict = field(default_factory=dict)


class Recorder:
    def __init__(self) -> None:
        self.events: list[Event] = []  # list.append is atomic: threads record without a lock
        self.thread_names: dict[int, str] = {}

    def add(self, name: str, cat: str, start_ns: int, end_ns: int, **args) -> None:
        thread = threading.current_thread()
        self.thread_names.setdefault(thread.ident, thread.name)
        self.events.append(Event(name, cat, start_ns, end_ns - start_ns, thread.ident, args))

    def chrome_trace(self, process_name: str | None = None, pid: int | None = None) -> dict:
        """The events as a Chrome trace (chrome://tracing, Perfetto): complete ('X') events in
        microseconds, with the process and thread names as metadata."""
        pid = os.getpid() if pid is None else pid
        meta = [{"name": "process_name", "ph": "M", "pid": pid, "args": {"name": process_name or f"pid {pid}"}}]
        meta += [
            {"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": name}}
            for tid, name in self.thread_names.items()
        ]
        events = [
            {
                "name": e.name,
                "cat": e.cat,
                "ph": "X",
                "ts": e.start_ns / 1000,
                "dur": e.dur_ns / 1000,
                "pid": pid,
                "tid": e.tid,
                "args": e.args,
            }
            for e in self.events
        ]
        return {"traceEvents": meta + events, "displayTimeUnit": "ms"}


ACTIVE: Recorder | None = None


@contextlib.contextmanager
def span(name: str, cat: str, **args):
    """Record the enclosed work as one event while a profiler runs; nothing otherwise."""
    recorder = ACTIVE
    if recorder is None:
        yield args
        return
    start = time.time_ns()
    try:
        yield args  # the caller may add arguments it learns inside (the bytes of an answer)
    finally:
        recorder.add(name, cat, start, time.time_ns(), **args)


def timed(name: str, kernel, /, *args, **kwargs):
    """kernel(*args, **kwargs), recorded as an 'op' event `name` (callers check ACTIVE first)."""
    start = time.time_ns()
    try:
        return kernel(*args, **kwargs)
    finally:
        recorder = ACTIVE
        if recorder is not None:
            recorder.add(name, "op", start, time.time_ns())


class TimedStep:
    """A plan step whose kernel call is recorded as an 'op' event (only while profiling)."""

    __slots__ = ("_step", "_recorder", "kernel")

    def __init__(self, step, recorder: Recorder) -> None:
        self._step, self._recorder = step, recorder
        op = getattr(step, "op", None)
        kernel, name = step.kernel, op.type if op is not None else type(step).__name__

        def timed(*args, **kwargs):
            start = time.time_ns()
            try:
                return kernel(*args, **kwargs)
            finally:
                recorder.add(name, "op", start, time.time_ns())

        self.kernel = timed

    def __getattr__(self, attr):
        return getattr(self._step, attr)
