"""fluid.profiler: each op's calls and times in Paddle's report, sorted as Paddle sorts, a Chrome
trace that loads as trace-event JSON, eager ops too, and one merged trace for a launched job whose
processes all profiled (their messages with sizes and waits)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.dygraph.mode import guard
from fleetgraph.ir import FleetgraphError, Program, program_guard, unique_name
from tests.test_launch_jobs import finish, fleet_job, marker  # noqa: F401  (marker is a fixture)


def _train(steps: int):
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = fluid.data("x", [None, 4])
        loss = fluid.layers.mean(fluid.layers.fc(x, 3))
        fluid.optimizer.SGD(0.1).minimize(loss)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    return lambda: [exe.run(main, feed={"x": np.ones((2, 4), np.float32)}, scope=scope) for _ in range(steps)]


def _rows(report: str) -> list[tuple[str, int, float]]:
    """(event, calls, total ms) for each row of a report."""
    rows = re.findall(r"^thread\d+::(\S+)\s+(\d+)\s+([\d.e-]+)", report, re.M)
    return [(name, int(calls), float(total)) for name, calls, total in rows]


def test_the_report_counts_each_op_and_sorts_by_total_time(tmp_path, capsys):
    run = _train(steps=4)
    path = tmp_path / "profile"
    with fluid.profiler.profiler("CPU", sorted_key="total", profile_path=str(path)):
        run()
    out = capsys.readouterr().out
    assert "Profiling Report" in out and "Place: CPU" in out and "Sorted by total time in descending order" in out
    rows = _rows(out)
    calls = {name: n for name, n, _ in rows}
    # forward mul, elementwise_add, mean; their gradients; one sgd per parameter (w and b)
    assert calls["mul"] == calls["mul_grad"] == calls["mean"] == 4 and calls["sgd"] == 8
    totals = [total for _, _, total in rows]
    assert totals == sorted(totals, reverse=True)
    trace = json.loads(path.read_text())
    ops = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert sum(e["name"] == "mul" for e in ops) == 4 and all(e["cat"] == "op" and e["dur"] >= 0 for e in ops)
    assert any(e["ph"] == "M" and e["name"] == "process_name" for e in trace["traceEvents"])


@pytest.mark.parametrize("key, column", [("calls", 1), ("max", 2), ("ave", 2)])
def test_sorted_key_orders_the_rows_descending(key, column, capsys):
    run = _train(steps=3)
    with fluid.profiler.profiler("All", sorted_key=key, profile_path=""):
        run()
    rows = _rows(capsys.readouterr().out)
    if key == "calls":
        values = [row[1] for row in rows]
        assert values == sorted(values, reverse=True) and values[0] == 6  # sgd: two parameters
    else:
        assert len(rows) >= 7


def test_reset_drops_what_was_recorded_and_stop_without_start_prints_nothing(capsys):
    before, after = _train(steps=2), _train(steps=1)
    fluid.profiler.start_profiler("CPU")
    before()
    fluid.profiler.reset_profiler()
    after()
    fluid.profiler.stop_profiler("calls", profile_path="")
    assert max(n for _, n, _ in _rows(capsys.readouterr().out)) == 2  # sgd twice: the one run after the reset
    fluid.profiler.stop_profiler()
    assert capsys.readouterr().out == ""


def test_eager_ops_are_profiled_too(capsys):
    with guard():
        x = paddle.to_tensor(np.ones((2, 3), np.float32), stop_gradient=False)
        with fluid.profiler.profiler("CPU", "calls", profile_path=""):
            for _ in range(3):
                (x * 2.0).sum().backward()
    calls = {name: n for name, n, _ in _rows(capsys.readouterr().out)}
    assert calls["scale"] == 3 and calls["reduce_sum"] == 3 and calls["reduce_sum_grad"] == 3


def test_what_cannot_be_profiled_is_refused_by_name():
    with pytest.raises(ValueError, match="state"):
        fluid.profiler.start_profiler("TPU")
    with pytest.raises(FleetgraphError, match="GPU"):
        fluid.profiler.start_profiler("GPU")
    with pytest.raises(FleetgraphError, match="tracer_option"):
        fluid.profiler.start_profiler("CPU", tracer_option="OpDetail")
    with pytest.raises(ValueError, match="sorted_key"):
        fluid.profiler.stop_profiler("median")
    with pytest.raises(FleetgraphError, match="CUDA"):
        fluid.profiler.cuda_profiler("out.txt")


def test_a_launched_job_merges_every_processes_trace_into_one(tmp_path, marker):  # noqa: F811
    code, out = finish(fleet_job(tmp_path, marker, "--steps", "5", "--profile"), timeout=180)
    assert code == 0, out[-3000:]
    merged = json.loads((tmp_path / "log" / "profile.json").read_text())
    events = merged["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    assert sorted(names.values()) == ["server.0", "server.1", "worker.0", "worker.1"]
    by_process = {name: [e for e in events if e["pid"] == pid and e["ph"] == "X"] for pid, name in names.items()}
    for worker in ("worker.0", "worker.1"):
        cats = {e["cat"] for e in by_process[worker]}
        assert {"op", "send", "wait"} <= cats, cats
        sends = [e for e in by_process[worker] if e["cat"] == "send"]
        assert all(e["args"]["bytes"] > 0 for e in sends)
        assert sum(e["name"] == "mul" for e in by_process[worker]) == 5
    for server in ("server.0", "server.1"):
        assert any(e["name"] == "sgd" for e in by_process[server])
    assert "merged into" in out
