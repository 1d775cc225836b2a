"""Paddle 2.0's `paddle.utils.Profiler`: a profiler object over fluid.profiler's start / stop, that
can be switched on for a range of batches (`record_step`)."""

from __future__ import annotations

import sys
import warnings

from ..executor import trace
from .profiler import reset_profiler, start_profiler, stop_profiler

_UNRECORDED = {"timeline_path": "none", "op_summary_path": "none", "output_thread_detail": False}


class ProfilerOptions:
    """The options of a Profiler, Paddle's defaults; an option set to 'none' reads as None."""

    def __init__(self, options=None) -> None:
        self.options = {
            "state": "All",
            "sorted_key": "default",
            "tracer_level": "Default",
            "batch_range": [0, sys.maxsize],
            **_UNRECORDED,
            "profile_path": "none",
        }
        for key in self.options:
            if options is not None and options.get(key) is not None:
                self.options[key] = options[key]
        for key, default in _UNRECORDED.items():
            if self.options[key] != default:
                raise NotImplementedError(
                    f"ProfilerOptions: option {key!r} is not written by fleetgraph's profiler (its one output is "
                    "the report and the Chrome trace at profile_path)"
                )

    def with_state(self, state) -> ProfilerOptions:
        self.options["state"] = state
        return self

    def __getitem__(self, name):
        if self.options.get(name) is None:
            raise ValueError(f"ProfilerOptions does not have an option named {name}.")
        value = self.options[name]
        return None if value == "none" else value


_current_profiler = None


class Profiler:
    """Profiles the batches in options['batch_range'] (from the `with` when it starts at 0, else from
    the record_step that reaches its start) and reports when the range or the `with` ends. A start or
    stop that fails warns instead of raising, as Paddle's."""

    def __init__(self, enabled=True, options=None) -> None:
        self.profiler_options = options if options is not None else ProfilerOptions()
        self.batch_id = 0
        self.enabled = enabled

    def __enter__(self) -> Profiler:
        global _current_profiler
        self.previous_profiler, _current_profiler = _current_profiler, self
        if self.enabled and self.profiler_options["batch_range"][0] == 0:
            self.start()
        return self

    def __exit__(self, exception_type, exception_value, traceback) -> None:
        global _current_profiler
        _current_profiler = self.previous_profiler
        if self.enabled:
            self.stop()

    def start(self) -> None:
        if self.enabled:
            try:
                start_profiler(
                    state=self.profiler_options["state"], tracer_option=self.profiler_options["tracer_level"]
                )
            except Exception as e:
                warnings.warn(f"Profiler is not enabled becuase following exception:\n{e}", stacklevel=2)

    def stop(self) -> None:
        if self.enabled:
            sorted_key = self.profiler_options["sorted_key"]
            try:
                stop_profiler(
                    sorted_key=None if sorted_key == "default" else sorted_key,
                    profile_path=self.profiler_options["profile_path"],
                )
            except Exception as e:
                warnings.warn(f"Profiler is not disabled becuase following exception:\n{e}", stacklevel=2)

    def reset(self) -> None:
        if self.enabled and trace.ACTIVE is not None:
            reset_profiler()

    def record_step(self, change_profiler_status=True) -> None:
        """One more batch done: at the range's first batch start (or reset) recording, at its last stop."""
        if not self.enabled:
            return
        self.batch_id += 1
        if change_profiler_status:
            first, last = self.profiler_options["batch_range"]
            if self.batch_id == first:
                self.reset() if trace.ACTIVE is not None else self.start()
            if self.batch_id == last:
                self.stop()


def get_profiler() -> Profiler:
    """The profiler of the innermost `with Profiler()`, else one made (and kept) with the defaults."""
    global _current_profiler
    if _current_profiler is None:
        _current_profiler = Profiler()
    return _current_profiler
