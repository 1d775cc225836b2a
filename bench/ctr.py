"""The CTR-DNN of seed 000 (batch 100) on fleetgraph and on PaddlePaddle, side by side in one run.
Prints figures; asserts nothing.

    python bench/ctr.py [--paddle331 PYTHON] [--paddle262 PYTHON] [--samples 200000]
    python bench/ctr.py --only local --baseline DIR [--reps 3]

One process: samples/s training from MultiSlot files with train_from_dataset (reading and parsing
included) on 1 and 2 threads, and with exe.run on ready feeds; against PaddlePaddle 3.3.1 (legacy
static graph; its PIR ignores is_sparse) when PYTHON has it. Parameter servers: 2 pservers x 2
trainers in sync, async and GEO, started by each framework's launcher: samples/s of the job (all
trainers' samples over the job's wall time, the launcher included), the CPU time of all the job's
processes (the launcher's included) and the peak RSS of each role,
the table having 10,000,001 rows of which the data touches about 1,000,000; against PaddlePaddle
2.6.2 (3.3.1's wheel has no parameter-server runtime) when PYTHON has it. Install either only in a
throwaway virtual environment (2.6.2 needs protobuf<5 and numpy<2), never as a dependency.

The data: --samples lines of MultiSlot text in 4 files (13 dense values, 26 slots of one id each
drawn from 1,000,000 distinct ids among 10,000,001, a label), read by pipe_command "cat". Runs of
the two frameworks alternate configuration by configuration, so the machine's load falls on both.
Every process of both frameworks runs with the math-library threads fleetgraph gives its own:
OMP_NUM_THREADS, OPENBLAS_NUM_THREADS and MKL_NUM_THREADS set, unless they are set already, to the
executor's default (1) for a lone process and to each process's share of the cores (the cores over
the job's 4 processes, at least 1: what fleetgraph's launcher sets and Paddle's does not) for a
parameter-server job. Each job reports the values it ran with.

With --baseline DIR, another fleetgraph checkout (`git worktree add DIR COMMIT`), the one-process
half runs this checkout's jobs beside DIR's instead of Paddle's (the same job script, only the
fleetgraph imported differs), --reps times each, taking turns job by job: samples/s over the
training's wall time and the job's CPU microseconds per sample (all its threads, steady while other
work shares the cores), medians with the lowest and highest, and this checkout's change (+ faster).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from side_by_side import change, checkout_env, median_spread  # noqa: E402

from fleetgraph.executor.native import BLAS_THREADS, THREAD_POOL_VARS  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
JOB = os.path.join(HERE, "ctr_job.py")
DIM, DISTINCT_IDS = 10_000_001, 1_000_000
PS_PROCESSES = 4  # 2 pservers and 2 trainers on this host
JOB_TIMEOUT_S = 900


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--paddle331", help="a Python with paddlepaddle==3.3.1 (one process)")
    p.add_argument("--paddle262", help="a Python with paddlepaddle==2.6.2 (parameter servers)")
    p.add_argument("--samples", type=int, default=200_000)
    p.add_argument("--ps-threads", type=int, default=10, help="threads per trainer (seed 000 uses 10)")
    p.add_argument("--only", choices=["local", "ps"], help="run one half")
    p.add_argument("--baseline", metavar="DIR", help="with --only local: another fleetgraph checkout beside this one")
    p.add_argument("--reps", type=int, default=3, help="with --baseline: jobs of each configuration and checkout")
    args = p.parse_args()
    if args.baseline and args.only != "local":
        p.error("--baseline times the one-process half: add --only local")
    return args


def write_data(directory: str, samples: int, files: int = 4) -> None:
    rng = np.random.default_rng(0)
    pool = rng.choice(DIM, size=DISTINCT_IDS, replace=False)
    per_file = samples // files
    for f in range(files):
        dense = rng.random((per_file, 13))
        ids = pool[rng.integers(0, DISTINCT_IDS, size=(per_file, 26))]
        label = rng.integers(0, 2, size=per_file)
        with open(os.path.join(directory, f"part-{f}"), "w") as out:
            for i in range(per_file):
                slots = " ".join(f"1 {v}" for v in ids[i])
                out.write(f"13 {' '.join(f'{v:.4f}' for v in dense[i])} {slots} 1 {label[i]}\n")


# -- one process ----------------------------------------------------------------------------------


def run_local(python: str, framework: str, how: str, data: str, threads: int, checkout: str = REPO) -> dict | str:
    cmd = [python, JOB, "--framework", framework, "--how", how, "--data", data, "--threads", str(threads)]
    scratch = tempfile.mkdtemp(prefix="ctr-run-")  # Paddle leaves files in its working directory
    try:
        env = _env(1, checkout)
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=JOB_TIMEOUT_S, env=env, cwd=scratch)
    except subprocess.TimeoutExpired:
        return f"timed out after {JOB_TIMEOUT_S} s"
    result = _result(out.stdout)
    if result is None:
        return _failure(out)
    return _checked_threads([result], 1) or result


def _env(processes: int, checkout: str = REPO) -> dict:
    """The environment of a job of `processes` processes on this host, the same for both frameworks;
    `checkout` is the fleetgraph it imports."""
    return dict(checkout_env(checkout), GLOG_v="0", **thread_vars(processes))


def thread_vars(processes: int) -> dict[str, str]:
    """Each process's math-library threads, unless the caller set them: the executor's default for
    a lone process, its share of the cores for one of several (as fleetgraph's launcher sets)."""
    share = str(BLAS_THREADS if processes == 1 else max(1, (os.cpu_count() or 1) // processes))
    return {name: os.environ.get(name, share) for name in THREAD_POOL_VARS}


def _checked_threads(results: list[dict], processes: int) -> str | None:
    """Why the jobs did not run with the thread variables set for them, or None."""
    want = thread_vars(processes)
    for result in results:
        seen = {name: result.get("thread_vars", {}).get(name) for name in want}
        if seen != want:
            return f"a {result.get('role', 'process')} ran with {seen}; expected {want}"
    return None


def _result(stdout: str) -> dict | None:
    lines = [ln for ln in stdout.splitlines() if ln.startswith("CTR_JOB ")]
    return json.loads(lines[-1][len("CTR_JOB ") :]) if lines else None


def _failure(proc) -> str:
    tail = (proc.stderr or proc.stdout or "").strip().splitlines()[-1:] or ["no output"]
    return f"failed (exit {proc.returncode}): {tail[0][:120]}"


# -- parameter servers ------------------------------------------------------------------------------


def run_ps(python: str, framework: str, strategy: str, data: str, threads: int) -> dict | str:
    log_dir = tempfile.mkdtemp(prefix=f"ctr-{framework}-{strategy}-")
    launcher = "fleetgraph.distributed.launch_ps" if framework == "fleetgraph" else "paddle.distributed.launch"
    cmd = [python, "-m", launcher, "--server_num", "2", "--worker_num", "2", "--log_dir", log_dir, JOB]
    cmd += ["--framework", framework, "--how", "ps", "--data", data, "--strategy", strategy, "--threads", str(threads)]
    watcher = PeakRss()
    watcher.start()
    started, cpu_before = time.perf_counter(), _children_cpu_s()
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=JOB_TIMEOUT_S, env=_env(PS_PROCESSES), cwd=log_dir
        )
    except subprocess.TimeoutExpired:
        watcher.stop()
        _kill_jobs()
        return f"timed out after {JOB_TIMEOUT_S} s"
    wall, cpu = time.perf_counter() - started, _children_cpu_s() - cpu_before
    watcher.stop()
    logs = [open(os.path.join(log_dir, f), errors="replace").read() for f in sorted(os.listdir(log_dir)) if "log." in f]
    roles = [r for r in map(_result, logs) if r]
    workers = [w for w in roles if w.get("role") == "worker"]
    if proc.returncode != 0 or len(workers) != 2:
        # the first process to die by a signal other than the launcher's SIGTERM to the rest
        crashed = sorted({s for log in logs for s in re.findall(r"\*\*\* (SIG[A-Z]+)", log)}, key="SIGTERM".__eq__)
        why = f"a process crashed ({crashed[0]})" if crashed else _failure(proc)
        return f"{why} (logs: {log_dir})"
    unpinned = _checked_threads(roles, PS_PROCESSES)
    if unpinned:
        return f"{unpinned} (logs: {log_dir})"
    return {"samples": sum(w["samples"] for w in workers), "seconds": wall, "cpu_s": cpu, **watcher.peaks()}


def _children_cpu_s() -> float:
    """CPU seconds of every finished child and their waited-for descendants: a job's launcher and
    every process it started."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class PeakRss(threading.Thread):
    """Polls the peak RSS (VmHWM) of every process running ctr_job.py, by role."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.seen: dict[int, tuple[str, int]] = {}
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.2):
            for pid, role, kb in _jobs():
                self.seen[pid] = (role, max(kb, self.seen.get(pid, ("", 0))[1]))

    def stop(self) -> None:
        self.done.set()
        self.join()

    def peaks(self) -> dict:
        by_role: dict[str, int] = {}
        for role, kb in self.seen.values():
            by_role[role] = max(by_role.get(role, 0), kb)
        return {f"{role}_peak_rss_mb": kb / 1024 for role, kb in by_role.items()}


def _jobs():
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                if JOB.encode() not in f.read():
                    continue
            with open(f"/proc/{name}/environ", "rb") as f:
                env = dict(kv.split(b"=", 1) for kv in f.read().split(b"\0") if b"=" in kv)
            with open(f"/proc/{name}/status") as f:
                hwm = next(int(ln.split()[1]) for ln in f if ln.startswith("VmHWM"))
        except (OSError, StopIteration, ValueError):
            continue
        role = (
            env.get(b"TRAINING_ROLE", b"?").decode().lower().replace("trainer", "worker").replace("pserver", "server")
        )
        yield int(name), role, hwm


def _kill_jobs() -> None:
    for pid, _, _ in list(_jobs()):
        try:
            os.kill(pid, 9)
        except OSError:
            pass


# -- printing ----------------------------------------------------------------------------------------


def rate(result) -> float | None:
    return result["samples"] / result["seconds"] if isinstance(result, dict) else None


def cell(result) -> str:
    r = rate(result)
    return f"{r:>12,.0f}" if r is not None else f"{'-':>12}"


def ratio(ours, theirs) -> str:
    a, b = rate(ours), rate(theirs)
    return f"{a / b:>6.2f}x" if a and b else f"{'':>7}"


LOCAL_CONFIGS = (
    ("train_from_dataset, 1 thread", "dataset", 1),
    ("train_from_dataset, 2 threads", "dataset", 2),
    ("exe.run, ready feeds", "feed", 1),
)


def local_beside(baseline: str, data: str, reps: int) -> None:
    """The one-process jobs of this checkout and of `baseline`, taking turns job by job."""
    runs = {(who, label): [] for who in ("baseline", "fleetgraph") for label, _, _ in LOCAL_CONFIGS}
    notes = []
    for _ in range(reps):
        for label, how, threads in LOCAL_CONFIGS:
            for who, checkout in (("baseline", baseline), ("fleetgraph", REPO)):
                result = run_local(sys.executable, "fleetgraph", how, data, threads, checkout)
                if isinstance(result, dict):
                    runs[who, label].append(result)
                else:
                    notes.append(f"{label}, {who}: {result}")
    figures = {
        "samples/s (wall)": lambda r: r["samples"] / r["seconds"],
        "CPU us per sample": lambda r: r["cpu_s"] / r["samples"] * 1e6,
    }
    print(f"one process, median of {reps} (lowest-highest) {'baseline':>26} {'fleetgraph':>26}  vs baseline")
    for figure, of in figures.items():
        print(figure)
        for label, _, _ in LOCAL_CONFIGS:
            theirs, ours = [of(r) for r in runs["baseline", label]], [of(r) for r in runs["fleetgraph", label]]
            if not (theirs and ours):
                continue
            speed = change(ours, theirs, higher_is_better=figure.startswith("samples"))
            print(f"  {label:40} {median_spread(theirs, 0):>26} {median_spread(ours, 0):>26}  {speed:>11}")
    print("vs baseline: + faster, - slower than the baseline checkout")
    for note in notes:
        print(f"  note: {note}")


def _peaks(result: dict) -> str:
    rss = f"{result.get('server_peak_rss_mb', 0):.0f}, {result.get('worker_peak_rss_mb', 0):.0f}"
    return f"{rss}; CPU {result['cpu_s']:.1f} s"


def main() -> None:
    args = parse_args()
    here = sys.executable
    with tempfile.TemporaryDirectory(prefix="ctr-bench-") as data:
        write_data(data, args.samples)
        print(f"data: {args.samples:,} samples in 4 MultiSlot files, ids from {DISTINCT_IDS:,} of {DIM:,}")
        shares = ", ".join(f"{n} process(es): {thread_vars(n)['OMP_NUM_THREADS']}" for n in (1, PS_PROCESSES))
        print(f"math-library threads per process, both frameworks (OMP/OPENBLAS/MKL_NUM_THREADS): {shares}\n")
        if args.baseline:
            local_beside(os.path.abspath(args.baseline), data, args.reps)
            return
        notes = []
        if args.only != "ps":
            head = f"{'one process, samples/s':40} {'fleetgraph':>12} {'Paddle 3.3.1':>12} {'ratio':>7}"
            print(f"{head}   peak RSS MB (ours)")
            for label, how, threads in LOCAL_CONFIGS:
                ours = run_local(here, "fleetgraph", how, data, threads)
                theirs = run_local(args.paddle331, "paddle", how, data, threads) if args.paddle331 else "not run"
                rss = f"{ours['peak_rss_mb']:.0f}" if isinstance(ours, dict) else ""
                print(f"{label:40} {cell(ours)} {cell(theirs)} {ratio(ours, theirs)}   {rss}", flush=True)
                notes += [
                    f"{label}, {who}: {r}"
                    for who, r in (("fleetgraph", ours), ("Paddle", theirs))
                    if isinstance(r, str)
                ]
        if args.only != "local":
            head = f"{'2 pservers x 2 trainers':40} {'fleetgraph':>12} {'Paddle 2.6.2':>12} {'ratio':>7}"
            print(f"\n{head}   peak RSS MB (ours: server, worker); CPU of the whole job")
            for strategy in ("sync", "async", "geo"):
                ours = run_ps(here, "fleetgraph", strategy, data, args.ps_threads)
                theirs = (
                    run_ps(args.paddle262, "paddle", strategy, data, args.ps_threads) if args.paddle262 else "not run"
                )
                rss = ""
                if isinstance(ours, dict):
                    rss = _peaks(ours)
                    if isinstance(theirs, dict):
                        rss += f"   (Paddle: {_peaks(theirs)})"
                print(
                    f"{strategy + ', job samples/s':40} {cell(ours)} {cell(theirs)} {ratio(ours, theirs)}   {rss}",
                    flush=True,
                )
                notes += [
                    f"{strategy}, {who}: {r}"
                    for who, r in (("fleetgraph", ours), ("Paddle", theirs))
                    if isinstance(r, str)
                ]
        for note in notes:
            print(f"  note: {note}")


if __name__ == "__main__":
    main()
