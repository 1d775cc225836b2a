"""The profiler (`fluid.profiler`): each op's time, each message's size and wait, as Paddle's report
and as a Chrome trace that chrome://tracing and Perfetto open.

A process started by the launcher also writes its trace to the launcher's log directory
(`profile.<process>.json`); when the job ends the launcher merges them into `profile.json`, one
process row each, on the host's common clock.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
from collections import defaultdict

from ..executor import trace
from ..ir import FleetgraphError

STATES = {"CPU": "CPU", "GPU": "CUDA", "All": "All"}
SORTED_KEYS = {
    None: "event first end time",
    "calls": "number of calls",
    "total": "total time",
    "max": "maximum time",
    "min": "minimum time",
    "ave": "average time",
}
PROFILE_DIR_ENV, PROCESS_NAME_ENV = "FLEETGRAPH_PROFILE_DIR", "FLEETGRAPH_PROCESS_NAME"  # set by the launcher

_state: str | None = None


def start_profiler(state: str, tracer_option: str = "Default") -> None:
    """Start recording this process's ops, messages and waits (again after a stop: a fresh record)."""
    global _state
    if state not in STATES:
        raise ValueError(f"start_profiler: state; expected one of 'CPU', 'GPU', 'All', got {state!r}")
    if state == "GPU":
        raise FleetgraphError(
            "start_profiler: state 'GPU' records GPU kernels, and none run in this build; expected 'CPU' or 'All'"
        )
    if tracer_option != "Default":
        raise FleetgraphError(
            f"start_profiler: tracer_option {tracer_option!r} (the split of an op's time into its framework "
            "stages) is not recorded; expected 'Default'"
        )
    if trace.ACTIVE is None:
        trace.ACTIVE = trace.Recorder()
    _state = state


def reset_profiler() -> None:
    """Drop what has been recorded so far; recording goes on."""
    if trace.ACTIVE is not None:
        trace.ACTIVE = trace.Recorder()


def stop_profiler(sorted_key: str | None = None, profile_path: str = "/tmp/profile") -> None:
    """Stop recording, print the report sorted by `sorted_key` (None: in order of first end) and write
    the Chrome trace to `profile_path` (and to the launcher's log directory under a launcher)."""
    if sorted_key not in SORTED_KEYS:
        raise ValueError(f"stop_profiler: sorted_key; expected one of {list(SORTED_KEYS)}, got {sorted_key!r}")
    recorder, trace.ACTIVE = trace.ACTIVE, None
    if recorder is None:
        return
    print(report(recorder, sorted_key, _state or "CPU"))
    name = os.environ.get(PROCESS_NAME_ENV)
    document = recorder.chrome_trace(process_name=name)
    if profile_path:
        _write_json(profile_path, document)
    directory = os.environ.get(PROFILE_DIR_ENV)
    if directory and name:
        _write_json(os.path.join(directory, f"profile.{name}.json"), document)


@contextlib.contextmanager
def profiler(state: str, sorted_key: str | None = None, profile_path: str = "/tmp/profile", tracer_option="Default"):
    """Profile the enclosed code: `with fluid.profiler.profiler('CPU', 'total', '/tmp/profile'): ...`."""
    start_profiler(state, tracer_option)
    try:
        yield
    finally:
        stop_profiler(sorted_key, profile_path)


def cuda_profiler(output_file, output_mode=None, config=None):
    """nvprof's CUDA profiler: there are no CUDA kernels to profile in this build."""
    raise FleetgraphError(
        "cuda_profiler: NVIDIA's CUDA profiler times GPU kernels and none run in this build; "
        "use fluid.profiler.profiler('CPU')"
    )


def report(recorder: trace.Recorder, sorted_key: str | None, state: str) -> str:
    """Paddle's profiling report: per thread, each event's calls and total/min/max/average time (ms)
    and its share of the thread's time, sorted by `sorted_key` in descending order."""
    per_thread: dict[int, dict[str, list[float]]] = defaultdict(dict)  # tid -> name -> durations in ms
    for event in sorted(recorder.events, key=lambda e: e.start_ns + e.dur_ns):  # first end first
        per_thread[event.tid].setdefault(event.name, []).append(event.dur_ns / 1e6)
    lines = [
        "",
        "------------------------->     Profiling Report     <-------------------------",
        "",
        f"Place: {STATES[state]}",
        "Time unit: ms",
        f"Sorted by {SORTED_KEYS[sorted_key]} in descending order in the same thread",
        "",
        "-------------------------       Event Summary       -------------------------",
        "",
    ]
    rows = []
    for index, events in enumerate(per_thread.values()):
        thread_total = sum(sum(d) for d in events.values()) or 1.0
        items = [
            (f"thread{index}::{name}", len(d), sum(d), min(d), max(d), sum(d) / len(d), sum(d) / thread_total)
            for name, d in events.items()
        ]
        if sorted_key is not None:
            column = {"calls": 1, "total": 2, "min": 3, "max": 4, "ave": 5}[sorted_key]
            items.sort(key=lambda item: item[column], reverse=True)
        rows += items
    width = max([len("Event")] + [len(r[0]) for r in rows]) + 4
    lines.append(f"{'Event':<{width}}{'Calls':<12}{'Total':<12}{'Min.':<12}{'Max.':<12}{'Ave.':<12}Ratio.")
    for name, calls, total, low, high, ave, ratio in rows:
        lines.append(f"{name:<{width}}{calls:<12}{total:<12.6g}{low:<12.6g}{high:<12.6g}{ave:<12.6g}{ratio:.6g}")
    return "\n".join(lines)


def merge_traces(directory: str) -> str | None:
    """Merge the per-process traces a launched job wrote in `directory` into `profile.json`, one
    process row each; the merged file's path, or None when no process wrote one."""
    parts = sorted(glob.glob(os.path.join(directory, "profile.*.json")))
    if not parts:
        return None
    events: list = []
    for pid, path in enumerate(parts, start=1):
        with open(path) as f:
            document = json.load(f)
        for event in document.get("traceEvents", []):
            events.append({**event, "pid": pid})  # processes of several hosts may share a pid
    merged = os.path.join(directory, "profile.json")
    _write_json(merged, {"traceEvents": events, "displayTimeUnit": "ms"})
    return merged


def clear_traces(directory: str) -> None:
    """Remove an earlier job's per-process traces, so that the next merge holds this job's only."""
    for path in glob.glob(os.path.join(directory, "profile.*.json")):
        os.remove(path)


def _write_json(path: str, document: dict) -> None:
    """Write atomically: a reader (or the launcher's merge) never sees half a file."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(document, f)
    os.replace(tmp, path)
